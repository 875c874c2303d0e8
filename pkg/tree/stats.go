package tree

import (
	"cmp"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/flamediff/flamediff/pkg/stats"
)

// Normalization says what a diff's delta and its statistics compare.
type Normalization uint8

const (
	// Absolute compares values: delta = (head - base) / base root total,
	// tested on the per-run totals.
	Absolute Normalization = iota
	// Relative compares each side's share of its own root total: delta =
	// head share - base share, tested on the per-run shares. A head that
	// does everything twice as often as base has no relative change.
	Relative
)

// String is "absolute" or "relative".
func (n Normalization) String() string {
	if n == Relative {
		return "relative"
	}
	return "absolute"
}

// ciLevel is the coverage of DeltaLow..DeltaHigh.
const ciLevel = 0.95

// NodeStats is a node's (or a function's) change across runs; see
// docs/STATISTICS.md. Fields the data cannot define are NaN.
type NodeStats struct {
	// PValue is Welch's two-sided t-test of the head runs' values against
	// the base runs' values (per-run totals, or shares when Relative).
	PValue float64
	// QValue is PValue adjusted by Benjamini-Hochberg over the tested
	// nodes of the answer (NaN for "other" nodes, which are not tested).
	QValue float64
	// DeltaLow and DeltaHigh bound the 95% confidence interval of delta.
	DeltaLow, DeltaHigh float64
	// Significant is QValue < alpha.
	Significant bool
	// HeadRuns and BaseRuns are the node's total in each run, in run
	// order; a run without the node counts 0.
	HeadRuns, BaseRuns []float64
	// OtherCount is the number of nodes an "other" node merges (0 for any
	// other node) and OtherMaxDelta the delta of largest magnitude among
	// them (signed). Nodes too small to be tested count with their
	// subtree, whose delta bounds theirs.
	OtherCount    int
	OtherMaxDelta float64
}

// StatsNotice says why a diff built now has no statistics, or is "" when it
// has them (or is no diff).
func (b *Builder) StatsNotice() string {
	h, bs := b.runs[Head], b.runs[Base]
	switch {
	case bs == 0:
		return ""
	case (h < 2 || bs < 2) && !b.counts():
		return fmt.Sprintf("per-node significance needs at least 2 runs on each side; have head %d, base %d", h, bs)
	case b.stride[Head] != h || b.stride[Base] != bs:
		return "per-node significance needs each run's values apart; these runs were added as sums"
	}
	return ""
}

// tester computes NodeStats for a build: it knows the runs of each side,
// their root totals per run and the normalisation.
type tester struct {
	norm  Normalization
	alpha float64
	runs  [2]int
	// exact says that the runs of each side do not vary (Builder.exact):
	// a difference is the change itself (welch).
	exact bool
	// rootRuns[s][r] is run r's root total on side s.
	rootRuns [2][]float64
	root     Node // per-run root totals (means)
	x, y     []float64
	quantile *stats.TQuantiles
}

// newTester returns nil when b has no statistics to give (StatsNotice).
// Its root runs are set once known (setRoot).
func (b *Builder) newTester(o Options) *tester {
	if b.runs[Base] == 0 || b.StatsNotice() != "" {
		return nil
	}
	return &tester{norm: o.Normalize, alpha: cmp.Or(o.Alpha, stats.DefaultAlpha), runs: b.runs, exact: b.exact(),
		x: make([]float64, b.runs[Head]), y: make([]float64, b.runs[Base]),
		quantile: stats.NewTQuantiles(ciLevel)}
}

// setRoot sets the root total of each run (head runs, then base runs).
func (t *tester) setRoot(runs []float64) {
	hr := t.runs[Head]
	t.rootRuns = [2][]float64{Head: runs[:hr:hr], Base: runs[hr:]}
	t.root.HeadTotal, t.root.BaseTotal = meanOf(runs[:hr]), meanOf(runs[hr:])
}

// clone is a tester for another goroutine (test reuses buffers).
func (t *tester) clone() *tester {
	c := *t
	c.x, c.y = make([]float64, len(t.x)), make([]float64, len(t.y))
	c.quantile = stats.NewTQuantiles(ciLevel)
	return &c
}

// width is the number of per-run values a node holds: head runs, then
// base runs.
func (t *tester) width() int { return t.runs[Head] + t.runs[Base] }

// test fills s's PValue and confidence interval from its per-run totals
// (runs: head runs then base runs) for a delta the tree reports.
func (t *tester) test(runs []float64, delta float64) NodeStats {
	s := NodeStats{HeadRuns: runs[:t.runs[Head]:t.runs[Head]], BaseRuns: runs[t.runs[Head]:], QValue: math.NaN()}
	scale := 1.0
	copy(t.x, s.HeadRuns)
	copy(t.y, s.BaseRuns)
	if t.norm == Relative {
		share(t.x, t.rootRuns[Head])
		share(t.y, t.rootRuns[Base])
	} else {
		scale = 1 / t.root.BaseTotal
	}
	w := t.welch(t.x, t.y)
	s.PValue = w.P
	half := w.Half(t.quantile) * scale
	s.DeltaLow, s.DeltaHigh = delta-half, delta+half
	if math.IsInf(scale, 0) || math.IsNaN(half) {
		s.DeltaLow, s.DeltaHigh = math.NaN(), math.NaN()
	}
	return s
}

// welch is Welch's t of x against y. With exact costs it is the
// difference itself: p 0 when the means differ beyond float rounding, 1
// when not, and an interval of width 0.
func (t *tester) welch(x, y []float64) stats.Welch {
	if !t.exact {
		return stats.WelchTest(x, y)
	}
	mx, my := stat.Mean(x, nil), stat.Mean(y, nil)
	w := stats.Welch{Diff: mx - my, DF: math.Inf(1)}
	if math.Abs(w.Diff) <= 1e-12*max(math.Abs(mx), math.Abs(my)) {
		w.Diff, w.P = 0, 1
	}
	return w
}

// share turns per-run values into shares of their runs' root totals (0
// where a run is empty).
func share(xs, roots []float64) {
	for r := range xs {
		if roots[r] != 0 {
			xs[r] /= roots[r]
		} else {
			xs[r] = 0
		}
	}
}

// adjust sets QValue and Significant of the tested nodes (tested[i]) by
// Benjamini-Hochberg over them.
func (t *tester) adjust(st []NodeStats, tested func(i int) bool) {
	p := make([]float64, len(st))
	for i := range st {
		p[i] = math.NaN()
		if tested(i) {
			p[i] = st[i].PValue
		}
	}
	for i, q := range stats.BenjaminiHochberg(p) {
		st[i].QValue = q
		st[i].Significant = q < t.alpha
	}
}

// deltaOf is the delta of a node of per-run totals head and base in a tree
// whose per-run root totals are root (see Tree.Delta).
func deltaOf(head, base float64, root Node, n Normalization) float64 {
	if n == Relative {
		if root.HeadTotal == 0 || root.BaseTotal == 0 {
			return 0
		}
		return head/root.HeadTotal - base/root.BaseTotal
	}
	if root.BaseTotal == 0 {
		return 0
	}
	return (head - base) / root.BaseTotal
}

// stats tests every node of t, just laid out by l and scaled: a node's
// per-run totals are those of the stacks it owns plus its children's.
// The tested family is every node but "other" ones: under MaxNodes, the
// nodes at least 1/sigBoost as large as the smallest that can be kept,
// and at most testedPerKept times MaxNodes of them (the largest).
func (l *layout) stats(t *Tree, test *tester) []NodeStats {
	nodes := t.Nodes
	w := test.width()
	vals := make([]float64, len(nodes)*w)
	parent := parents(nodes)
	// The runs are columns of vals, so half of them can go to another
	// core when the tree is big.
	sum := func(lo, hi int) func() {
		return func() { l.nodeRunSums(vals, w, lo, hi, parent) }
	}
	big := len(nodes) >= 1<<12
	OnTwoCores(big, "tree.stats", sum(0, w/2), sum(w/2, w))
	if l.v.narrowed {
		// Under Focus, Only or Sandwich the root stands for the whole
		// tree.
		clear(vals[:w])
		l.v.b.addRunsTo(vals[:w], l.v.all)
	}
	test.setRoot(vals[:w:w])
	st := make([]NodeStats, len(nodes))
	testRange := func(test *tester, lo, hi int) func() {
		return func() {
			for i := lo; i < hi; i++ {
				st[i] = test.test(vals[i*w:(i+1)*w:(i+1)*w], t.Delta(i))
			}
		}
	}
	// The tests (a t distribution each) are the larger part of the cost.
	if big {
		mid := len(nodes) / 2
		OnTwoCores(true, "tree.stats", testRange(test.clone(), 0, mid), testRange(test, mid, len(nodes)))
	} else {
		testRange(test, 0, len(nodes))()
	}
	for i, info := range l.others {
		st[i].OtherCount, st[i].OtherMaxDelta = info.count, info.maxDelta
	}
	test.adjust(st, func(i int) bool { return nodes[i].Frame != OtherFrame })
	return st
}

func addRuns(dst, src []float64) {
	for r, v := range src {
		dst[r] += v
	}
}

// nodeRunSums sets each node's per-run totals in vals (a row of w per
// node) for the runs in columns lo to hi: the values of the stacks the
// node owns, summed up the tree (parent). It sums one run at a time in a
// column of the nodes, which a core's cache holds, and then writes that
// column into vals in node order: adding each stack's value to its
// owner's row of vals directly missed the cache on nearly every add.
func (l *layout) nodeRunSums(vals []float64, w, lo, hi int, parent []uint32) {
	b, ids := l.v.b, l.v.active
	column := make([]float64, len(parent))
	for col := lo; col < hi; col++ {
		clear(column)
		if row := b.runRow(col); row.narrow != nil {
			addOwned(column, l.owner, ids, row.narrow)
		} else {
			addOwned(column, l.owner, ids, row.wide)
		}
		for i := len(column) - 1; i > 0; i-- {
			column[parent[i]] += column[i]
		}
		for i, v := range column {
			vals[i*w+col] = v
		}
	}
}

// runRow is the per-run values of the run in column col (head runs, then
// base runs), indexed by stack id.
func (b *Builder) runRow(col int) runSlice {
	s, r := Head, col
	if col >= b.runs[Head] {
		s, r = Base, col-b.runs[Head]
	}
	c := b.runCap[s]
	return b.runValue[s].row(r*c, (r+1)*c)
}

// addOwned adds the values in row of the stacks ids to their owners'
// places in column (owner: stack -> node).
func addOwned[T int32 | int64](column []float64, owner []int32, ids []uint32, row []T) {
	for _, id := range ids {
		if int(id) < len(row) {
			column[owner[id]] += float64(row[id])
		}
	}
}

// addRunsTo adds the per-run values of each stack of ids to vals (head
// runs, then base runs), run by run so that the values are read in memory
// order.
func (b *Builder) addRunsTo(vals []float64, ids []uint32) {
	for col := range vals {
		if row := b.runRow(col); row.narrow != nil {
			vals[col] = addUp(vals[col], ids, row.narrow)
		} else {
			vals[col] = addUp(vals[col], ids, row.wide)
		}
	}
}

// addUp adds the values in row of the stacks ids to sum, in order.
func addUp[T int32 | int64](sum float64, ids []uint32, row []T) float64 {
	for _, id := range ids {
		if int(id) < len(row) {
			sum += float64(row[id])
		}
	}
	return sum
}
