package stats

import (
	"cmp"
	"math"
	"slices"

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
	mx, vx := meanVar(x)
	my, vy := meanVar(y)
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
// level conf: Diff ± Half covers the true difference with probability conf
// (for normal values). 0 when SE is 0; NaN when the test had too few values.
func (w Welch) Half(conf float64) float64 {
	if w.SE == 0 || math.IsNaN(w.SE) {
		return w.SE
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: w.DF}
	return t.Quantile(1-(1-conf)/2) * w.SE
}

// meanVar is the mean and the sample variance (n-1 denominator), computed
// around the mean so large equal values do not cancel catastrophically.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
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
