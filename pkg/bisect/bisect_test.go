package bisect

import (
	"math"
	"slices"
	"testing"

	"github.com/flamediff/flamediff/pkg/stats"
)

// The search's own rules: the middle first, a skipped commit's lower
// neighbour next, the range when every commit between is skipped, and the
// end when the tests are spent.
func TestSearchNext(t *testing.T) {
	for _, c := range []struct {
		name    string
		s       Search
		want    Answer
		wantWhy bool
	}{
		{"the middle", Search{Commits: 9, Tests: 5, Outcomes: map[int]string{}}, Answer{Next: 4, Hi: 9}, false},
		{"a skipped middle", Search{Commits: 9, Tests: 5, Outcomes: map[int]string{4: Skipped}}, Answer{Next: 3, Hi: 9}, false},
		{"adjacent", Search{Commits: 9, Tests: 5, Outcomes: map[int]string{4: Clean, 5: Carries}}, Answer{First: 5, Lo: 4, Hi: 5}, false},
		{"all between skipped", Search{Commits: 9, Tests: 5, Outcomes: map[int]string{4: Clean, 5: Skipped, 6: Undecided, 7: Carries}}, Answer{Lo: 4, Hi: 7}, true},
		{"tests spent", Search{Commits: 9, Tests: 2, Outcomes: map[int]string{4: Clean, 6: Undecided}}, Answer{Lo: 4, Hi: 9}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.s.Next()
			if (got.Why != "") != c.wantWhy {
				t.Errorf("why %q", got.Why)
			}
			got.Why = ""
			if got != c.want {
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

// Classify's decisions on costs whose answer is plain: exact costs decide
// at once, a commit like good is clean and one like bad carries.
func TestClassify(t *testing.T) {
	p := stats.Plan{Batch: 5, MaxRuns: 30, Alpha: 0.01}
	good, bad := []float64{100, 101, 99, 100, 100}, []float64{110, 111, 109, 110, 110}
	for _, c := range []struct {
		name string
		c    []float64
		want string
	}{
		{"like good", []float64{100, 99, 101, 100, 100}, Clean},
		{"like bad", []float64{110, 109, 111, 110, 110}, Carries},
		{"half way, undecided", []float64{104, 106, 103, 107, 105}, Continue},
	} {
		s, err := Classify(p, 0.5, good, bad, c.c)
		if err != nil || s.Decision != c.want {
			t.Errorf("%s: %+v, %v; want %s", c.name, s, err, c.want)
		}
	}
	exact, err := Classify(stats.Plan{Batch: 1, MaxRuns: 30, Alpha: 0.01}, 0.5, []float64{100, 100}, []float64{110, 110}, []float64{109, 109})
	if err != nil || exact.Decision != Carries || !exact.Exact || math.Abs(exact.Share-0.9) > 1e-9 {
		t.Errorf("exact costs: %+v, %v", exact, err)
	}
	if _, err := Classify(p, 0.5, good, good, good); err == nil {
		t.Error("no regression between good and bad: no error")
	}
}

// A commit whose test puts it clearly past bad, or before good, is beyond
// the range; one whose interval reaches into it, or a skipped one, is not.
func TestFindingBeyond(t *testing.T) {
	f := Finding{Tests: []Tested{
		{Commit: 3, Outcome: Carries, Step: Step{Share: 2, Low: 1.4, High: 2.6}},
		{Commit: 4, Outcome: Carries, Step: Step{Share: 1.2, Low: 0.8, High: 1.6}},
		{Commit: 5, Outcome: Clean, Step: Step{Share: -0.6, Low: -0.9, High: -0.2}},
		{Commit: 6, Outcome: Skipped},
		{Commit: 3, At: 0.25, Outcome: Carries, Step: Step{Share: 2, Low: 1.5, High: 2.5}},
	}}
	if got := f.Beyond(); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("beyond %v, want [3 5]", got)
	}
}

// Probes spread over the commits before bad, each once, none past it.
func TestProbes(t *testing.T) {
	for _, c := range []struct {
		commits, n int
		want       []int
	}{
		{28, 8, []int{3, 6, 9, 12, 16, 19, 22, 25}},
		{5, 8, []int{1, 2, 3, 4}},
		{9, 2, []int{3, 6}},
		{1, 8, nil},
		{40, 0, nil},
	} {
		if got := Probes(c.commits, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Probes(%d, %d) = %v, want %v", c.commits, c.n, got, c.want)
		}
	}
}

// HuntFall names the commits that undid a regression, in history's order:
// one fall, a fall split over two commits, and the range when the commit
// before the fall does not build.
func TestHuntFall(t *testing.T) {
	for _, c := range []struct {
		name    string
		commits int
		share   func(i int) float64 // of the regression at commit i: 1 at the peak (0), 0 at the end
		broken  int
		want    []int
		lo, hi  int
	}{
		{"one", 20, func(i int) float64 { return map[bool]float64{true: 1}[i < 13] }, 0, []int{13}, 12, 13},
		{"split", 20, func(i int) float64 {
			return map[bool]float64{true: 1, false: map[bool]float64{true: 0.5}[i < 15]}[i < 6]
		}, 0, []int{6, 15}, 0, 0},
		{"unplaced", 9, func(i int) float64 { return map[bool]float64{true: 1}[i < 4] }, 3, nil, 2, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := HuntFall(c.commits, 8, func(i int, at float64) (string, Step, error) {
				if i <= 0 || i >= c.commits {
					t.Fatalf("tested %d, outside 1 .. %d", i, c.commits-1)
				}
				if i == c.broken {
					return Skipped, Step{}, nil
				}
				s := c.share(i)
				step := Step{Share: s, Low: s, High: s, Exact: true}
				switch {
				case s > at:
					step.Decision = Carries
				case s < at:
					step.Decision = Clean
				default:
					step.Decision = Undecided
				}
				return step.Decision, step, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Commits, c.want) {
				t.Errorf("%s: commits %v, want %v (tests %+v)", f.Kind, f.Commits, c.want, f.Tests)
			}
			if c.want == nil && (f.Kind != Unplaced || f.Lo != c.lo || f.Hi != c.hi) {
				t.Errorf("%s in %d+1 .. %d, want undecided in %d+1 .. %d", f.Kind, f.Lo, f.Hi, c.lo, c.hi)
			}
			for _, x := range f.Tests {
				if x.Outcome != Skipped && x.Step.Share != c.share(x.Commit) {
					t.Errorf("test of %d recorded the share %v of another commit", x.Commit, x.Step.Share)
				}
			}
		})
	}
}

// Undone finds the last clean probe after one that carries, and the
// carrying probe before it with the largest share; undecided and skipped
// probes tell nothing, and a cost that only rises gives none.
func TestUndone(t *testing.T) {
	step := func(d string, share float64) Step { return Step{Decision: d, Share: share} }
	for _, c := range []struct {
		name        string
		steps       []Step
		peak, clean int
	}{
		{"one rise", []Step{step(Clean, 0), step(Clean, 0.1), step(Carries, 1), step(Carries, 0.9)}, -1, -1},
		{"rise, fall, rise", []Step{step(Clean, 0), step(Carries, 0.9), step(Carries, 1.1), step(Clean, 0), step(Carries, 1)}, 2, 3},
		{"undecided between", []Step{step(Carries, 1), step(Undecided, 0.5), step(Continue, 0.4), step(Clean, 0.1), step(Skipped, 0)}, 0, 3},
		{"two dips", []Step{step(Carries, 1), step(Clean, 0), step(Carries, 1.2), step(Clean, 0.1), step(Carries, 1)}, 2, 3},
		{"nothing decided", []Step{step(Undecided, 0.5), step(Skipped, 0)}, -1, -1},
	} {
		if peak, clean := Undone(c.steps); peak != c.peak || clean != c.clean {
			t.Errorf("%s: peak %d, clean %d; want %d, %d", c.name, peak, clean, c.peak, c.clean)
		}
	}
}

// The budget's shares add up to alpha: bad against good, the culprits'
// hunts (each search's tests at a half and at the quarters), the probes'
// verdicts and their steps on the culprits' costs, the undone hunts.
func TestBudgetAddsUp(t *testing.T) {
	b := Budget{Alpha: 0.05, Commits: 40, Extra: 2, Probes: 8}
	sum := b.Regression()
	for j := range MaxTargets {
		h := b.Culprit(j)
		tests := float64(b.PerSearch())
		if got := tests * (b.PerTest(h, 0.5) + b.PerTest(h, 0.25) + b.PerTest(h, 0.75)); math.Abs(got-h) > 1e-12 {
			t.Errorf("hunt %d: its tests spend %g of its %g", j, got, h)
		}
		sum += h
	}
	sum += float64(b.Probes) * (b.Probe() + MaxTargets*b.ProbeStep())
	sum += MaxUndone * 2 * b.Undone()
	if math.Abs(sum-b.Alpha) > 1e-12 {
		t.Errorf("the budget spends %g of alpha %g", sum, b.Alpha)
	}
}
