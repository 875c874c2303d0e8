package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// WelchTest agrees with go-moremath's Welch t-test (an independent
// implementation) on random samples.
func TestWelchMatchesMoremath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		x, y := make([]float64, 2+r.IntN(15)), make([]float64, 2+r.IntN(15))
		shift := r.Float64()
		for i := range x {
			x[i] = r.NormFloat64() + shift
		}
		for i := range y {
			y[i] = 3 * r.NormFloat64()
		}
		got := WelchTest(x, y)
		want, err := stats.TwoSampleWelchTTest(stats.Sample{Xs: x}, stats.Sample{Xs: y}, stats.LocationDiffers)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.P-want.P) > 1e-9 || math.Abs(got.DF-want.DoF) > 1e-9*want.DoF {
			t.Fatalf("x %v y %v: p %v df %v, moremath p %v df %v", x, y, got.P, got.DF, want.P, want.DoF)
		}
	}
}

func TestWelchEdges(t *testing.T) {
	q := NewTQuantiles(0.95)
	if w := WelchTest([]float64{1}, []float64{1, 2}); !math.IsNaN(w.P) || !math.IsNaN(w.Half(q)) {
		t.Errorf("one value: %+v", w)
	}
	if w := WelchTest([]float64{5, 5}, []float64{5, 5, 5}); w.P != 1 || w.Diff != 0 || w.Half(q) != 0 {
		t.Errorf("equal constants: %+v", w)
	}
	// Constant sides that differ: the permutation test's 2/C(4,2).
	if w := WelchTest([]float64{6, 6}, []float64{5, 5}); math.Abs(w.P-1.0/3) > 1e-12 || w.Diff != 1 {
		t.Errorf("different constants: %+v", w)
	}
}

// The interval covers the true difference at its level.
func TestWelchCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	covered, n := 0, 4000
	q := NewTQuantiles(0.95)
	for range n {
		x, y := make([]float64, 10), make([]float64, 6)
		for i := range x {
			x[i] = 1 + r.NormFloat64()
		}
		for i := range y {
			y[i] = 2 * r.NormFloat64()
		}
		w := WelchTest(x, y)
		if h := w.Half(q); math.Abs(w.Diff-1) <= h {
			covered++
		}
	}
	if rate := float64(covered) / float64(n); math.Abs(rate-0.95) > 0.015 {
		t.Errorf("coverage %.3f, want 0.95", rate)
	}
}

// BenjaminiHochberg equals the definition computed the slow way: q_i is
// the least p_j m / #{k: p_k <= p_j} over p_j >= p_i, capped at 1.
func TestBenjaminiHochberg(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100 {
		p := make([]float64, 1+r.IntN(40))
		for i := range p {
			switch r.IntN(6) {
			case 0:
				p[i] = math.NaN()
			case 1:
				p[i] = 0.01 // ties
			default:
				p[i] = r.Float64() * r.Float64()
			}
		}
		m := 0
		for _, v := range p {
			if !math.IsNaN(v) {
				m++
			}
		}
		q := BenjaminiHochberg(p)
		for i, pi := range p {
			want := math.NaN()
			if !math.IsNaN(pi) {
				want = 1
				for _, pj := range p {
					if pj >= pi {
						rank := 0
						for _, pk := range p {
							if pk <= pj {
								rank++
							}
						}
						want = min(want, pj*float64(m)/float64(rank))
					}
				}
			}
			if !(math.IsNaN(q[i]) && math.IsNaN(want) || math.Abs(q[i]-want) < 1e-12) {
				t.Fatalf("p %v: q[%d] = %v, want %v", p, i, q[i], want)
			}
		}
	}
}

// Memoized quantiles are gonum's at the rounded-down degrees of freedom:
// never below the exact quantile, and within 1% of it from 2 up.
func TestTQuantiles(t *testing.T) {
	q := NewTQuantiles(0.95)
	for df := 1.0; df < 60; df += 0.37 {
		exact := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
		got := q.At(df)
		if got < exact || df >= 2 && got > 1.01*exact {
			t.Errorf("df %v: %v, exact %v", df, got, exact)
		}
	}
}
