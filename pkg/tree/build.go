package tree

import (
	"cmp"
	"runtime"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/internal/fault"
	"github.com/flamediff/flamediff/pkg/stats"
)

// Build merges the stacks of the sides that have runs into a tree: an
// averaged tree of Head, or a diff (union of Head and Base matched by path)
// when Base has runs too. Values are per run. Children are ordered by first
// seen (ties by name, module, id), or alphabetically when o.Inverted. With
// o.MaxNodes the smallest nodes are merged into "other" children (see
// Options). A diff whose runs were added with AddRun, at least 2 a side,
// has statistics (Tree.Stats); otherwise Tree.StatsNotice says why not.
// The only errors are an o.Focus path and an o.Sandwich function that no
// stack has (ErrNoFunction). Build does not modify the Builder.
func (b *Builder) Build(o Options) (t *Tree, err error) {
	defer b.stop.recover(&t, b.frames)
	order := b.frames.compareChronological
	if o.Inverted {
		order = b.frames.compareAlphabetical
	}
	limit := 0
	if o.MaxNodes > 0 {
		limit = max(o.MaxNodes, 2)
	}
	v, err := b.newView(o)
	if err != nil {
		return nil, err
	}
	t = &Tree{Frames: b.frames, Diff: b.runs[Base] > 0, Normalize: o.Normalize, Alpha: cmp.Or(o.Alpha, stats.DefaultAlpha), Runs: b.runs}
	if t.Diff {
		t.StatsNotice = b.StatsNotice()
	}
	test := b.newTester(o)
	l := v.trie(o.Inverted, order, limit, test)
	t.Nodes = l.nodes
	t.Notice = v.notice
	if v.narrowed {
		// The root keeps the whole tree's totals: what is outside the
		// path (Focus, Only, Sandwich) is its self.
		root := &t.Nodes[0]
		root.HeadSelf += v.rootRaw.HeadTotal - root.HeadTotal
		root.BaseSelf += v.rootRaw.BaseTotal - root.BaseTotal
		root.HeadTotal, root.BaseTotal = v.rootRaw.HeadTotal, v.rootRaw.BaseTotal
	}
	for i := range t.Nodes {
		t.Nodes[i].scale(b.runs)
	}
	if test != nil {
		t.Stats, t.Exact = l.stats(t, test), test.exact
	}
	if limit > 0 && len(t.Nodes) > limit {
		t.prune(limit, test)
	}
	return t, nil
}

// trie lays the view's stacks out as a pre-order node array with raw sums
// (not yet per run), siblings in the given order. The stacks are sorted
// first (compareStacks): the stacks through any node are then a contiguous
// range, split among its children where the common prefix of neighbours
// equals the node's depth. So each node is written once, in its final
// place, with no lookup of children and no reordering afterwards; and as
// the size of every subtree is known beforehand, big subtrees are laid out
// on other cores at the same time. With a node limit (0: none) that the
// trie exceeds, only the nodes that pruning might keep are laid out
// (planCut).
//
// With a tester (statistics), the layout notes which node each stack's
// value lands in (owner) and what each "other" node it makes holds, and
// the cut is up to sigBoost times lower, so that prune can prefer
// significant nodes up to that much smaller than the ones it would keep
// otherwise.
func (v *view) trie(inverted bool, order func(a, b siblingKey) int, limit int, test *tester) *layout {
	l := &layout{v: v, inverted: inverted, order: order}
	if test != nil {
		l.test = test
		l.owner = make([]int32, len(v.b.stackKey))
		l.others = make(map[int32]otherInfo)
	}
	l.ids = sortInHalves(v.active, func(part []uint32) {
		(&stackSorter{v: v, inverted: inverted}).sort(part)
	}, func(x, y uint32) int {
		v.b.stop.check()
		return compareStacks(v.stack(x), v.stack(y), inverted)
	})
	l.lcp = make([]uint32, len(l.ids))
	l.first = make([]uint64, len(l.ids))
	l.before = make([]int, len(l.ids)+1)
	var prev []uint32
	rootFirst := uint64(notSeen)
	for i, id := range l.ids {
		cur := v.stack(id)
		common := commonPrefix(prev, cur, inverted)
		l.lcp[i] = uint32(common) // #nosec G115 -- a common prefix of two stacks, no longer than a stack
		l.before[i+1] = l.before[i] + len(cur) - common
		l.first[i] = v.firstSeen(id)
		rootFirst = min(rootFirst, l.first[i])
		prev = cur
	}
	size := 1 + l.before[len(l.ids)] // the root and every stack's new nodes
	if limit > 0 && size > limit {
		size = l.planCut(limit)
	}
	l.nodes = make([]Node, size)
	l.cores = make(chan struct{}, runtime.GOMAXPROCS(0)-1)
	w := &worker{}
	l.subtree(w, 0, len(l.ids), 0, siblingKey{RootFrame, rootFirst})
	l.nodes = l.nodes[:w.pos]
	return l
}

// siblingKey is what orders the children of a node.
type siblingKey struct {
	frame uint32
	first uint64 // smallest firstSeen of the stacks through the node
}

func (f *Frames) compareAlphabetical(a, b siblingKey) int {
	return cmp.Or(
		strings.Compare(f.Name(a.frame), f.Name(b.frame)),
		strings.Compare(f.Module(a.frame), f.Module(b.frame)),
		cmp.Compare(a.frame, b.frame))
}

func (f *Frames) compareChronological(a, b siblingKey) int {
	if c := cmp.Compare(a.first, b.first); c != 0 {
		return c
	}
	return f.compareAlphabetical(a, b)
}

// layout is the state of one trie: the sorted stacks (ids), the common
// prefix of each with the one before (lcp), their first-seen keys, and
// before[i], the nodes that stacks ids[:i] add to the trie.
type layout struct {
	v        *view
	inverted bool
	order    func(a, b siblingKey) int
	ids      []uint32
	lcp      []uint32
	first    []uint64
	before   []int
	nodes    []Node
	// cores holds a token per core lent to a subtree laid out aside.
	cores chan struct{}

	// With cutting (planCut), children less important than cut are left
	// out; sums[s][i] is side s's raw value of the stacks ids[:i], and
	// root the per-run root totals.
	cutting bool
	cut     float64
	sums    [2][]int64
	root    Node

	// With statistics: owner[i] is the node whose self holds stack
	// ids[i]'s value, and others the "other" nodes by index.
	test   *tester
	owner  []int32
	others map[int32]otherInfo
}

// worker lays out nodes from pos on, keeping a stack of the children of
// the nodes it is laying out.
type worker struct {
	pos      int
	children []child
	// out stacks the stack ranges left out under the nodes being laid out
	// (with statistics).
	out [][2]int
}

// child is a node not yet laid out: its key and its stacks ids[start:end].
type child struct {
	siblingKey
	start, end int
}

// asideNodes is the least number of nodes worth laying out on another core.
const asideNodes = 1 << 15

// size is the number of nodes of the subtree of the child at depth+1
// whose stacks are ids[start:end]: the first stack adds its frames below
// depth, each other one its frames past the prefix it shares with the
// stack before it.
func (l *layout) size(start, end, depth int) int {
	return len(l.v.stack(l.ids[start])) - depth + l.before[end] - l.before[start+1]
}

// subtree lays out the node of key at depth whose stacks are
// ids[start:end] (sharing their first depth frames), then its subtree, and
// returns its totals.
func (l *layout) subtree(w *worker, start, end, depth int, key siblingKey) (head, base float64) {
	l.v.b.stop.check()
	at := w.pos
	w.pos++
	nd := Node{Frame: key.frame, Depth: uint32(depth)} // #nosec G115 -- a depth, no deeper than a stack
	// Stacks that end here sort first (a prefix precedes its extensions).
	i := start
	for ; i < end && len(l.v.stack(l.ids[i])) == depth; i++ {
		l.v.addSelf(&nd, l.ids[i])
		if l.owner != nil {
			l.owner[l.ids[i]] = int32(at) // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
		}
	}
	other := leftOutNodes{mark: len(w.out)} // the children left out (cutting)
	switch {
	case end-i == 1: // one stack left: a chain, no branching
		if !l.leftOut(w, i, end, depth, &other) {
			head, base = l.chain(w, i, depth)
		}
	case end-i > 1:
		bottom := len(w.children)
		for j := i; j < end; {
			k, first := j+1, l.first[j]
			for ; k < end && int(l.lcp[k]) > depth; k++ {
				first = min(first, l.first[k])
			}
			if !l.leftOut(w, j, k, depth, &other) {
				frame := frameAt(l.v.stack(l.ids[j]), depth, l.inverted)
				w.children = append(w.children, child{siblingKey{frame, first}, j, k})
			}
			j = k
		}
		if kids := w.children[bottom:]; len(kids) > 1 {
			slices.SortFunc(kids, func(a, b child) int { return l.order(a.siblingKey, b.siblingKey) })
		}
		head, base = l.children(w, bottom, depth)
		w.children = w.children[:bottom]
	}
	if other.Size > 0 {
		other.Frame, other.Depth = OtherFrame, uint32(depth+1) // #nosec G115 -- a depth, no deeper than a stack
		other.HeadSelf, other.BaseSelf = other.HeadTotal, other.BaseTotal
		l.nodes[w.pos] = other.Node
		if l.owner != nil {
			for _, r := range w.out[other.mark:] {
				for k := r[0]; k < r[1]; k++ {
					l.owner[l.ids[k]] = int32(w.pos) // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
				}
			}
			w.out = w.out[:other.mark]
			l.others[int32(w.pos)] = other.otherInfo // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
		}
		w.pos++
		head, base = head+other.HeadTotal, base+other.BaseTotal
	}
	nd.HeadTotal = nd.HeadSelf + head
	nd.BaseTotal = nd.BaseSelf + base
	nd.Size = uint32(w.pos - at) // #nosec G115 -- a subtree's node count: a tree of 2^32 nodes does not fit in memory
	l.nodes[at] = nd
	return nd.HeadTotal, nd.BaseTotal
}

// children lays out the children of a node at depth, w.children[bottom:],
// from w.pos on, and returns the sum of their totals. When they are many
// nodes and a core is free, the first of them (about half the nodes) go
// to another worker.
func (l *layout) children(w *worker, bottom, depth int) (head, base float64) {
	top := len(w.children)
	split, nodes := l.split(w.children[bottom:top], depth)
	var aside chan [2]float64 // the totals of the children laid out aside
	var p *carried            // and their panic
	if split > 0 {
		kids := slices.Clone(w.children[bottom : bottom+split])
		aside = make(chan [2]float64, 1)
		go func(w *worker) { // p is read after its send on aside
			var sum [2]float64
			p = carry(func() {
				fault.Point("tree.layout")
				for _, ch := range kids {
					h, b := l.subtree(w, ch.start, ch.end, depth+1, ch.siblingKey)
					sum[0], sum[1] = sum[0]+h, sum[1]+b
				}
			})
			<-l.cores
			aside <- sum
		}(&worker{pos: w.pos})
		w.pos += nodes
	}
	// Deeper calls push onto w.children and pop back, but may move it:
	// read it by index.
	for c := bottom + split; c < top; c++ {
		ch := w.children[c]
		h, b := l.subtree(w, ch.start, ch.end, depth+1, ch.siblingKey)
		head, base = head+h, base+b
	}
	if aside != nil {
		sum := <-aside
		p.rethrow()
		head, base = head+sum[0], base+sum[1]
	}
	return head, base
}

// split returns how many of kids (children of a node at depth) to lay out
// aside, and their number of nodes: none unless they are big enough to be
// worth it and a core is free (taking its token). Nodes left out (cutting)
// make subtree sizes unknown beforehand, so that layout stays on one core.
// Kids are in sibling order, not in stack order: their stack ranges are
// summed one by one (the first kid's start and the last one's end need
// not bound them).
func (l *layout) split(kids []child, depth int) (split, nodes int) {
	if l.cutting || len(kids) < 2 {
		return 0, 0
	}
	total := 0
	for _, ch := range kids {
		total += l.size(ch.start, ch.end, depth)
	}
	if total < 2*asideNodes {
		return 0, 0
	}
	select {
	case l.cores <- struct{}{}:
	default:
		return 0, 0
	}
	for split < len(kids)-1 && 2*nodes < total {
		nodes += l.size(kids[split].start, kids[split].end, depth)
		split++
	}
	return split, nodes
}

// chain lays out the rest of stack ids[i] past depth: one node per frame,
// each with the leaf's value as its total, which it returns.
func (l *layout) chain(w *worker, i, depth int) (head, base float64) {
	id := l.ids[i]
	stack := l.v.stack(id)
	var leaf Node
	l.v.addSelf(&leaf, id)
	head, base = leaf.HeadSelf, leaf.BaseSelf
	for d := depth; d < len(stack); d++ {
		l.nodes[w.pos] = Node{Frame: frameAt(stack, d, l.inverted), Depth: uint32(d + 1), // #nosec G115 -- a depth and a node count, no larger than a stack
			Size: uint32(len(stack) - d), HeadTotal: head, BaseTotal: base} // #nosec G115 -- a depth and a node count, no larger than a stack
		w.pos++
	}
	l.nodes[w.pos-1].HeadSelf, l.nodes[w.pos-1].BaseSelf = head, base
	if l.owner != nil {
		l.owner[id] = int32(w.pos - 1) // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
	}
	return head, base
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

// sortInHalves returns a copy of s sorted by sort, sorting its halves on
// two goroutines and merging them by compare (the same order) when s is
// large: the stack sort is the largest single cost of a Build, and the
// database is idle meanwhile.
func sortInHalves(s []uint32, sort func([]uint32), compare func(x, y uint32) int) []uint32 {
	out := slices.Clone(s)
	if len(s) < 1<<12 {
		sort(out)
		return out
	}
	mid := len(s) / 2
	left, right := slices.Clone(s[:mid]), slices.Clone(s[mid:])
	OnTwoCores(true, "tree.sort", func() { sort(left) }, func() { sort(right) })
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
