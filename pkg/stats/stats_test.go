package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol
}

// The p-values are references computed independently of go-moremath:
//   - no ties, small n: scipy.stats.mannwhitneyu(x, y, method="exact") gives
//     0.1 for [1,2,3] vs [4,5,6] (2 of the C(6,3)=20 splits are as extreme)
//     and 0.007936507936507936 for 1..5 vs 6..10 (2/252);
//   - ties, small n: the exact permutation distribution enumerated by hand
//     (ranks 1, 2.5, 2.5, 4; the 6 splits give U = .5,.5,2,2,3.5,3.5, so
//     P(U <= .5) = 2/6, two-sided 2/3);
//   - ties, n = 26 (normal approximation with tie and continuity correction,
//     the formula of scipy's method="asymptotic"): U = 84.5, mu = 338,
//     sigma² = 676/12 * (53 - 21918/2652), z = -253/sigma = -5.03979.
func TestComparePValue(t *testing.T) {
	rep := func(v float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	sigma := math.Sqrt(676.0 / 12 * (53 - 21918.0/2652))
	tests := []struct {
		name       string
		base, head []float64
		want       float64
	}{
		{"exact 3v3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"exact 5v5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.007936507936507936},
		{"order irrelevant", []float64{3, 1, 2}, []float64{6, 4, 5}, 0.1},
		{"exact ties", []float64{1, 2}, []float64{2, 3}, 2.0 / 3},
		{"interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 0.7},
		{"normal approx ties", append(rep(1, 13), rep(2, 13)...), append(rep(2, 13), rep(3, 13)...),
			math.Erfc(253 / sigma / math.Sqrt2)},
		{"all equal", []float64{5, 5, 5}, []float64{5, 5}, 1},
		{"empty base", nil, []float64{1, 2}, math.NaN()},
		{"empty head", []float64{1, 2}, []float64{}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.base, tt.head).PValue
			if !near(got, tt.want, 1e-9*math.Max(1, tt.want)) {
				t.Errorf("p = %.12g, want %.12g", got, tt.want)
			}
		})
	}
}

func TestCompareSummary(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	// t(0.975, 2) = 4.302653 (Student t table). With a constant base the
	// Welch-Satterthwaite df is head's n-1 = 2 and Fieller reduces to
	// R ± t*s_head/(√n * b) = 2 ± 4.302653*1/(√3*10).
	half := 4.302653 / math.Sqrt(3) / 10
	tests := []struct {
		name       string
		base, head []float64
		want       Summary
		// anyCI: no reference interval, only check it contains Change.
		anyCI bool
	}{
		{
			name: "constant base, noisy head",
			base: []float64{10, 10, 10}, head: []float64{19, 20, 21},
			want: Summary{
				Base:   Side{N: 3, Mean: 10, Median: 10, StdDev: 0},
				Head:   Side{N: 3, Mean: 20, Median: 20, StdDev: 1},
				Change: 1, ChangeLow: 1 - half, ChangeHigh: 1 + half,
				PValue: 0.1, Significant: false, // p = 2/20 is not < 0.05
			},
		},
		{
			name: "zero variance both sides",
			base: []float64{4, 4, 4, 4, 4}, head: []float64{5, 5, 5, 5, 5},
			want: Summary{
				Base:   Side{N: 5, Mean: 4, Median: 4, StdDev: 0},
				Head:   Side{N: 5, Mean: 5, Median: 5, StdDev: 0},
				Change: 0.25, ChangeLow: 0.25, ChangeHigh: 0.25,
				PValue: 2.0 / 252, Significant: true,
			},
		},
		{
			name: "single run per side",
			base: []float64{10}, head: []float64{12},
			want: Summary{
				Base:   Side{N: 1, Mean: 10, Median: 10, StdDev: nan},
				Head:   Side{N: 1, Mean: 12, Median: 12, StdDev: nan},
				Change: 0.2, ChangeLow: nan, ChangeHigh: nan,
				PValue: 1, Significant: false,
			},
		},
		{
			name: "non-finite values dropped, even median",
			base: []float64{1, nan, 2, 3, 4, inf}, head: []float64{5, 6, 7, -inf, 8},
			want: Summary{
				Base:   Side{N: 4, Mean: 2.5, Median: 2.5, StdDev: math.Sqrt(5.0 / 3)},
				Head:   Side{N: 4, Mean: 6.5, Median: 6.5, StdDev: math.Sqrt(5.0 / 3)},
				Change: 1.6,
				PValue: 2.0 / 70, Significant: true, // separated 4 v 4: 2 of C(8,4)
			},
			anyCI: true,
		},
		{
			name: "zero base mean",
			base: []float64{-1, 1}, head: []float64{1, 2},
			want: Summary{
				Base:   Side{N: 2, Mean: 0, Median: 0, StdDev: math.Sqrt2},
				Head:   Side{N: 2, Mean: 1.5, Median: 1.5, StdDev: math.Sqrt(0.5)},
				Change: nan, ChangeLow: nan, ChangeHigh: nan,
				PValue: 2.0 / 3, // ranks of base {1, 2.5} of {1, 2.5, 2.5, 4}: as "exact ties"
			},
		},
		{
			name: "empty",
			want: Summary{
				Base:   Side{Mean: nan, Median: nan, StdDev: nan},
				Head:   Side{Mean: nan, Median: nan, StdDev: nan},
				Change: nan, ChangeLow: nan, ChangeHigh: nan, PValue: nan,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.base, tt.head)
			want := tt.want
			if tt.anyCI {
				want.ChangeLow, want.ChangeHigh = got.ChangeLow, got.ChangeHigh
				if !(got.ChangeLow < got.Change && got.Change < got.ChangeHigh) {
					t.Errorf("interval [%g, %g] does not contain %g", got.ChangeLow, got.ChangeHigh, got.Change)
				}
			}
			want.Alpha = DefaultAlpha
			checkSide(t, "base", got.Base, want.Base)
			checkSide(t, "head", got.Head, want.Head)
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"change", got.Change, want.Change},
				{"changeLow", got.ChangeLow, want.ChangeLow},
				{"changeHigh", got.ChangeHigh, want.ChangeHigh},
				{"pValue", got.PValue, want.PValue},
				{"alpha", got.Alpha, want.Alpha},
			} {
				if !near(f.got, f.want, 1e-6) {
					t.Errorf("%s = %.9g, want %.9g", f.name, f.got, f.want)
				}
			}
			if got.Significant != want.Significant {
				t.Errorf("significant = %v, want %v", got.Significant, want.Significant)
			}
		})
	}
}

func checkSide(t *testing.T, name string, got, want Side) {
	t.Helper()
	if got.N != want.N || !near(got.Mean, want.Mean, 1e-12) || !near(got.Median, want.Median, 1e-12) ||
		!near(got.StdDev, want.StdDev, 1e-12) {
		t.Errorf("%s = %+v, want %+v", name, got, want)
	}
}

// The interval's coverage must be close to its nominal level: draw many
// pairs of normal samples with a known ratio of means (fixed seed) and
// count how often the interval contains the true change.
func TestChangeIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, mean, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mean + sd*rng.NormFloat64()
		}
		return xs
	}
	const trials = 2000
	const trueChange = 0.1
	covered := 0
	for range trials {
		s := Compare(draw(10, 100, 8), draw(8, 110, 15))
		if s.ChangeLow <= trueChange && trueChange <= s.ChangeHigh {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.93 || rate > 0.97 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
}

func TestCompareAlpha(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2}
	head := []float64{103, 104, 102, 103.5, 102.5, 103.1}
	strict, err := CompareAlpha(base, head, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	// 6 v 6 fully separated: exact p = 2/924 = 0.00216, significant at
	// 0.05 but not at 0.001; the 99.9% interval is wider than the 95% one.
	loose := Compare(base, head)
	if !loose.Significant || strict.Significant {
		t.Errorf("significant at 0.05 = %v, at 0.001 = %v; want true, false", loose.Significant, strict.Significant)
	}
	if !(strict.ChangeLow < loose.ChangeLow && strict.ChangeHigh > loose.ChangeHigh) {
		t.Errorf("99.9%% interval [%g, %g] not wider than 95%% [%g, %g]",
			strict.ChangeLow, strict.ChangeHigh, loose.ChangeLow, loose.ChangeHigh)
	}
	for _, alpha := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := CompareAlpha(base, head, alpha); err == nil {
			t.Errorf("alpha %v: no error", alpha)
		}
	}
}

func TestRatioCIUnbounded(t *testing.T) {
	// The base mean (1) is well within noise of 0: Fieller's g >= 1.
	lo, hi := RatioCI(Side{N: 3, Mean: 5, StdDev: 1}, Side{N: 3, Mean: 1, StdDev: 5}, 0.95)
	if !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("interval [%g, %g], want unbounded", lo, hi)
	}
}

func BenchmarkCompare(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	base, head := make([]float64, 20), make([]float64, 20)
	for i := range base {
		base[i], head[i] = 100+rng.NormFloat64(), 102+rng.NormFloat64()
	}
	for b.Loop() {
		Compare(base, head)
	}
}

func TestDescribeDropsNonFinite(t *testing.T) {
	s := Describe([]float64{1, math.NaN(), 2, math.Inf(1), 3})
	if s.N != 3 || s.Mean != 2 || s.Median != 2 || s.StdDev != 1 {
		t.Errorf("Describe: %+v, want n 3, mean 2, median 2, stddev 1", s)
	}
}

// CompareAlpha is Compare at significance level alpha (a test helper:
// the data source and the CLI compare at DefaultAlpha), which must lie in
// (0, 1); the confidence interval is at level 1-alpha.
func CompareAlpha(base, head []float64, alpha float64) (Summary, error) {
	if !(alpha > 0 && alpha < 1) {
		return Summary{}, fmt.Errorf("stats: significance level %v outside (0, 1)", alpha)
	}
	return compare(base, head, alpha), nil
}
