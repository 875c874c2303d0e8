package tree

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Function is one row of a function table (pprof -top). Values are per run.
type Function struct {
	// Name is the function's title (Frames.Title): its name, with its
	// module where two functions of the query share the name. A row is one
	// function identity (profile.FrameIdentity), never a name.
	Name string
	// HeadSelf is the value of the stacks whose leaf is the function.
	// HeadTotal is the value of the stacks that contain it, each stack
	// counted once however often the function recurses in it.
	HeadSelf, HeadTotal float64
	// BaseSelf and BaseTotal are the same for the base; 0 unless a diff.
	BaseSelf, BaseTotal float64
	// Delta is the change of HeadTotal against BaseTotal as Tree.Delta
	// computes it (Options.Normalize); 0 unless a diff.
	Delta float64
	// PValue, QValue, Significant, DeltaLow, DeltaHigh, HeadRuns and
	// BaseRuns are as in NodeStats, for the function's totals, with
	// Benjamini-Hochberg over every row; NaN (nil runs) without
	// statistics (Builder.StatsNotice).
	PValue, QValue      float64
	Significant         bool
	DeltaLow, DeltaHigh float64
	HeadRuns, BaseRuns  []float64
}

// Functions returns one row per function (frame identity) over the sides that have
// runs, with pprof -top semantics (see Function). o.Filter, o.Only and
// o.CollapseSystem apply (collapsed frames disappear from the stacks;
// under Only, deltas are shares of every stack's totals, as in a tree);
// o.Inverted, o.MaxNodes, o.Focus and o.Sandwich do not matter. Rows are sorted by self, largest first, for a
// single side; for a diff, significant rows first, then by |Delta| (the
// absolute change of total, or of its share when relative), then by the
// absolute change of total and of self; ties by name.
func (b *Builder) Functions(o Options) []Function {
	o.Focus, o.Sandwich = nil, Sandwich{}
	v, _ := b.newView(o) // without Focus and Sandwich there is no error
	test := b.newTester(o)
	// With statistics, each row's and the root's per-run totals, and the
	// stack's at hand (added to each of its rows from the cache).
	var runs, rootRuns, stackRuns []float64
	if test != nil {
		rootRuns, stackRuns = make([]float64, test.width()), make([]float64, test.width())
	}
	rowOf := make([]int32, b.frames.Len()) // frame id -> row + 1
	var rows []Function
	var stamp []int // the last stack counted in a row's totals, + 1
	for n, id := range v.active {
		head, base := float64(b.value[Head][id]), float64(b.value[Base][id])
		if b.runs[Head] == 0 {
			head = 0
		}
		if b.runs[Base] == 0 {
			base = 0
		}
		if test != nil {
			clear(stackRuns)
			b.addRunsTo(stackRuns, v.active[n:n+1])
			addRuns(rootRuns, stackRuns)
		}
		stack := v.stack(id)
		for d, f := range stack {
			if int(f) >= len(rowOf) {
				continue // not a frame of b.frames: it has no name
			}
			if rowOf[f] == 0 {
				rows = append(rows, Function{Name: b.frames.Title(f)})
				stamp = append(stamp, 0)
				if test != nil {
					runs = append(runs, make([]float64, test.width())...)
				}
				rowOf[f] = int32(len(rows)) // #nosec G115 -- one row per distinct function: far below 2^31
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
				if test != nil {
					addRuns(runs[int(r)*len(stackRuns):], stackRuns)
				}
			}
		}
	}

	diff := b.runs[Base] > 0
	headRuns, baseRuns := float64(max(b.runs[Head], 1)), float64(max(b.runs[Base], 1))
	root := v.rootRaw
	root.scale(b.runs)
	for i := range rows {
		r := &rows[i]
		r.HeadSelf /= headRuns
		r.HeadTotal /= headRuns
		r.BaseSelf /= baseRuns
		r.BaseTotal /= baseRuns
		r.PValue, r.QValue, r.DeltaLow, r.DeltaHigh = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if diff {
			r.Delta = deltaOf(r.HeadTotal, r.BaseTotal, root, o.Normalize)
		}
	}
	if test != nil {
		if v.narrowed {
			clear(rootRuns)
			b.addRunsTo(rootRuns, v.all)
		}
		test.setRoot(rootRuns)
		st := make([]NodeStats, len(rows))
		w := test.width()
		for i := range rows {
			st[i] = test.test(runs[i*w:(i+1)*w:(i+1)*w], rows[i].Delta)
		}
		test.adjust(st, func(int) bool { return true })
		for i, s := range st {
			r := &rows[i]
			r.PValue, r.QValue, r.Significant = s.PValue, s.QValue, s.Significant
			r.DeltaLow, r.DeltaHigh, r.HeadRuns, r.BaseRuns = s.DeltaLow, s.DeltaHigh, s.HeadRuns, s.BaseRuns
		}
	}
	slices.SortFunc(rows, func(x, y Function) int {
		if !diff {
			return cmp.Or(cmp.Compare(y.HeadSelf, x.HeadSelf), cmp.Compare(y.HeadTotal, x.HeadTotal), strings.Compare(x.Name, y.Name))
		}
		return cmp.Or(compareBool(y.Significant, x.Significant),
			cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)),
			cmp.Compare(math.Abs(y.HeadTotal-y.BaseTotal), math.Abs(x.HeadTotal-x.BaseTotal)),
			cmp.Compare(math.Abs(y.HeadSelf-y.BaseSelf), math.Abs(x.HeadSelf-x.BaseSelf)),
			strings.Compare(x.Name, y.Name))
	})
	return rows
}

// EmptyNotice says why Functions(o) or Build(o) has no stack when
// o.Filter or o.Only left none of the stacks there were; "" otherwise.
func (b *Builder) EmptyNotice(o Options) string {
	o.Focus, o.Sandwich = nil, Sandwich{}
	v, _ := b.newView(o) // without Focus and Sandwich there is no error
	return v.notice
}

func compareBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}
