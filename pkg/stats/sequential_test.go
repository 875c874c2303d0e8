package stats

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// loop runs a CI loop of plan p on normal run totals (mean 1 on base, 1 +
// change on head, noise the coefficient of variation of a run) and returns
// its last step.
func loop(t testing.TB, p Plan, change, noise float64, rng *rand.Rand) Step {
	var base, head []float64
	for {
		for range min(p.Batch, p.MaxRuns-len(base)) {
			base = append(base, 1+noise*rng.NormFloat64())
			head = append(head, (1+change)*(1+noise*rng.NormFloat64()))
		}
		s, err := p.Decide(base, head)
		if err != nil {
			t.Fatal(err)
		}
		if s.Decision != Continue {
			return s
		}
	}
}

// loops is what many loops of one setting decided.
type loops struct {
	fail, pass, inconclusive int
	runs                     []int
}

func simulate(t testing.TB, p Plan, change, noise float64, seeds int) loops {
	var o loops
	for seed := range seeds {
		s := loop(t, p, change, noise, rand.New(rand.NewPCG(uint64(seed), 38)))
		switch s.Decision {
		case Fail:
			o.fail++
		case Pass:
			o.pass++
		default:
			o.inconclusive++
		}
		o.runs = append(o.runs, s.Runs)
	}
	slices.Sort(o.runs)
	return o
}

func (o loops) mean() float64 {
	sum := 0
	for _, r := range o.runs {
		sum += r
	}
	return float64(sum) / float64(len(o.runs))
}

func (o loops) p90() int { return o.runs[(9*len(o.runs)-1)/10] }

// fixedRuns is the runs a side of a one-look test of the plan's threshold
// with its alpha and power 1-beta (both one-sided), at noise.
func fixedRuns(p Plan, noise float64) int {
	z := distuv.UnitNormal.Quantile(1-p.Alpha) + distuv.UnitNormal.Quantile(1-p.Beta)
	return int(math.Ceil(2 * z * z * noise * noise / (p.MinBaseShare * p.MinBaseShare)))
}

// The sequential loop's error rates hold over every look: no more than
// alpha false FAILs without a change and beta false PASSes at a regression
// of the threshold or more. Binomial slack: 3 standard errors.
func TestSequentialErrorRates(t *testing.T) {
	const seeds = 300
	slack := func(rate float64) float64 { return rate + 3*math.Sqrt(rate*(1-rate)/seeds) }
	for _, noise := range []float64{0.03, 0.10} {
		p := Plan{Batch: 5, MaxRuns: 60, Alpha: 0.05, Beta: 0.05, MinBaseShare: 2 * noise / 3}
		aa := simulate(t, p, 0, noise, seeds)
		if rate := float64(aa.fail) / seeds; rate > slack(p.Alpha) {
			t.Errorf("noise %g: A/A false FAIL rate %.3f over alpha %g", noise, rate, p.Alpha)
		}
		for _, change := range []float64{p.MinBaseShare, 2 * p.MinBaseShare} {
			o := simulate(t, p, change, noise, seeds)
			if rate := float64(o.pass) / seeds; rate > slack(p.Beta) {
				t.Errorf("noise %g, change %g: false PASS rate %.3f over beta %g", noise, change, rate, p.Beta)
			}
			if change == 2*p.MinBaseShare && o.fail < seeds*9/10 {
				t.Errorf("noise %g, change %g: only %d of %d loops FAIL", noise, change, o.fail, seeds)
			}
		}
		if aa.pass < seeds/2 {
			t.Errorf("noise %g: only %d of %d A/A loops PASS within %d runs", noise, aa.pass, seeds, p.MaxRuns)
		}
	}
}

// draw is n runs a side of mean 1 at noise (a coefficient of variation),
// head's changed by change.
func draw(rng *rand.Rand, n int, noise, change float64) (base, head []float64) {
	base, head = make([]float64, n), make([]float64, n)
	for i := range n {
		base[i], head[i] = 1+noise*rng.NormFloat64(), (1+change)*(1+noise*rng.NormFloat64())
	}
	return base, head
}

// The minimum detectable change a comparison prints is found about 80% of
// the time: plant the MDC printed for the true spread and count how often
// the 95% interval of the change excludes 0 on the side of the change.
func TestMDCPower(t *testing.T) {
	const seeds, n, noise = 2000, 10, 0.05
	sd := Side{N: n, Mean: 1, StdDev: noise}
	mdc := MDC(sd, sd, DefaultAlpha, DefaultPower)
	rng := rand.New(rand.NewPCG(4, 38))
	found := 0
	printed := make([]float64, 0, seeds)
	for range seeds {
		base, head := draw(rng, n, noise, mdc)
		if s := Compare(base, head); s.ChangeLow > 0 {
			found++
		}
		printed = append(printed, MDC(Describe(base), Describe(head), DefaultAlpha, DefaultPower))
	}
	t.Logf("a change of the MDC (%.2f%% at %d runs, %g noise) found in %d of %d comparisons", 100*mdc, n, noise, found, seeds)
	if rate := float64(found) / seeds; rate < 0.75 || rate > 0.85 {
		t.Errorf("a change of the MDC %.4f is found in %.3f of comparisons, want about 0.8", mdc, rate)
	}
	slices.Sort(printed)
	if med := printed[seeds/2]; math.Abs(med/mdc-1) > 0.1 {
		t.Errorf("median printed MDC %.4f, at the true spread %.4f", med, mdc)
	}
	// RunsFor is the run count whose MDC reaches the change.
	if r := RunsFor(sd, sd, mdc, DefaultAlpha, DefaultPower); r != n {
		t.Errorf("RunsFor(MDC at %d runs) = %d", n, r)
	}
}

// Costs without spread decide in one run a side; plans off their looks are
// refused.
func TestSequentialDeterministic(t *testing.T) {
	p := Plan{Batch: 1, MaxRuns: 10, Alpha: 0.05, Beta: 0.05, MinBaseShare: 0.01, Deterministic: true}
	if s, err := p.Decide([]float64{1000}, []float64{1020}); err != nil || s.Decision != Fail || !strings.Contains(s.Why, "deterministic") {
		t.Errorf("deterministic +2%%: %+v %v", s, err)
	}
	if s, _ := p.Decide([]float64{1000}, []float64{1005}); s.Decision != Pass {
		t.Errorf("deterministic +0.5%%: %+v", s)
	}
	p.Deterministic, p.Batch = false, 2
	if s, _ := p.Decide([]float64{1000, 1000}, []float64{1000, 1000}); s.Decision != Pass || !s.Deterministic {
		t.Errorf("equal runs without spread: %+v", s)
	}
	if _, err := p.Decide([]float64{1, 2, 3}, []float64{1, 2, 3}); err == nil {
		t.Error("3 runs on a plan of batches of 2 accepted")
	}
}

// TestSequentialTable prints docs/STATISTICS.md's table of the sequential
// loop (FLAMEDIFF_SEQUENTIAL_TABLE=1 go test -run TestSequentialTable).
func TestSequentialTable(t *testing.T) {
	if testing.Short() || os.Getenv("FLAMEDIFF_SEQUENTIAL_TABLE") != "1" {
		t.Skip("the big table: FLAMEDIFF_SEQUENTIAL_TABLE=1")
	}
	const seeds = 2000
	// The run totals' share of the CLI's alpha 0.05 (pkg/verdict halves
	// it: the culprits spend the other half).
	for _, p := range []Plan{
		{Batch: 10, MaxRuns: 250, Alpha: 0.025, Beta: 0.05, MinBaseShare: 0.01},
		{Batch: 5, MaxRuns: 100, Alpha: 0.025, Beta: 0.05, MinBaseShare: 0.05},
	} {
		noise := map[float64]float64{0.01: 0.03, 0.05: 0.10}[p.MinBaseShare]
		for _, change := range []float64{0, 0.01, 0.02, 0.05, 0.10} {
			o := simulate(t, p, change, noise, seeds)
			t.Logf("| %.0f%% | %.0f%% | %d / %d | %.0f%% | %.1f%% | %.1f%% | %.1f%% | %.1f | %d | %d |", 100*noise, 100*p.MinBaseShare, p.Batch, p.MaxRuns, 100*change,
				100*float64(o.fail)/seeds, 100*float64(o.pass)/seeds, 100*float64(o.inconclusive)/seeds, o.mean(), o.p90(), fixedRuns(p, noise))
		}
	}
}

// A culprit's runs to decide, from its interval's half-width at 5 runs a
// side, are the runs at which a change of the threshold is found about 80%
// of the time (Welch's test at 0.05, simulated), and the half-widths of
// real samples give about that many.
func TestScaleRunsPower(t *testing.T) {
	const seeds, n, noise, change = 2000, 5, 0.05, 0.03
	half := TQuantile(2*n-2, 0.975) * noise * math.Sqrt(2.0/n)
	runs := ScaleRuns(half, n, n, change, DefaultAlpha, DefaultPower)
	rng := rand.New(rand.NewPCG(5, 38))
	found := 0
	printed := make([]int, 0, seeds)
	for range seeds {
		base, head := draw(rng, runs, noise, change)
		if w := WelchTest(head, base); w.P < DefaultAlpha && w.Diff > 0 {
			found++
		}
		w := WelchTest(head[:n], base[:n])
		printed = append(printed, ScaleRuns(w.SE*TQuantile(2*n-2, 0.975), n, n, change, DefaultAlpha, DefaultPower))
	}
	t.Logf("%d runs a side (from 5 at %g noise) find a change of %g in %d of %d comparisons", runs, noise, change, found, seeds)
	if rate := float64(found) / seeds; rate < 0.75 || rate > 0.87 {
		t.Errorf("%d runs a side find a change of %g in %.3f of comparisons, want about 0.8", runs, change, rate)
	}
	slices.Sort(printed)
	if med := float64(printed[seeds/2]); math.Abs(med/float64(runs)-1) > 0.25 {
		t.Errorf("median runs to decide from samples %v, at the true spread %d", med, runs)
	}
	if r := ScaleRuns(math.NaN(), n, n, change, DefaultAlpha, DefaultPower); r != 0 {
		t.Errorf("an unknown interval decides in %d runs", r)
	}
}
