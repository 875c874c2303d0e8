package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultMinChange is the smallest relative change of the mean a change
// point must have to be Significant: smaller shifts are real with enough
// runs but not worth an alert.
const DefaultMinChange = 0.02

// ChangeOptions tune ChangePoints.
type ChangeOptions struct {
	// Alpha is the false-discovery rate over the series (0 means
	// DefaultAlpha).
	Alpha float64
	// MinChange is the smallest |After/Before - 1| of a Significant change
	// (0 means none; use DefaultMinChange).
	MinChange float64
}

// ChangePoint is one detected change in a series of builds.
type ChangePoint struct {
	// Index is the first build after the change (1 <= Index < builds).
	Index int
	// Before and After are the per-run means of the segments either side
	// of the change in the final segmentation; Change is After/Before - 1,
	// +Inf when Before is 0 (a function that appears).
	Before, After, Change float64
	// PValue is the t-test's p-value of the split, multiplied by the
	// number of positions the split was chosen among and adjusted over the
	// series by Benjamini-Hochberg, so that PValue < Alpha is the
	// detection rule.
	PValue float64
	// Significant is PValue < Alpha and |Change| >= MinChange.
	Significant bool
}

// ChangePoints finds the change points of many series at once: series[s][b]
// holds the per-run values of build b (oldest first) in series s, one
// series per function. It is binary segmentation with a two-sample t-test: the
// split of a segment is the position with the largest |t| between the runs
// before and after it, tested with a Bonferroni correction for the
// positions it was chosen among. The first split of every series is tested
// at once and the series are filtered by Benjamini-Hochberg at Alpha; only
// a series that passes is segmented further, each later split at the
// critical level the first ones passed, so the expected share of false
// series among those reported stays at most about Alpha whatever the
// number of series. A side of a split needs at least 2 runs. Results are in
// series order, each sorted by Index; series without a change get nil.
func ChangePoints(series [][][]float64, o ChangeOptions) [][]ChangePoint {
	alpha := o.Alpha
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	prefixes := make([]prefix, len(series))
	first := make([]split, len(series))
	ps := make([]float64, len(series))
	for s, builds := range series {
		prefixes[s] = newPrefix(builds)
		first[s] = prefixes[s].best(0, len(builds))
		ps[s] = first[s].p
	}
	q := BenjaminiHochberg(ps)
	rejected := 0
	for _, v := range q {
		if v < alpha {
			rejected++
		}
	}
	out := make([][]ChangePoint, len(series))
	if rejected == 0 {
		return out
	}
	// The BH critical value of the last rejection: later splits of a
	// rejected series pass at the same level, and report their p-value
	// scaled as BH scales it.
	scale := float64(len(series)) / float64(rejected)
	for s := range series {
		if !(q[s] < alpha) {
			continue
		}
		found := []split{{at: first[s].at, p: q[s]}}
		var segment func(lo, hi int)
		segment = func(lo, hi int) {
			sp := prefixes[s].best(lo, hi)
			if p := math.Min(1, sp.p*scale); sp.at > 0 && p < alpha {
				found = append(found, split{at: sp.at, p: p})
				segment(lo, sp.at)
				segment(sp.at, hi)
			}
		}
		segment(0, first[s].at)
		segment(first[s].at, len(series[s]))
		slices.SortFunc(found, func(a, b split) int { return a.at - b.at })
		bounds := make([]int, 0, len(found)+2)
		bounds = append(bounds, 0)
		for _, f := range found {
			bounds = append(bounds, f.at)
		}
		bounds = append(bounds, len(series[s]))
		for i, f := range found {
			before := prefixes[s].mean(bounds[i], bounds[i+1])
			after := prefixes[s].mean(bounds[i+1], bounds[i+2])
			c := relativeChange(before, after)
			out[s] = append(out[s], ChangePoint{
				Index: f.at, Before: before, After: after, Change: c, PValue: f.p,
				Significant: math.Abs(c) >= o.MinChange,
			})
		}
	}
	return out
}

// split is a candidate change: at is the first build after it (0: none).
type split struct {
	at int
	p  float64
}

// prefix holds running run counts, sums and sums of squares over the
// builds of a series. The squares are of the values less the series mean,
// so that those of large counts such as nanoseconds keep their precision;
// the sums are of the values themselves, so that a segment of equal
// values (zeros where a function is absent) has exactly that mean.
type prefix struct {
	n, sum, sq []float64
	shift      float64
}

func newPrefix(builds [][]float64) prefix {
	var total, count float64
	for _, b := range builds {
		for _, v := range b {
			total += v
			count++
		}
	}
	p := prefix{n: make([]float64, len(builds)+1), sum: make([]float64, len(builds)+1), sq: make([]float64, len(builds)+1)}
	if count > 0 {
		p.shift = total / count
	}
	for i, b := range builds {
		p.n[i+1], p.sum[i+1], p.sq[i+1] = p.n[i], p.sum[i], p.sq[i]
		for _, v := range b {
			d := v - p.shift
			p.n[i+1]++
			p.sum[i+1] += v
			p.sq[i+1] += d * d
		}
	}
	return p
}

// moments returns the run count, mean and sample variance of builds [lo, hi).
func (p prefix) moments(lo, hi int) (n, mean, variance float64) {
	n = p.n[hi] - p.n[lo]
	if n == 0 {
		return 0, math.NaN(), math.NaN()
	}
	mean = (p.sum[hi] - p.sum[lo]) / n
	d := mean - p.shift // the shifted values' mean
	variance = math.Max(0, (p.sq[hi]-p.sq[lo]-n*d*d)/(n-1))
	return n, mean, variance
}

func (p prefix) mean(lo, hi int) float64 {
	_, m, _ := p.moments(lo, hi)
	return m
}

// best returns the split of builds [lo, hi) with the smallest t-test
// p-value (the first of equal ones), Bonferroni-corrected for the
// positions tried ({0, 1} when no position has 2 runs on each side).
// Every position of a segment tests its runs with the same degrees of
// freedom, so the p-value falls as |t| grows: only the positions whose
// |t| is the largest up to rounding get one computed (and, when that
// p-value underflows to 0, those before them; when it is near 1, all).
func (p prefix) best(lo, hi int) split {
	ts := make([]float64, hi-lo) // |t| at position lo+i; -1 where not tried
	tried := 0
	top, df := -1.0, 0.0
	for k := lo + 1; k < hi; k++ {
		ts[k-lo] = -1
		n1, m1, v1 := p.moments(lo, k)
		n2, m2, v2 := p.moments(k, hi)
		if n1 < 2 || n2 < 2 {
			continue
		}
		tried++
		t := absT(n1, m1, v1, n2, m2, v2)
		ts[k-lo], top, df = t, max(top, t), n1+n2-2
	}
	if tried == 0 { // no split has 2 runs a side: nothing to test
		return split{p: 1}
	}
	out := split{p: 2} // above any p-value
	for k := lo + 1; k < hi; k++ {
		// Below |t| = 1 the p-value's rounding (near 1) outweighs small
		// differences of |t|: there every position gets one.
		if t := ts[k-lo]; t >= 0 && (top < 1 || t >= top*(1-1e-9)) {
			if pv := tPValue(t, df); pv < out.p {
				out = split{at: k, p: pv}
			}
		}
	}
	if out.p == 0 { // the first position whose p-value underflows
		for k := lo + 1; k < hi && k < out.at; k++ {
			if t := ts[k-lo]; t >= 0 && tPValue(t, df) == 0 {
				out.at = k
				break
			}
		}
	}
	out.p = math.Min(1, out.p*float64(tried))
	return out
}

// absT is |t| of Student's two-sample t-test (pooled variance) from the
// samples' sizes, means and variances. Under the null of a stationary
// series both sides share one variance, and the pooled test is then exact
// for normal noise where Welch's approximate degrees of freedom make the
// far tail, which the corrections look at, too light. Two constant
// samples differ surely (+Inf) when their means do, else not at all (0).
func absT(n1, m1, v1, n2, m2, v2 float64) float64 {
	df := n1 + n2 - 2
	pooled := ((n1-1)*v1 + (n2-1)*v2) / df
	se := pooled * (1/n1 + 1/n2)
	if se == 0 || math.IsNaN(se) {
		if m1 == m2 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(m1-m2) / math.Sqrt(se)
}

// tPValue is the two-sided p-value of |t| with df degrees of freedom.
func tPValue(t, df float64) float64 {
	switch {
	case t == 0:
		return 1
	case math.IsInf(t, 1):
		return 0
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// relativeChange is after/before - 1, +Inf from 0 to more (and NaN from 0
// to 0 or less, which a split never finds).
func relativeChange(before, after float64) float64 {
	if before == 0 {
		if after > 0 {
			return math.Inf(1)
		}
		return math.NaN()
	}
	return after/before - 1
}
