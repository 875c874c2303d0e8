package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// noisy fills a builder with runs of program: each run's stacks scaled by
// one whole-run noise factor (CV noise), head's stacks by factor too.
func noisy(runs int, noise float64, factor func(stack string) float64, rng *rand.Rand) *tree.Builder {
	b := tree.NewBuilder(tree.NewFrames())
	b.SetRuns(tree.Base, runs)
	b.SetRuns(tree.Head, runs)
	i := 0
	for _, stack := range []string{"main;a", "main;b;c", "main;b;d", "main;e"} {
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, b.Frames().Intern(name, ""))
		}
		s := b.Stack(ids)
		for r := range runs {
			b.AddRun(tree.Base, r, s, int64(float64(program[stack])*(1+noise*rng.NormFloat64())), uint64(i))
			b.AddRun(tree.Head, r, s, int64(float64(program[stack])*factor(stack)*(1+noise*rng.NormFloat64())), uint64(i))
		}
		i++
	}
	return b
}

// PASS never appears for runs that cannot rule out the threshold: in one
// look, the run totals' upper bound is under MinBaseShare; in a sequential
// look, its bound at the plan's beta is. Random run counts, noise and
// changes, some of them at the threshold.
func TestPassRulesOutTheThreshold(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 1))
	passes := 0
	for i := range 400 {
		runs := 2 + rng.IntN(12)
		noise := []float64{0, 0.001, 0.01, 0.05}[rng.IntN(4)]
		change := []float64{0, 0.005, 0.01, 0.02, 0.1}[rng.IntN(5)]
		target := []string{"main;a", "main;e", ""}[rng.IntN(3)]
		b := noisy(runs, noise, func(s string) float64 {
			if target == "" || s == target {
				return 1 + change
			}
			return 1
		}, rng)
		in := Input{MinBaseShare: DefaultMinBaseShare}
		if i%2 == 1 {
			in.Plan = &stats.Plan{Batch: 1, MaxRuns: 14, Alpha: 0.05, Beta: 0.05, MinBaseShare: DefaultMinBaseShare}
		}
		v, err := Of(b, in)
		if err != nil {
			t.Fatal(err)
		}
		if v.Result != Pass {
			continue
		}
		passes++
		bound := float64(v.Change.ChangeHigh)
		if v.Sequential != nil {
			bound = float64(v.Sequential.High)
		}
		if !(bound < v.MinBaseShare) || float64(v.Power.RulesOut) != bound {
			t.Errorf("PASS at %d runs, noise %g, change %g of %q: the bound %v does not rule out %v (rules out %v)",
				runs, noise, change, target, bound, v.MinBaseShare, v.Power.RulesOut)
		}
	}
	if passes < 40 {
		t.Errorf("only %d PASS of 400: the property is hardly tested", passes)
	}
}

// A verdict says what its runs see: the MDC of the total and of each
// culprit, and how many runs would decide when it is not decided.
func TestVerdictPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 2))
	v, err := Of(noisy(5, 0.03, func(string) float64 { return 1 }, rng), Input{MinBaseShare: DefaultMinBaseShare})
	if err != nil {
		t.Fatal(err)
	}
	want := stats.MDC(stats.Describe(v.Totals.Base), stats.Describe(v.Totals.Head), v.Alpha, 0.8)
	if v.Result != Inconclusive || float64(v.Power.MDC) != want || !(want > 0.02) || v.Power.RunsToDecide < 20 ||
		!strings.Contains(v.Power.Sentence, "runs a side would detect or rule out 1.00%") {
		t.Errorf("3%% noise, 5 runs: %s %+v (MDC %v)", v.Result, v.Power, want)
	}
	v, err = Of(noisy(6, 0.002, func(s string) float64 { return map[bool]float64{true: 1.2, false: 1}[s == "main;b;d"] }, rng),
		Input{MinBaseShare: DefaultMinBaseShare})
	if err != nil {
		t.Fatal(err)
	}
	if v.Result != Fail || len(v.Regressions) == 0 || !(float64(v.Regressions[0].MDC) > 0) || v.Power.RunsToDecide != 0 {
		t.Errorf("one slower function: %s %+v %+v", v.Result, v.Power, v.Regressions)
	}
}

// Deterministic costs: one run a side decides a sequential look, and the
// verdict says why.
func TestDeterministicLook(t *testing.T) {
	plan := &stats.Plan{Batch: 1, MaxRuns: 10, Alpha: 0.05, Beta: 0.05, MinBaseShare: DefaultMinBaseShare, Deterministic: true}
	for _, c := range []struct {
		change float64
		want   string
	}{{0.03, Fail}, {0.002, Pass}} {
		b := noisy(1, 0, func(s string) float64 { return map[bool]float64{true: 1 + c.change*5, false: 1}[s == "main;b;d"] }, rand.New(rand.NewPCG(1, 1)))
		v, err := Of(b, Input{MinBaseShare: DefaultMinBaseShare, Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		if v.Result != c.want || !strings.Contains(v.Why, "deterministic") || math.Abs(float64(v.Sequential.Change)-c.change) > 1e-3 {
			t.Errorf("deterministic %+.1f%%: %s %q %+v", 100*c.change, v.Result, v.Why, v.Sequential)
		}
	}
}

// A PASS says what it rules out for every call path at once where the
// tests have the power: a quiet A/A rules out 1% everywhere; a real change
// of 0.5% of the total in one function stays inside the bound.
func TestPassRulesOutCallPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 3))
	for _, c := range []struct {
		change float64 // of the total, in main;a
		runs   int
		noise  float64
		claim  bool
	}{{0, 10, 0.001, true}, {0.005, 10, 0.001, true}, {0, 5, 0.01, false}} {
		v, err := Of(noisy(c.runs, c.noise, func(s string) float64 {
			return map[bool]float64{true: 1 + c.change*7.5, false: 1}[s == "main;a"]
		}, rng), Input{MinBaseShare: DefaultMinBaseShare})
		if err != nil {
			t.Fatal(err)
		}
		bound := float64(v.Power.PathsRuleOut)
		claims := strings.Contains(v.Power.Sentence, "No call path's total grew by")
		if v.Result != Pass || claims != c.claim || (c.claim && !(bound >= c.change && bound < v.MinBaseShare)) || v.Power.Paths < 4 {
			t.Errorf("change %g, %d runs, noise %g: %s, bound %v over %d paths: %q", c.change, c.runs, c.noise, v.Result, bound, v.Power.Paths, v.Power.Sentence)
		}
	}
}

// A sequential PASS's statement for every call path holds over the looks:
// a loop looks after every batch and stops at a decision; the statement is
// false when a path's true delta is at or over its bound. A/A (no path
// changed) and a planted 0.5% of the total in one function, 1% noise per
// function and run: false claims stay under the plan's alpha.
func TestSequentialPathsRuleOut(t *testing.T) {
	const seeds, maxRuns = 300, 30
	plan := &stats.Plan{Batch: 5, MaxRuns: maxRuns, Alpha: 0.05, Beta: 0.05, MinBaseShare: 0.03}
	stacks := []string{"main;a", "main;b;c", "main;b;d", "main;e"}
	for _, planted := range []float64{0, 0.005} { // of the total, in main;a
		rng := rand.New(rand.NewPCG(38, uint64(1000*planted)+4))
		claims, false_ := 0, 0
		for range seeds {
			var draws [2][4][maxRuns]float64 // side, stack, run: the runs a loop adds
			for side := range draws {
				for s := range stacks {
					for r := range maxRuns {
						draws[side][s][r] = 1 + 0.01*rng.NormFloat64()
					}
				}
			}
			for n := plan.Batch; n <= maxRuns; n += plan.Batch {
				b := tree.NewBuilder(tree.NewFrames())
				b.SetRuns(tree.Base, n)
				b.SetRuns(tree.Head, n)
				for i, stack := range stacks {
					var ids []uint32
					for _, name := range strings.Split(stack, ";") {
						ids = append(ids, b.Frames().Intern(name, ""))
					}
					st := b.Stack(ids)
					factor := 1.0
					if stack == "main;a" {
						factor += planted * 7.5 // main;a is 1/7.5 of the total
					}
					for r := range n {
						b.AddRun(tree.Base, r, st, int64(float64(program[stack])*draws[0][i][r]), uint64(i))
						b.AddRun(tree.Head, r, st, int64(float64(program[stack])*factor*draws[1][i][r]), uint64(i))
					}
				}
				v, err := Of(b, Input{MinBaseShare: plan.MinBaseShare, Plan: plan})
				if err != nil {
					t.Fatal(err)
				}
				if v.Result == Continue {
					continue
				}
				if bound := float64(v.Power.PathsRuleOut); v.Result == Pass && bound < plan.MinBaseShare {
					claims++
					if !strings.Contains(v.Power.Sentence, "over all looks") || v.Power.PathsConfidence != 1-plan.Alpha/2 {
						t.Errorf("the statement does not say its confidence over the looks: %q", v.Power.Sentence)
					}
					if bound <= planted { // main and main;a grew by planted
						false_++
					}
				}
				break
			}
		}
		t.Logf("planted %g: %d statements of %d loops, %d false", planted, claims, seeds, false_)
		if claims < seeds/4 || float64(false_) > plan.Alpha*seeds {
			t.Errorf("planted %g: %d statements of %d loops, %d false (alpha %g)", planted, claims, seeds, false_, plan.Alpha)
		}
	}
}

// A culprit whose interval straddles the threshold says how many runs a
// side would decide it, more than it has; a decided one says nothing.
func TestCulpritRunsToDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 5))
	undecided := 0
	for range 40 {
		v, err := Of(noisy(5, 0.01, func(s string) float64 {
			return map[bool]float64{true: 1 + DefaultMinBaseShare*7.5, false: 1}[s == "main;a"] // 1% of the total
		}, rng), Input{MinBaseShare: DefaultMinBaseShare})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range append(v.Regressions, v.Improvements...) {
			thr := map[bool]float64{true: v.MinBaseShare, false: -v.MinBaseShare}[c.Regression]
			straddles := float64(c.DeltaLow) < thr && thr < float64(c.DeltaHigh)
			if straddles {
				undecided++
			}
			if straddles != (c.RunsToDecide > 5) || (!straddles && c.RunsToDecide != 0) {
				t.Errorf("%s %v [%v, %v]: %d runs to decide", c.Function, c.Delta, c.DeltaLow, c.DeltaHigh, c.RunsToDecide)
			}
		}
	}
	if undecided < 5 {
		t.Errorf("only %d undecided culprits: the rule is hardly tested", undecided)
	}
}
