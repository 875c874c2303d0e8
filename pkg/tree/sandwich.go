package tree

import (
	"errors"
	"fmt"
	"slices"
)

// Only selects the stacks of a diff by the side they appear on.
type Only uint8

const (
	// OnlyAll keeps every stack (the zero value).
	OnlyAll Only = iota
	// OnlyNew keeps the stacks new in Head: a value in Head, none in Base.
	OnlyNew
	// OnlyRemoved keeps the stacks gone from Head: a value in Base, none
	// in Head.
	OnlyRemoved
)

// only narrows the view to the stacks o selects. Stacks are judged as
// the view has them: two stored stacks that filters or collapsing made
// equal are one stack, new only if neither has a base value.
func (v *view) only(o Only) {
	if o == OnlyAll {
		return
	}
	v.narrowed = true
	var head, base []int64 // by group: the view's distinct stacks
	group := make([]int32, len(v.active))
	ids := make(map[stackKey]int32, len(v.active))
	for i, id := range v.active {
		k := v.b.key(v.stack(id))
		g, ok := ids[k]
		if !ok {
			g = int32(len(head)) // #nosec G115 -- at most one group a stack: stack ids are uint32
			ids[k] = g
			head, base = append(head, 0), append(base, 0)
		}
		group[i] = g
		if v.b.runs[Head] > 0 {
			head[g] += v.b.value[Head][id]
		}
		if v.b.runs[Base] > 0 {
			base[g] += v.b.value[Base][id]
		}
	}
	kept := v.active[:0:0]
	for i, id := range v.active {
		g := group[i]
		if (o == OnlyNew && head[g] != 0 && base[g] == 0) || (o == OnlyRemoved && base[g] != 0 && head[g] == 0) {
			kept = append(kept, id)
		}
	}
	if len(v.active) > 0 && len(kept) == 0 {
		v.notice = "no stack is new in head"
		if o == OnlyRemoved {
			v.notice = "no stack is gone from head"
		}
	}
	v.active = kept
}

// Sandwich names a function whose callers or callees Build returns.
type Sandwich struct {
	// Function is a function's title (Frames.Title: "stringify
	// (qs/lib/stringify.js)" is that file's function), or a name that
	// titles no frame, whose frames in every module are the function.
	Function string
	// Callers selects the callers tree: every stack through the function
	// cut below it and read upwards, so that the function's node holds
	// its callers as children, their callers as grandchildren and so on.
	// Otherwise the callees tree: every stack through the function cut
	// above it, merging the function's subtrees from all its call sites.
	// Both cut at the stack's first (root-most) frame of the function, so
	// that under recursion each stack counts once and the function's node
	// equals its total in Functions. As with Focus, the tree's root keeps
	// the totals of every stack (its self holds the stacks without the
	// function), so deltas and ranks are those of the whole tree.
	Callers bool
}

// ErrNoFunction means a Sandwich function is in no stack of the view.
var ErrNoFunction = errors.New("sandwich: no such function")

// sandwich replaces each active stack through s.Function by its part
// below the function (callees) or its part above it, reversed (callers),
// and drops the others. A function no frame is named is an error; so is
// one no stack goes through, unless the filters or Only left none at all
// (the view's notice says why).
func (v *view) sandwich(s Sandwich) error {
	if s.Function == "" {
		return nil
	}
	v.narrowed = true
	is := v.b.frames.called(s.Function)
	if !slices.Contains(is, true) {
		return fmt.Errorf("%w: no frame is named %q", ErrNoFunction, s.Function)
	}
	var frames []uint32
	start := make([]int, len(v.start))
	kept := v.active[:0:0]
	next := 0
	for id := range start[:len(start)-1] {
		start[id] = len(frames)
		sid := uint32(id) // #nosec G115 -- stack ids are uint32 by design: 2^32 distinct stacks do not fit in memory
		if next == len(v.active) || v.active[next] != sid {
			continue
		}
		next++
		stack := v.stack(sid)
		at := -1
		for d, f := range stack {
			if matchesAt(is, f) {
				at = d
				break
			}
		}
		if at < 0 {
			continue
		}
		kept = append(kept, sid)
		if !s.Callers {
			frames = append(frames, stack[at:]...)
			continue
		}
		for d := at; d >= 0; d-- {
			frames = append(frames, stack[d])
		}
	}
	start[len(start)-1] = len(frames)
	if len(kept) == 0 && len(v.active) > 0 {
		return fmt.Errorf("%w: no stack of this answer goes through %q", ErrNoFunction, s.Function)
	}
	v.frames, v.start, v.active = frames, start, kept
	return nil
}
