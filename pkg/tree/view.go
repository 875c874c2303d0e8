package tree

import (
	"bytes"
	"cmp"
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
	// that can be returned. Functions ignores it.
	MaxNodes int
}

// view is the set of stacks a Build or Functions call works on: the stacks
// with data on a side that takes part, collapsed if asked.
type view struct {
	b *Builder
	// active lists the builder stack ids that take part, ascending.
	active []uint32
	// Stack id has the frames frames[start[id]:start[id+1]], root first.
	frames []uint32
	start  []int
	sides  []Side
}

func (b *Builder) newView(o Options) *view {
	v := &view{b: b}
	for _, s := range []Side{Head, Base} {
		if b.runs[s] > 0 {
			v.sides = append(v.sides, s)
		}
	}
	for id := range b.stackKey {
		for _, s := range v.sides {
			if b.first[s][id] != notSeen {
				v.active = append(v.active, uint32(id))
				break
			}
		}
	}
	if !o.CollapseSystem || o.IsSystem == nil {
		// Read the builder's stacks in place: no copy of the frames.
		v.frames, v.start = b.stackFrames, b.stackStart
		return v
	}
	isSys := make([]bool, b.frames.Len())
	for id := range isSys {
		isSys[id] = o.IsSystem(uint32(id))
	}
	v.start = make([]int, len(b.stackStart))
	next := 0 // the next active stack
	for id := range b.stackKey {
		v.start[id] = len(v.frames)
		if next == len(v.active) || v.active[next] != uint32(id) {
			continue
		}
		next++
		prevSys := false
		for _, f := range b.stack(uint32(id)) {
			sys := int(f) < len(isSys) && isSys[f]
			if !sys || !prevSys {
				v.frames = append(v.frames, f)
			}
			prevSys = sys
		}
	}
	v.start[len(b.stackKey)] = len(v.frames)
	return v
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
// which is all a trie layout needs: lexicographically by the bytes of the
// frame ids (a vectorised memcmp), or by frame id read leaf first when
// inverted.
func compareStacks(x, y []uint32, inverted bool) int {
	if !inverted {
		return bytes.Compare(frameBytes(x), frameBytes(y))
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
