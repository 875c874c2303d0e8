package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simulation plants steps in some series of builds among stationary ones
// and counts what ChangePoints finds.
type simulation struct {
	builds, runs int
	noise        float64 // run-to-run standard deviation, relative to the level
	step         float64 // relative size of every planted step
	stationary   int     // series without a change
	single       int     // series with one step
	double       int     // series with two steps, one up and one down
}

// outcome counts a simulation's results.
type outcome struct {
	planted, found  int // planted steps; those found within one build
	falseSeries     int // stationary series with any change reported
	reported, wrong int // significant change points; those not near a planted step
}

func (o outcome) detection() float64 { return float64(o.found) / float64(o.planted) }
func (o outcome) falseDiscovery() float64 {
	if o.reported == 0 {
		return 0
	}
	return float64(o.wrong) / float64(o.reported)
}

func (s simulation) run(seed uint64) outcome {
	rng := rand.New(rand.NewPCG(seed, 7))
	var series [][][]float64
	var steps [][]int
	plant := func(at ...int) {
		level := 1e9 * (0.5 + rng.Float64())
		builds := make([][]float64, s.builds)
		up := rng.IntN(2) == 0
		for b := range builds {
			m := level
			for i, a := range at {
				if b >= a {
					// Several steps alternate in sign; a single one goes either way.
					if (i%2 == 0) == up {
						m *= 1 + s.step
					} else {
						m /= 1 + s.step
					}
				}
			}
			builds[b] = make([]float64, s.runs)
			for r := range builds[b] {
				builds[b][r] = m * (1 + s.noise*rng.NormFloat64())
			}
		}
		series = append(series, builds)
		steps = append(steps, at)
	}
	for range s.stationary {
		plant()
	}
	for range s.single {
		plant(2 + rng.IntN(s.builds-3))
	}
	for range s.double {
		a := 2 + rng.IntN(s.builds/2-2)
		plant(a, a+2+rng.IntN(s.builds-a-3))
	}
	var o outcome
	for i, cps := range ChangePoints(series, ChangeOptions{Alpha: DefaultAlpha, MinChange: DefaultMinChange}) {
		o.planted += len(steps[i])
		near := func(at int) bool {
			for _, c := range cps {
				if c.Significant && abs(c.Index-at) <= 1 {
					return true
				}
			}
			return false
		}
		for _, at := range steps[i] {
			if near(at) {
				o.found++
			}
		}
		anyFalse := false
		for _, c := range cps {
			if !c.Significant {
				continue
			}
			o.reported++
			planted := false
			for _, at := range steps[i] {
				planted = planted || abs(c.Index-at) <= 1
			}
			if !planted {
				o.wrong++
				anyFalse = true
			}
		}
		if anyFalse && len(steps[i]) == 0 {
			o.falseSeries++
		}
	}
	return o
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (o *outcome) add(p outcome) {
	o.planted += p.planted
	o.found += p.found
	o.falseSeries += p.falseSeries
	o.reported += p.reported
	o.wrong += p.wrong
}

// TestChangePointsSimulation plants steps of several sizes (single and
// two per series, up and down) among many stationary series, 12 builds of
// 10 runs with 3% run-to-run noise, and checks the detection rate and the
// false alarms against what the method promises. The figures are quoted
// in docs/CHANGEPOINTS.md (go test -v -run Simulation ./pkg/stats/).
func TestChangePointsSimulation(t *testing.T) {
	for _, tc := range []struct {
		step          float64
		minDetection  float64
		maxFalseDisc  float64
		maxFalseShare float64 // stationary series with a false alarm
	}{
		{step: 0.02, minDetection: 0, maxFalseDisc: 0.20, maxFalseShare: 0.01},
		{step: 0.05, minDetection: 0.85, maxFalseDisc: 0.10, maxFalseShare: 0.01},
		{step: 0.10, minDetection: 0.97, maxFalseDisc: 0.10, maxFalseShare: 0.01},
		{step: 0.25, minDetection: 0.99, maxFalseDisc: 0.10, maxFalseShare: 0.01},
	} {
		sim := simulation{builds: 12, runs: 10, noise: 0.03, step: tc.step, stationary: 900, single: 60, double: 40}
		var o outcome
		const trials = 10
		for seed := range uint64(trials) {
			o.add(sim.run(seed))
		}
		falseShare := float64(o.falseSeries) / float64(trials*sim.stationary)
		t.Logf("step %4.0f%%: detected %5.1f%% of %d planted steps; false discoveries %4.1f%% of %d reported; stationary series with a false alarm %.2f%%",
			100*tc.step, 100*o.detection(), o.planted, 100*o.falseDiscovery(), o.reported, 100*falseShare)
		if o.detection() < tc.minDetection {
			t.Errorf("step %v: detection rate %.3f < %.3f", tc.step, o.detection(), tc.minDetection)
		}
		if o.falseDiscovery() > tc.maxFalseDisc {
			t.Errorf("step %v: false-discovery rate %.3f > %.3f", tc.step, o.falseDiscovery(), tc.maxFalseDisc)
		}
		if falseShare > tc.maxFalseShare {
			t.Errorf("step %v: %.4f of stationary series alarmed > %.4f", tc.step, falseShare, tc.maxFalseShare)
		}
	}
}

// TestChangePointsStationary: with only stationary series nothing may be
// reported in most trials (BH at alpha bounds the chance of any report
// by alpha when every series is null).
func TestChangePointsStationary(t *testing.T) {
	sim := simulation{builds: 12, runs: 10, noise: 0.03, stationary: 2000}
	const trials = 40
	alarmed := 0
	for seed := range uint64(trials) {
		if o := sim.run(1000 + seed); o.reported > 0 {
			alarmed++
		}
	}
	t.Logf("stationary only: %d of %d trials of 2,000 series reported any change", alarmed, trials)
	if alarmed > 6 { // binomial(40, 0.05): P(> 6) < 0.01
		t.Errorf("%d of %d all-stationary trials reported a change", alarmed, trials)
	}
}

func TestChangePointsExact(t *testing.T) {
	runs := func(vs ...float64) []float64 { return vs }
	series := [][][]float64{
		{ // a 2x step up at build 2, then down by a quarter at build 4
			runs(10, 11, 9), runs(10, 10, 10), runs(20, 21, 19), runs(20, 20, 20), runs(15, 14, 16), runs(15, 15, 15),
		},
		{ // constant: nothing
			runs(5, 5), runs(5, 5), runs(5, 5), runs(5, 5),
		},
		{ // one run per build and 1% shifts: below minChange
			runs(100), runs(100.1), runs(99.9), runs(101), runs(101.1), runs(100.9),
		},
		{ // a function that appears at build 3, in nanoseconds
			runs(0, 0, 0), runs(0, 0, 0), runs(0, 0, 0), runs(5e9, 6e9, 4e9), runs(5e9, 5e9, 5e9),
		},
	}
	got := ChangePoints(series, ChangeOptions{MinChange: DefaultMinChange})
	if len(got[0]) != 2 || got[0][0].Index != 2 || got[0][1].Index != 4 {
		t.Fatalf("series 0: got %+v, want changes at builds 2 and 4", got[0])
	}
	up, down := got[0][0], got[0][1]
	if up.Before != 10 || up.After != 20 || up.Change != 1 || !up.Significant {
		t.Errorf("step up: %+v", up)
	}
	if down.Before != 20 || down.After != 15 || down.Change != -0.25 || !down.Significant || down.PValue > DefaultAlpha {
		t.Errorf("step down: %+v", down)
	}
	if got[1] != nil {
		t.Errorf("constant series: %+v", got[1])
	}
	for _, c := range got[2] {
		if c.Significant {
			t.Errorf("1%% shift marked significant: %+v", c)
		}
	}
	if len(got[3]) != 1 || got[3][0].Index != 3 || got[3][0].Before != 0 || got[3][0].After != 5e9 ||
		!math.IsInf(got[3][0].Change, 1) || !got[3][0].Significant {
		t.Errorf("appearing function: %+v, want one change at build 3 from exactly 0, +Inf, significant", got[3])
	}
}

func BenchmarkChangePoints(b *testing.B) {
	sim := simulation{builds: 12, runs: 10, noise: 0.03, step: 0.1, stationary: 1900, single: 60, double: 40}
	for b.Loop() {
		sim.run(1)
	}
}

// TestChangePointsTooFewBuilds: a series with no position that has 2 runs
// on each side (one build, or two builds of one run) has no change point,
// also beside series that do change.
func TestChangePointsTooFewBuilds(t *testing.T) {
	step := [][]float64{{10, 11, 9}, {10, 10, 10}, {20, 21, 19}, {20, 20, 20}}
	for _, short := range [][][]float64{
		{{10, 11, 12, 9}},
		{{10}, {20}},
		{},
	} {
		for _, series := range [][][][]float64{{short}, {short, step}} {
			got := ChangePoints(series, ChangeOptions{MinChange: DefaultMinChange})
			if len(got[0]) != 0 {
				t.Errorf("%v: change points %+v, want none", short, got[0])
			}
			if len(series) == 2 && (len(got[1]) != 1 || got[1][0].Index != 2) {
				t.Errorf("%v beside a step: step's change points %+v, want one at 2", short, got[1])
			}
		}
	}
}

// TestBestIsSmallestPValue checks that best, which computes the p-value of
// the largest |t| only, picks the split and p-value that computing every
// position's p-value picks (the first of the smallest), on noisy series,
// series with constant segments, and shifts large enough that p-values
// underflow to 0.
func TestBestIsSmallestPValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	for i := range 3000 {
		builds := 2 + rng.IntN(12)
		series := make([][]float64, builds)
		shift := []float64{0, 0.1, 1, 1e3, 1e9}[i%5]
		for b := range series {
			runs := rng.IntN(4)
			for range runs {
				v := 100 + rng.NormFloat64()
				switch {
				case i%7 == 0: // constant segments
					v = 100
				case i%11 == 0:
					v = float64(rng.IntN(3))
				}
				if b >= builds/2 {
					v += shift
				}
				series[b] = append(series[b], v)
			}
		}
		p := newPrefix(series)
		for lo := 0; lo < builds; lo++ {
			for hi := lo + 1; hi <= builds; hi++ {
				want, got := everyPValue(p, lo, hi), p.best(lo, hi)
				if got != want {
					t.Fatalf("series %v [%d, %d): best %+v, smallest p-value %+v", series, lo, hi, got, want)
				}
			}
		}
	}
}

// everyPValue is best by the p-value of every position.
func everyPValue(p prefix, lo, hi int) split {
	out := split{p: 1}
	tried := 0
	for k := lo + 1; k < hi; k++ {
		n1, m1, v1 := p.moments(lo, k)
		n2, m2, v2 := p.moments(k, hi)
		if n1 < 2 || n2 < 2 {
			continue
		}
		tried++
		if pv := tPValue(absT(n1, m1, v1, n2, m2, v2), n1+n2-2); out.at == 0 || pv < out.p {
			out = split{at: k, p: pv}
		}
	}
	if tried == 0 {
		return split{p: 1}
	}
	out.p = math.Min(1, out.p*float64(tried))
	return out
}
