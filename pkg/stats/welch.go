package stats

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Welch is Welch's unequal-variances t-test of the difference of the means
// of two independent samples, x - y.
type Welch struct {
	// Diff is mean(x) - mean(y).
	Diff float64
	// SE is the standard error of Diff, √(var(x)/n_x + var(y)/n_y).
	SE float64
	// DF is the Welch–Satterthwaite degrees of freedom (+Inf when SE is 0).
	DF float64
	// P is the two-sided p-value. When SE is 0 (each side's values all
	// equal) it is 1 if the sides agree and otherwise 2/C(n_x+n_y, n_x),
	// the exact permutation test's: the t statistic is infinite, but a
	// handful of runs cannot make a difference certain.
	P float64
}

// WelchTest tests x against y. Both need at least 2 values; otherwise every
// field is NaN. Values must be finite.
func WelchTest(x, y []float64) Welch {
	if len(x) < 2 || len(y) < 2 {
		nan := math.NaN()
		return Welch{nan, nan, nan, nan}
	}
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	ax, ay := vx/float64(len(x)), vy/float64(len(y))
	w := Welch{Diff: mx - my, SE: math.Sqrt(ax + ay)}
	if w.SE == 0 || w.SE < 1e-12*max(math.Abs(mx), math.Abs(my)) {
		// No spread beyond float rounding: the sides are constants.
		w.SE, w.DF, w.P = 0, math.Inf(1), 1
		if math.Abs(w.Diff) > 1e-12*max(math.Abs(mx), math.Abs(my)) {
			w.P = min(1, 2/binomial(len(x)+len(y), len(x)))
		} else {
			w.Diff = 0
		}
		return w
	}
	w.DF = (ax + ay) * (ax + ay) / (ax*ax/float64(len(x)-1) + ay*ay/float64(len(y)-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: w.DF}
	w.P = 2 * t.CDF(-math.Abs(w.Diff)/w.SE)
	return w
}

// binomial is n choose k as a float64.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// Half is the half width of the two-sided confidence interval of Diff at
// q's level: Diff ± Half covers the true difference with that probability
// (for normal values). 0 when SE is 0; NaN when the test had too few
// values.
func (w Welch) Half(q *TQuantiles) float64 {
	if w.SE == 0 || math.IsNaN(w.SE) {
		return w.SE
	}
	return q.At(w.DF) * w.SE
}

// TQuantiles gives two-sided Student t quantiles at one level, memoized
// for degrees of freedom rounded down on a grid of 128 steps per factor e
// (0.8% apart): a gonum quantile costs tens of microseconds, too much for
// each of a tree's tens of thousands of nodes, while their Welch degrees
// of freedom fall in a narrow range (a few hundred grid points). Rounding
// down widens an interval by less than 1% from 2 degrees of freedom up,
// and never narrows it. Not safe for concurrent use.
type TQuantiles struct {
	level float64
	memo  map[float64]float64
}

// NewTQuantiles returns the quantiles of a two-sided interval at level
// (0.95 for a 95% interval).
func NewTQuantiles(level float64) *TQuantiles {
	return &TQuantiles{level: level, memo: make(map[float64]float64)}
}

// At is the quantile for df (> 0) degrees of freedom, rounded down.
func (q *TQuantiles) At(df float64) float64 {
	df = math.Exp(math.Floor(math.Log(df)*128) / 128)
	if v, ok := q.memo[df]; ok {
		return v
	}
	v := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-q.level)/2)
	q.memo[df] = v
	return v
}

// BenjaminiHochberg returns the q-values of p-values (the BH step-up
// adjustment): q_i = min over j with p_j >= p_i of p_j m / rank(p_j),
// capped at 1, where m counts the finite p-values. Rejecting every
// hypothesis with q < alpha keeps the expected share of false discoveries
// among the rejections at most alpha for independent (or positively
// dependent) tests. NaN p-values are outside the family and get NaN.
func BenjaminiHochberg(p []float64) []float64 {
	q := make([]float64, len(p))
	order := make([]int, 0, len(p))
	for i, v := range p {
		q[i] = math.NaN()
		if !math.IsNaN(v) {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	m := float64(len(order))
	running := 1.0
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		running = min(running, p[i]*m/float64(k+1))
		q[i] = running
	}
	return q
}
