package tree

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Options select the variant of a tree or function table.
type Options struct {
	// Inverted flips every stack (leaf becomes root) and orders every level
	// alphabetically instead of by first seen.
	Inverted bool
	// CollapseSystem replaces every run of consecutive system frames in a
	// stack by the run's first (root-most) frame, before any inversion.
	CollapseSystem bool
	// IsSystem classifies frame ids for CollapseSystem (see package
	// sysframes); nil means no frame is a system frame.
	IsSystem func(frame uint32) bool
	// MaxNodes bounds the number of nodes Build returns by merging the
	// smallest nodes into one "other" child per parent; 0 or less means no
	// bound, and the root with its "other" child (2 nodes) is the least
	// that can be returned. Functions ignores it. With statistics, nodes
	// with a significant change (and their ancestors) are kept ahead of
	// others up to sigBoost times their size.
	MaxNodes int
	// Normalize selects what a diff's delta and statistics compare.
	Normalize Normalization
	// Alpha is the false-discovery rate at which a node is Significant
	// (QValue < Alpha); 0 means stats.DefaultAlpha.
	Alpha float64
	// Focus is a path of labels from the root's child down (leaf first up
	// when Inverted): Build returns the root, that path and the subtree
	// under it, under the same MaxNodes, with the root keeping the whole
	// tree's totals (its self holds everything outside the path), so
	// deltas and ranks are those of the whole tree. Frames of the same
	// name all match. Functions ignores it.
	Focus []string
	// Filter, when not nil, selects and edits the stacks before anything
	// is computed from them (see Filter): the tree, its root, the function
	// table and the statistics are those of the stacks it leaves.
	Filter *Filter
	// Only narrows the tree to the stacks new in Head or gone from it
	// (OnlyNew, OnlyRemoved), judged after Filter and CollapseSystem. As
	// with Focus, the root keeps the totals of every stack.
	Only Only
	// Sandwich, when its Function is set, makes Build return one of the
	// function's two trees (see Sandwich); Functions ignores it.
	Sandwich Sandwich
}

// view is the set of stacks a Build or Functions call works on: the stacks
// with data on a side that takes part, filtered and collapsed if asked,
// then narrowed to the ones Options.Only, Sandwich and Focus select.
type view struct {
	b *Builder
	// active lists the builder stack ids that take part, ascending.
	active []uint32
	// Stack id has the frames frames[start[id]:start[id+1]], root first.
	frames []uint32
	start  []int
	sides  []Side
	// all lists the stacks before Only, Sandwich and Focus narrow them
	// (narrowed), and rootRaw holds their sums: the root's totals.
	all      []uint32
	rootRaw  Node
	narrowed bool
	// notice says why a view of stacks has none left (a filter or Only).
	notice string
}

// newView returns the view o asks for; a Focus path or a Sandwich
// function that no stack has is an error.
func (b *Builder) newView(o Options) (*view, error) {
	v := &view{b: b}
	for _, s := range []Side{Head, Base} {
		if b.runs[s] > 0 {
			v.sides = append(v.sides, s)
		}
	}
	for id := range b.stackKey {
		for _, s := range v.sides {
			if b.first[s][id] != notSeen {
				v.active = append(v.active, uint32(id)) // #nosec G115 -- stack ids are uint32 by design: 2^32 distinct stacks do not fit in memory
				break
			}
		}
	}
	// Read the builder's stacks in place unless a stage edits them.
	v.frames, v.start = b.stackFrames, b.stackStart
	v.filter(o)
	v.all = v.active
	for _, id := range v.active {
		v.addSelf(&v.rootRaw, id)
	}
	v.rootRaw.HeadTotal, v.rootRaw.BaseTotal = v.rootRaw.HeadSelf, v.rootRaw.BaseSelf
	v.only(o.Only)
	if err := v.sandwich(o.Sandwich); err != nil {
		return nil, err
	}
	return v, v.focus(o)
}

// filter applies o.Filter and o.CollapseSystem to the active stacks,
// copying the frames of the stacks it keeps when it edits them. A
// Sandwich function is never collapsed into the system frame above it.
func (v *view) filter(o Options) {
	var c *compiledFilter
	if o.Filter != nil {
		c = o.Filter.forFrames(v.b.frames)
	}
	var isSys []bool
	if o.CollapseSystem && o.IsSystem != nil {
		isSys = make([]bool, v.b.frames.Len())
		sandwich := v.b.frames.called(o.Sandwich.Function)
		for id := range isSys {
			isSys[id] = o.IsSystem(uint32(id)) && !sandwich[id] // #nosec G115 -- a frame id: frames are uint32 by design
		}
	}
	if c == nil && isSys == nil {
		return
	}
	edits := isSys != nil || (c != nil && c.edits())
	if edits {
		v.frames, v.start = nil, make([]int, len(v.b.stackStart))
	}
	had := len(v.active)
	kept := v.active[:0:0]
	var buf []uint32
	next := 0 // the next active stack
	for id := range v.b.stackKey {
		if edits {
			v.start[id] = len(v.frames)
		}
		sid := uint32(id) // #nosec G115 -- stack ids are uint32 by design: 2^32 distinct stacks do not fit in memory
		if next == len(v.active) || v.active[next] != sid {
			continue
		}
		next++
		stack := v.b.stack(sid)
		if c != nil && !c.keeps(stack) {
			continue
		}
		if c != nil && c.edits() {
			buf = c.appendEdited(buf[:0], stack)
			if len(buf) == 0 && len(stack) > 0 {
				continue // every frame hidden, or none to show from
			}
			stack = buf
		}
		kept = append(kept, sid)
		if !edits {
			continue
		}
		prevSys := false
		for _, f := range stack {
			sys := matchesAt(isSys, f)
			if !sys || !prevSys {
				v.frames = append(v.frames, f)
			}
			prevSys = sys
		}
	}
	if edits {
		v.start[len(v.b.stackKey)] = len(v.frames)
	}
	v.active = kept
	if c != nil && had > 0 && len(kept) == 0 {
		v.notice = c.emptyNotice()
	}
}

// focus keeps, with o.Focus, only the stacks on its path.
func (v *view) focus(o Options) error {
	if len(o.Focus) == 0 {
		return nil
	}
	v.narrowed = true
	// on[d][f]: frame f is named as the path's frame at depth d.
	on := make([][]bool, len(o.Focus))
	for d := range on {
		on[d] = make([]bool, v.b.frames.Len())
	}
	for f := range v.b.frames.Len() {
		for d, label := range o.Focus {
			on[d][f] = v.b.frames.Name(uint32(f)) == label // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
		}
	}
	kept := v.active[:0:0]
	for _, id := range v.active {
		stack := v.stack(id)
		if len(stack) < len(o.Focus) {
			continue
		}
		d := 0
		for ; d < len(o.Focus); d++ {
			if f := frameAt(stack, d, o.Inverted); int(f) >= len(on[d]) || !on[d][f] {
				break
			}
		}
		if d == len(o.Focus) {
			kept = append(kept, id)
		}
	}
	v.active = kept
	if len(v.active) == 0 {
		return fmt.Errorf("focus: no node at the path %s", strings.Join(o.Focus, " > "))
	}
	return nil
}

// addSelf adds stack id's sums on the taking-part sides to nd's self.
func (v *view) addSelf(nd *Node, id uint32) {
	for _, s := range v.sides {
		if s == Head {
			nd.HeadSelf += float64(v.b.value[s][id])
		} else {
			nd.BaseSelf += float64(v.b.value[s][id])
		}
	}
}

func (v *view) stack(id uint32) []uint32 {
	return v.frames[v.start[id]:v.start[id+1]]
}

// firstSeen is the smallest firstSeen of stack id on the sides that take
// part.
func (v *view) firstSeen(id uint32) uint64 {
	first := uint64(notSeen)
	for _, s := range v.sides {
		first = min(first, v.b.first[s][id])
	}
	return first
}

// compareStacks orders stacks so that stacks sharing a prefix (a suffix
// when inverted) are contiguous and a stack comes before its extensions,
// which is all a trie layout needs: lexicographically by frame id, read
// leaf first when inverted (the order stackSorter sorts in).
func compareStacks(x, y []uint32, inverted bool) int {
	if !inverted {
		return slices.Compare(x, y)
	}
	i, j := len(x)-1, len(y)-1
	for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if x[i] != y[j] {
			return cmp.Compare(x[i], y[j])
		}
	}
	return cmp.Compare(len(x), len(y))
}

// commonPrefix is the number of leading frames x and y share, read leaf
// first when inverted.
func commonPrefix(x, y []uint32, inverted bool) int {
	n := min(len(x), len(y))
	if !inverted {
		for i := range n {
			if x[i] != y[i] {
				return i
			}
		}
		return n
	}
	for i := range n {
		if x[len(x)-1-i] != y[len(y)-1-i] {
			return i
		}
	}
	return n
}

// frameAt is the frame at depth d (0 = first) of a stack.
func frameAt(x []uint32, d int, inverted bool) uint32 {
	if inverted {
		return x[len(x)-1-d]
	}
	return x[d]
}
