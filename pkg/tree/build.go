package tree

import (
	"cmp"
	"slices"
	"strings"
)

// Build merges the stacks of the sides that have runs into a tree: an
// averaged tree of Head, or a diff (union of Head and Base matched by path)
// when Base has runs too. Values are per run. Children are ordered by first
// seen (ties by name, module, id), or alphabetically when o.Inverted. With
// o.MaxNodes the smallest nodes are merged into "other" children (see
// Options). Build does not modify the Builder.
func (b *Builder) Build(o Options) *Tree {
	v := b.newView(o)
	t := &Tree{Frames: b.frames, Diff: b.runs[Base] > 0}
	t.Nodes = v.trie(o.Inverted)
	for i := range t.Nodes {
		t.Nodes[i].scale(b.runs)
	}
	if o.Inverted {
		t.orderSiblings(b.frames.compareAlphabetical)
	} else {
		t.orderSiblings(b.frames.compareChronological)
	}
	if o.MaxNodes > 0 && len(t.Nodes) > o.MaxNodes {
		t.prune(max(o.MaxNodes, 2))
	}
	return t
}

// trie lays the view's stacks out as a pre-order node array with raw sums
// (not yet per run) and children in frame id order. Sorting the stacks
// makes this a single sequential pass: a stack shares with the previous one
// exactly the path both have in common, so no lookup of children is needed.
func (v *view) trie(inverted bool) []Node {
	order := sortInHalves(v.active, func(x, y uint32) int {
		return compareStacks(v.stack(x), v.stack(y), inverted)
	})
	n := 1
	var prev []uint32
	for _, id := range order {
		cur := v.stack(id)
		n += len(cur) - commonPrefix(prev, cur, inverted)
		prev = cur
	}

	nodes := make([]Node, 1, n)
	nodes[0] = Node{Frame: RootFrame, FirstSeen: notSeen}
	path := []uint32{0} // path[d] is the open node at depth d
	closeTop := func() {
		i := path[len(path)-1]
		path = path[:len(path)-1]
		nd := &nodes[i]
		nd.Size = uint32(len(nodes)) - i
		nd.HeadTotal += nd.HeadSelf
		nd.BaseTotal += nd.BaseSelf
		if len(path) > 0 {
			p := &nodes[path[len(path)-1]]
			p.HeadTotal += nd.HeadTotal
			p.BaseTotal += nd.BaseTotal
			p.FirstSeen = min(p.FirstSeen, nd.FirstSeen)
		}
	}
	prev = nil
	for _, id := range order {
		cur := v.stack(id)
		common := commonPrefix(prev, cur, inverted)
		for len(path) > common+1 {
			closeTop()
		}
		for d := common; d < len(cur); d++ {
			path = append(path, uint32(len(nodes)))
			nodes = append(nodes, Node{Frame: frameAt(cur, d, inverted), Depth: uint32(d + 1), FirstSeen: notSeen})
		}
		leaf := &nodes[path[len(path)-1]]
		for _, s := range v.sides {
			if s == Head {
				leaf.HeadSelf += float64(v.b.value[s][id])
			} else {
				leaf.BaseSelf += float64(v.b.value[s][id])
			}
		}
		leaf.FirstSeen = min(leaf.FirstSeen, v.firstSeen(id))
		prev = cur
	}
	for len(path) > 0 {
		closeTop()
	}
	return nodes
}

// scale turns sums over runs into per-run values.
func (n *Node) scale(runs [2]int) {
	if r := runs[Head]; r > 0 {
		n.HeadTotal /= float64(r)
		n.HeadSelf /= float64(r)
	}
	if r := runs[Base]; r > 0 {
		n.BaseTotal /= float64(r)
		n.BaseSelf /= float64(r)
	}
}

func (f *Frames) compareAlphabetical(a, b *Node) int {
	return cmp.Or(
		strings.Compare(f.Name(a.Frame), f.Name(b.Frame)),
		strings.Compare(f.Module(a.Frame), f.Module(b.Frame)),
		cmp.Compare(a.Frame, b.Frame))
}

func (f *Frames) compareChronological(a, b *Node) int {
	if c := cmp.Compare(a.FirstSeen, b.FirstSeen); c != 0 {
		return c
	}
	return f.compareAlphabetical(a, b)
}

// orderSiblings reorders every node's children by compare, moving whole
// subtrees: it computes each node's new pre-order position, then applies
// that permutation in place.
func (t *Tree) orderSiblings(compare func(a, b *Node) int) {
	nodes := t.Nodes
	pos := make([]uint32, len(nodes)) // new position of each node
	var kids []uint32
	for i := range nodes {
		end := uint32(i) + nodes[i].Size
		kids = kids[:0]
		for c := uint32(i) + 1; c < end; c += nodes[c].Size {
			kids = append(kids, c)
		}
		if len(kids) > 1 {
			slices.SortFunc(kids, func(x, y uint32) int { return compare(&nodes[x], &nodes[y]) })
		}
		next := pos[i] + 1
		for _, c := range kids {
			pos[c] = next
			next += nodes[c].Size
		}
	}
	for i := range nodes {
		for pos[i] != uint32(i) {
			j := pos[i]
			nodes[i], nodes[j] = nodes[j], nodes[i]
			pos[i], pos[j] = pos[j], pos[i]
		}
	}
}

// sortInHalves returns a sorted copy of s, sorting its halves on two
// goroutines and merging them when s is large: the stack sort is the
// largest single cost of a Build, and the database is idle meanwhile.
func sortInHalves(s []uint32, compare func(x, y uint32) int) []uint32 {
	out := slices.Clone(s)
	if len(s) < 1<<12 {
		slices.SortFunc(out, compare)
		return out
	}
	mid := len(s) / 2
	left, right := slices.Clone(s[:mid]), s[mid:]
	done := make(chan struct{})
	go func() {
		slices.SortFunc(left, compare)
		close(done)
	}()
	right = slices.Clone(right)
	slices.SortFunc(right, compare)
	<-done
	out = out[:0]
	for len(left) > 0 && len(right) > 0 {
		if compare(right[0], left[0]) < 0 {
			out, right = append(out, right[0]), right[1:]
		} else {
			out, left = append(out, left[0]), left[1:]
		}
	}
	return append(append(out, left...), right...)
}
