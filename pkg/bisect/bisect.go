// Package bisect finds the commit that made a performance regression: the
// statistics of one step (is this commit's cost like the good one's or like
// the bad one's?) and the search over the commits between good and bad,
// with the chance of naming a wrong commit bounded over the whole search
// (docs/STATISTICS.md, "Bisection").
//
// It is pure: the runner (cmd/flamediff/bisect.go) builds and benchmarks
// commits and feeds their per-run costs in; the search says which commit to
// test next, or the answer, from the outcomes so far.
package bisect

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/flamediff/flamediff/pkg/stats"
)

// Budget splits the search's error rate over the tests it may take, with
// weights fixed before any run (so that the union bound holds whatever
// the runs find): a quarter of Alpha to bad against good; half to the hunts
// of its culprits, at most MaxTargets (the largest a half of that, the next
// two a quarter each); a quarter to regressions undone before bad (Probes):
// a quarter of it to the probes' verdicts, an equal share each, a quarter
// to reading the hunted culprits' costs at the probes (ProbeStep, for a
// regression undone in the same function), and half to the hunts of at
// most MaxUndone of them, each a search of its rise and one of its fall. Within a hunt, half to the search of a half and a quarter to
// each of the searches of a quarter and three quarters; within a search,
// an equal share to each of its PerSearch tests.
type Budget struct {
	// Alpha bounds the chance of naming a wrong commit (or a regression
	// where there is none) over the whole search.
	Alpha float64
	// Commits is the number of candidates: the commits after good up to
	// and including bad.
	Commits int
	// Extra is the tests allowed a search beyond a clean bisection's, for
	// commits that are skipped or undecided and push the probes off the
	// middle.
	Extra int
	// Probes is the commits probed for regressions undone before bad
	// (0: none).
	Probes int
}

// MaxTargets is the most culprits of bad against good that are hunted.
const MaxTargets = 3

// MaxUndone is the most regressions undone before bad that are hunted.
const MaxUndone = 2

// PerSearch is the most tests of one search: ceil(log2(Commits)) steps
// of a clean bisection and Extra.
func (b Budget) PerSearch() int {
	steps := 0
	if b.Commits > 1 {
		steps = bits.Len(uint(b.Commits - 1)) // #nosec G115 -- Commits > 1 here: ceil(log2(Commits))
	}
	return steps + b.Extra
}

// Regression is the alpha of bad against good.
func (b Budget) Regression() float64 { return b.Alpha / 4 }

// Culprit is the alpha of the hunt of target (0-based, largest culprit
// first).
func (b Budget) Culprit(target int) float64 {
	if target == 0 {
		return b.Alpha / 4
	}
	return b.Alpha / 8
}

// Probe is the alpha of one probe's verdict (0 without probes).
func (b Budget) Probe() float64 {
	if b.Probes < 1 {
		return 0
	}
	return b.Alpha / 16 / float64(b.Probes)
}

// ProbeStep is the alpha of one step (Classify, one look) of one hunted
// culprit's cost at one probe (Undone).
func (b Budget) ProbeStep() float64 { return b.Probe() / MaxTargets }

// Undone is the alpha of the hunt of one rise or one fall of a
// regression undone before bad.
func (b Budget) Undone() float64 { return b.Alpha / 8 / MaxUndone / 2 }

// PerTest is the alpha of a test at share at (a half, or a quarter and
// three quarters) in a hunt of alpha hunt.
func (b Budget) PerTest(hunt, at float64) float64 {
	w := 0.25 // the quarters' searches
	if at == 0.5 {
		w = 0.5
	}
	return hunt * w / float64(max(b.PerSearch(), 1))
}

// Check rejects budgets no search can follow.
func (b Budget) Check() error {
	switch {
	case !(b.Alpha > 0 && b.Alpha < 1):
		return fmt.Errorf("alpha (%v) must be between 0 and 1", b.Alpha)
	case b.Commits < 1:
		return errors.New("there is no commit after good up to bad: bad must descend from good")
	case b.Extra < 0:
		return fmt.Errorf("extra tests (%d) must not be negative", b.Extra)
	case b.Probes < 0:
		return fmt.Errorf("probes (%d) must not be negative", b.Probes)
	}
	return nil
}

// Decisions of a step.
const (
	// Carries: the commit's cost is nearer the bad one's (it carries the
	// regression).
	Carries = "carries"
	// Clean: the commit's cost is nearer the good one's.
	Clean = "clean"
	// Continue: undecided, add runs.
	Continue = "continue"
	// Undecided: the step's maximum runs decided nothing.
	Undecided = "undecided"
)

// Step is one look of a commit's test.
type Step struct {
	Decision string `json:"decision"`
	// Runs is the commit's runs; Look is its look of Looks.
	Runs  int `json:"runs"`
	Look  int `json:"look"`
	Looks int `json:"looks"`
	// Alpha is what this look spends on each wrong decision.
	Alpha float64 `json:"alpha"`
	// Share is the commit's change against good as a share of the
	// regression (0: like good, 1: like bad), Low and High its bounds at
	// this look's level (the regression's own noise left out).
	Share float64 `json:"share"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// Exact says that no side's costs vary between runs.
	Exact bool   `json:"exact,omitempty"`
	Why   string `json:"why"`
}

// Classify is a look at a commit's per-run costs c against good's and
// bad's, by the plan's looks (Batch, MaxRuns) at the plan's Alpha for each
// wrong decision over all looks (the plan's Beta and MinBaseShare are not
// used): does the commit carry more than the share at (between 0 and 1;
// a half for the first search) of the regression? The test is of the
// contrast L = mean(c) - ((1-at) mean(good) + at mean(bad)), the commit's
// distance past that point of the regression: Carries when its one-sided
// lower bound at 1 - alpha_k is above 0, Clean when its upper bound is
// below 0. At a half, a commit exactly like good has L = -D/2 (D =
// mean(bad) - mean(good) > 0), one like bad +D/2, so each wrong decision
// needs the bound past 0 against its true sign: at most alpha_k a look,
// Alpha over the looks (linear spending, as stats.Plan). good and bad are
// fixed samples; their noise is in L's standard error.
func Classify(p stats.Plan, at float64, good, bad, c []float64) (Step, error) {
	if !(at > 0 && at < 1) {
		return Step{}, fmt.Errorf("bisect: the share tested (%v) must be between 0 and 1", at)
	}
	g, b, x := stats.Describe(good), stats.Describe(bad), stats.Describe(c)
	if g.N < 1 || b.N < 1 {
		return Step{}, errors.New("bisect: good and bad need runs")
	}
	d := b.Mean - g.Mean
	if !(d > 0) {
		return Step{}, fmt.Errorf("bisect: bad (%g) is not costlier than good (%g): no regression to look for", b.Mean, g.Mean)
	}
	k, err := p.Look(x.N)
	if err != nil {
		return Step{}, err
	}
	s := Step{Runs: x.N, Look: k, Looks: p.Looks()}
	s.Alpha, _ = p.Spent(k)
	last := x.N >= p.MaxRuns
	l := x.Mean - ((1-at)*g.Mean + at*b.Mean)
	s.Share = (x.Mean - g.Mean) / d
	s.Exact = spreadless(g) && spreadless(b) && spreadless(x)
	if s.Exact {
		s.Low, s.High = s.Share, s.Share
		switch {
		case l > 0:
			s.Decision = Carries
		case l < 0:
			s.Decision = Clean
		default:
			s.Decision = Undecided
		}
		s.Why = fmt.Sprintf("costs are exact (no run varies): the commit is %.0f%% of the way from good to bad.", 100*s.Share)
		return s, nil
	}
	if x.N < 2 || g.N < 2 || b.N < 2 {
		s.Decision, s.Low, s.High = Continue, math.Inf(-1), math.Inf(1)
		s.Why = "a spread needs at least 2 runs."
		if last {
			s.Decision = Undecided
		}
		return s, nil
	}
	// Welch-Satterthwaite for the contrast's three variance terms.
	terms := []struct {
		v float64
		n int
	}{{sq(x.StdDev) / float64(x.N), x.N}, {sq((1-at)*g.StdDev) / float64(g.N), g.N}, {sq(at*b.StdDev) / float64(b.N), b.N}}
	var v, den float64
	for _, t := range terms {
		v += t.v
		den += sq(t.v) / float64(t.n-1)
	}
	half := 0.0
	if v > 0 {
		half = stats.TQuantile(sq(v)/den, 1-s.Alpha) * math.Sqrt(v)
	}
	s.Low, s.High = (l-half)/d+at, (l+half)/d+at
	switch {
	case l-half > 0:
		s.Decision = Carries
		s.Why = fmt.Sprintf("the commit carries more than %.0f%% of the regression: %.0f%% of it, at least %.0f%% (look %d of %d, wrong under %.2g).",
			100*at, 100*s.Share, 100*s.Low, k, s.Looks, p.Alpha)
	case l+half < 0:
		s.Decision = Clean
		s.Why = fmt.Sprintf("the commit carries less than %.0f%% of the regression: %.0f%% of it, at most %.0f%% (look %d of %d, wrong under %.2g).",
			100*at, 100*s.Share, 100*s.High, k, s.Looks, p.Alpha)
	case last:
		s.Decision = Undecided
		s.Why = fmt.Sprintf("%d runs, the maximum, put the commit at %.0f%% of the regression (%.0f%% .. %.0f%%): neither side of %.0f%%.",
			x.N, 100*s.Share, 100*s.Low, 100*s.High, 100*at)
	default:
		s.Decision = Continue
		s.Why = fmt.Sprintf("%d runs put the commit at %.0f%% of the regression (%.0f%% .. %.0f%%): add runs.",
			x.N, 100*s.Share, 100*s.Low, 100*s.High)
	}
	return s, nil
}

func spreadless(s stats.Side) bool { return s.N >= 2 && s.StdDev == 0 }

func sq(v float64) float64 { return v * v }
