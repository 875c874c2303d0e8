package tree

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Function is one row of a function table (pprof -top). Values are per run.
type Function struct {
	// Name is the function (frame) name; frames of the same name in
	// different modules share a row.
	Name string
	// HeadSelf is the value of the stacks whose leaf is the function.
	// HeadTotal is the value of the stacks that contain it, each stack
	// counted once however often the function recurses in it.
	HeadSelf, HeadTotal float64
	// BaseSelf and BaseTotal are the same for the base; 0 unless a diff.
	BaseSelf, BaseTotal float64
	// Delta is (HeadTotal - BaseTotal) / base root total; 0 unless a diff
	// with a non-zero base.
	Delta float64
}

// Functions returns one row per function name over the sides that have
// runs, with pprof -top semantics (see Function). o.CollapseSystem applies
// (collapsed frames disappear from the stacks); o.Inverted and o.MaxNodes do
// not matter. Rows are sorted by self, largest first, for a single side, and
// by the absolute change of self for a diff; ties by total, then name.
func (b *Builder) Functions(o Options) []Function {
	v := b.newView(o)
	rowOf := make([]int32, b.frames.Len()) // frame id -> row + 1
	byName := make(map[string]int32)
	var rows []Function
	var stamp []int // the last stack counted in a row's totals, + 1
	var baseRoot float64
	for n, id := range v.active {
		head, base := float64(b.value[Head][id]), float64(b.value[Base][id])
		if b.runs[Head] == 0 {
			head = 0
		}
		if b.runs[Base] == 0 {
			base = 0
		}
		baseRoot += base
		stack := v.stack(id)
		for d, f := range stack {
			if int(f) >= len(rowOf) {
				continue // not a frame of b.frames: it has no name
			}
			if rowOf[f] == 0 {
				name := b.frames.Name(f)
				r, ok := byName[name]
				if !ok {
					r = int32(len(rows)) // #nosec G115 -- one row per distinct function name: far below 2^31
					byName[name] = r
					rows = append(rows, Function{Name: name})
					stamp = append(stamp, 0)
				}
				rowOf[f] = r + 1
			}
			r := rowOf[f] - 1
			row := &rows[r]
			if d == len(stack)-1 {
				row.HeadSelf += head
				row.BaseSelf += base
			}
			if stamp[r] != n+1 {
				stamp[r] = n + 1
				row.HeadTotal += head
				row.BaseTotal += base
			}
		}
	}

	diff := b.runs[Base] > 0
	headRuns, baseRuns := float64(max(b.runs[Head], 1)), float64(max(b.runs[Base], 1))
	baseRoot /= baseRuns
	for i := range rows {
		r := &rows[i]
		r.HeadSelf /= headRuns
		r.HeadTotal /= headRuns
		r.BaseSelf /= baseRuns
		r.BaseTotal /= baseRuns
		if diff && baseRoot != 0 {
			r.Delta = (r.HeadTotal - r.BaseTotal) / baseRoot
		}
	}
	slices.SortFunc(rows, func(x, y Function) int {
		xs, ys := x.HeadSelf, y.HeadSelf
		xt, yt := x.HeadTotal, y.HeadTotal
		if diff {
			xs, ys = math.Abs(x.HeadSelf-x.BaseSelf), math.Abs(y.HeadSelf-y.BaseSelf)
			xt, yt = math.Abs(x.HeadTotal-x.BaseTotal), math.Abs(y.HeadTotal-y.BaseTotal)
		}
		return cmp.Or(cmp.Compare(ys, xs), cmp.Compare(yt, xt), strings.Compare(x.Name, y.Name))
	})
	return rows
}
