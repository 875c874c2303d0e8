package evolution

import (
	"math"
	"testing"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/stats"
)

// noisyBuild has 10 runs: method a at around 100 with ±2% noise (scaled by
// aScale), method b at around 50, in class p.C; seed varies the noise.
func noisyBuild(name string, day int, aScale float64, seed int) Build {
	b := build(name, day, changes.Changes{})
	b.Runs = map[string][]float64{}
	a, bb := make([]float64, 10), make([]float64, 10)
	for r := range a {
		wobble := float64((r*7+seed*3)%5-2) / 100 // -2% .. +2%
		a[r], bb[r] = 100*aScale*(1+wobble), 50*(1-wobble)
	}
	b.Runs["shop/cart.Cart.a"], b.Runs["shop/cart.Cart.b"] = a, bb
	b.Functions = map[string]float64{"shop/cart.Cart.a": stats.Describe(a).Mean, "shop/cart.Cart.b": stats.Describe(bb).Mean}
	b.Total = b.Functions["shop/cart.Cart.a"] + b.Functions["shop/cart.Cart.b"]
	return b
}

func TestCellTests(t *testing.T) {
	builds := []Build{
		noisyBuild("1", 1, 1, 0),
		noisyBuild("2", 2, 1, 1),   // noise only
		noisyBuild("3", 3, 1.3, 2), // a 30% slower: a real change
	}
	res, err := Analyze(builds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]Row{}
	for _, r := range res.Matrix {
		cells[r.Component+"@"+r.Build] = r
	}
	var p []float64
	for _, key := range []string{"shop/cart.Cart.a@1", "shop/cart.Cart.b@1", "shop/cart@1"} {
		if r := cells[key]; r.PValue != nil || r.QValue != nil || r.Significant != nil {
			t.Errorf("%s: first build tested: p %v", key, r.PValue)
		}
	}
	for _, r := range res.Matrix {
		if r.PValue != nil {
			p = append(p, *r.PValue)
		}
	}
	q := stats.BenjaminiHochberg(p)
	k := 0
	for _, r := range res.Matrix {
		if r.PValue == nil {
			continue
		}
		if *r.QValue != q[k] || *r.Significant != (q[k] < stats.DefaultAlpha) {
			t.Errorf("%s@%s: q %v significant %v, want BH q %v", r.Component, r.Build, *r.QValue, *r.Significant, q[k])
		}
		k++
	}
	// Every component is tested in builds 2 and 3: the method, its class
	// and package (whose run times are their methods' largest).
	if k != 2*4 {
		t.Errorf("%d cells tested, want 8", k)
	}
	for _, key := range []string{"shop/cart.Cart.a@2", "shop/cart.Cart.b@2", "shop/cart.Cart@2", "shop/cart@2", "shop/cart.Cart.b@3"} {
		if r := cells[key]; *r.Significant {
			t.Errorf("%s: noise of ±2%% (change %+.3f) significant, q %g", key, *r.Change, *r.QValue)
		}
	}
	for _, key := range []string{"shop/cart.Cart.a@3", "shop/cart.Cart@3", "shop/cart@3"} {
		if r := cells[key]; !*r.Significant || *r.PValue > 1e-6 {
			t.Errorf("%s: a 30%% rise not significant: p %g q %g", key, *r.PValue, *r.QValue)
		}
	}
	// The class's run times are its largest method's: a's.
	want := stats.WelchTest(builds[2].Runs["shop/cart.Cart.a"], builds[1].Runs["shop/cart.Cart.a"]).P
	if got := *cells["shop/cart.Cart@3"].PValue; math.Abs(got-want) > 1e-15 {
		t.Errorf("class p %g, want its method's %g", got, want)
	}
}

func TestCellTestsNeedRuns(t *testing.T) {
	one := noisyBuild("2", 2, 1.3, 1)
	for f, vs := range one.Runs {
		one.Runs[f] = vs[:1]
	}
	res, err := Analyze([]Build{noisyBuild("1", 1, 1, 0), one}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Matrix {
		if r.PValue != nil || r.Significant != nil {
			t.Errorf("%s@%s tested with one run: p %v", r.Component, r.Build, *r.PValue)
		}
	}
	bad := noisyBuild("1", 1, 1, 0)
	bad.Runs["shop/cart.Cart.b"] = bad.Runs["shop/cart.Cart.b"][:3]
	if _, err := Analyze([]Build{bad}, Options{}); err == nil {
		t.Error("run values of different lengths accepted")
	}
	if _, err := Analyze([]Build{noisyBuild("1", 1, 1, 0)}, Options{Alpha: 0.7}); err == nil {
		t.Error("alpha 0.7 accepted")
	}
}
