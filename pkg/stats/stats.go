// Package stats decides whether a head build's runs differ from a base
// build's runs: per-side summaries, the relative change of the mean with a
// confidence interval, and a Mann-Whitney U test.
//
// Everything is deterministic (no resampling) and never panics: quantities
// that the data cannot define are NaN (or ±Inf for an unbounded interval),
// and NaN never makes a comparison Significant.
package stats

import (
	"errors"
	"math"

	"github.com/aclements/go-moremath/stats"
)

// DefaultAlpha is the one default significance level: Compare's (p < 0.05
// and a 95% confidence interval), the false-discovery rate of a diff's
// per-node tests (tree.Options.Alpha 0) and of change points, and a query's
// alpha when it names none.
const DefaultAlpha = 0.05

// Side summarises the runs of one side (base or head).
type Side struct {
	// N is the number of finite values used; NaN and ±Inf are dropped
	// because a run without a measurable value says nothing about speed.
	N int `json:"n"`
	// Mean and Median are NaN when N == 0.
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	// StdDev is the sample standard deviation (n-1 denominator); NaN when
	// N < 2.
	StdDev float64 `json:"stddev"`
}

// Summary compares head with base.
type Summary struct {
	Base, Head Side
	// Change is the relative change of the mean, Head.Mean/Base.Mean - 1.
	// NaN when a side is empty or Base.Mean is 0.
	Change float64 `json:"change"`
	// ChangeLow and ChangeHigh bound the (1-Alpha) confidence interval of
	// Change by Fieller's theorem (see RatioCI). NaN when Change is NaN or
	// a side has fewer than 2 values; -Inf/+Inf when the base mean is not
	// significantly different from zero (the interval is unbounded).
	ChangeLow  float64 `json:"changeLow"`
	ChangeHigh float64 `json:"changeHigh"`
	// PValue is the two-sided Mann-Whitney U test's p-value (exact
	// distribution for small samples, normal approximation with tie and
	// continuity correction above that, as go-moremath does). 1 when every
	// value of both sides is equal (no evidence of a difference); NaN when
	// a side is empty.
	PValue float64 `json:"pValue"`
	// Alpha is the significance level the summary was computed at.
	Alpha float64 `json:"alpha"`
	// Significant is PValue < Alpha and a confidence interval that
	// excludes 0 (both bounds on the same side of 0).
	Significant bool `json:"significant"`
}

// Compare summarises base and head at DefaultAlpha. Inputs are not modified.
func Compare(base, head []float64) Summary {
	return compare(base, head, DefaultAlpha)
}

func compare(base, head []float64, alpha float64) Summary {
	b, h := finite(base), finite(head)
	s := Summary{Base: describe(b), Head: describe(h), Alpha: alpha}
	s.Change = s.Head.Mean/s.Base.Mean - 1
	if s.Base.Mean == 0 || math.IsInf(s.Change, 0) {
		s.Change = math.NaN()
	}
	lo, hi := RatioCI(s.Head, s.Base, 1-alpha)
	s.ChangeLow, s.ChangeHigh = lo-1, hi-1
	if math.IsNaN(s.Change) {
		s.ChangeLow, s.ChangeHigh = math.NaN(), math.NaN()
	}
	s.PValue = mannWhitney(b, h)
	excludesZero := s.ChangeLow > 0 || s.ChangeHigh < 0
	s.Significant = s.PValue < alpha && excludesZero
	return s
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// Describe summarises one side's values as Compare does (NaN and ±Inf
// dropped). Inputs are not modified.
func Describe(xs []float64) Side { return describe(finite(xs)) }

func describe(xs []float64) Side {
	s := Side{N: len(xs), Mean: math.NaN(), Median: math.NaN(), StdDev: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	sample := stats.Sample{Xs: xs}
	s.Mean = sample.Mean()
	s.Median = sample.Quantile(0.5)
	if len(xs) >= 2 {
		s.StdDev = sample.StdDev()
	}
	return s
}

func mannWhitney(base, head []float64) float64 {
	r, err := stats.MannWhitneyUTest(base, head, stats.LocationDiffers)
	switch {
	case errors.Is(err, stats.ErrSamplesEqual):
		return 1
	case err != nil:
		return math.NaN()
	}
	return r.P
}

// RatioCI is the confidence interval at level conf of num.Mean/den.Mean for
// independent samples, by Fieller's theorem without covariance:
//
//	R = a/b, va = s_a²/n_a, vb = s_b²/n_b, g = t² vb / b²
//	bounds = (R ± (t/|b|) √(va (1-g) + R² vb)) / (1-g)
//
// with t the two-sided Student t quantile at Welch–Satterthwaite degrees of
// freedom for a - R b: (va + R² vb)² / (va²/(n_a-1) + R⁴ vb²/(n_b-1)).
// Unlike a delta-method interval it is asymmetric where it should be (a
// noisy denominator stretches the upper side).
//
// It returns NaN bounds when a side has fewer than 2 values or b == 0,
// the point R twice when both sides have zero variance, and (-Inf, +Inf)
// when g >= 1 (b is not significantly different from 0, so the ratio is
// unbounded).
func RatioCI(num, den Side, conf float64) (lo, hi float64) {
	nan := math.NaN()
	if num.N < 2 || den.N < 2 || den.Mean == 0 || !(conf > 0 && conf < 1) {
		return nan, nan
	}
	a, b := num.Mean, den.Mean
	r := a / b
	va := num.StdDev * num.StdDev / float64(num.N)
	vb := den.StdDev * den.StdDev / float64(den.N)
	spread := va + r*r*vb
	if spread == 0 {
		return r, r
	}
	df := spread * spread / (va*va/float64(num.N-1) + r*r*r*r*vb*vb/float64(den.N-1))
	t := -stats.InvCDF(stats.TDist{V: df})((1 - conf) / 2)
	g := t * t * vb / (b * b)
	if g >= 1 {
		return math.Inf(-1), math.Inf(1)
	}
	half := t / math.Abs(b) * math.Sqrt(va*(1-g)+r*r*vb)
	return (r - half) / (1 - g), (r + half) / (1 - g)
}
