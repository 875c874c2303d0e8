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

// Budget splits the search's error rate over the tests it may take.
type Budget struct {
	// Alpha bounds the chance of naming a wrong commit (or a regression
	// where there is none) over the whole search.
	Alpha float64
	// Commits is the number of candidates: the commits after good up to
	// and including bad.
	Commits int
	// Extra is the tests allowed beyond a clean bisection's, for commits
	// that are skipped or undecided and push the probes off the middle.
	Extra int
}

// Tests is the most tests the search takes: the regression's own test
// (bad against good), ceil(log2(Commits)) steps of a clean bisection and
// Extra.
func (b Budget) Tests() int {
	steps := 0
	if b.Commits > 1 {
		steps = bits.Len(uint(b.Commits - 1)) // ceil(log2(Commits))
	}
	return 1 + steps + b.Extra
}

// PerTest is each test's share of Alpha (Bonferroni over Tests).
func (b Budget) PerTest() float64 { return b.Alpha / float64(b.Tests()) }

// Check rejects budgets no search can follow.
func (b Budget) Check() error {
	switch {
	case !(b.Alpha > 0 && b.Alpha < 1):
		return fmt.Errorf("alpha (%v) must be between 0 and 1", b.Alpha)
	case b.Commits < 1:
		return errors.New("there is no commit after good up to bad: bad must descend from good")
	case b.Extra < 0:
		return fmt.Errorf("extra steps (%d) must not be negative", b.Extra)
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
// used). The test is of the contrast L = mean(c) - (mean(good) +
// mean(bad))/2, the commit's distance past the midpoint of the regression:
// Carries when its one-sided lower bound at 1 - alpha_k is above 0, Clean
// when its upper bound is below 0. A commit exactly like good has L =
// -D/2 (D = mean(bad) - mean(good) > 0), one like bad +D/2, so each wrong
// decision needs the bound past 0 against its true sign: at most alpha_k
// a look, Alpha over the looks (linear spending, as stats.Plan). good and
// bad are fixed samples; their noise is in L's standard error.
func Classify(p stats.Plan, good, bad, c []float64) (Step, error) {
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
	l := x.Mean - (g.Mean+b.Mean)/2
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
	}{{sq(x.StdDev) / float64(x.N), x.N}, {sq(g.StdDev) / float64(4*g.N), g.N}, {sq(b.StdDev) / float64(4*b.N), b.N}}
	var v, den float64
	for _, t := range terms {
		v += t.v
		den += sq(t.v) / float64(t.n-1)
	}
	half := 0.0
	if v > 0 {
		half = stats.TQuantile(sq(v)/den, 1-s.Alpha) * math.Sqrt(v)
	}
	s.Low, s.High = (l-half)/d+0.5, (l+half)/d+0.5
	switch {
	case l-half > 0:
		s.Decision = Carries
		s.Why = fmt.Sprintf("the commit carries the regression: %.0f%% of it, at least %.0f%% (look %d of %d, wrong under %.2g).",
			100*s.Share, 100*s.Low, k, s.Looks, p.Alpha)
	case l+half < 0:
		s.Decision = Clean
		s.Why = fmt.Sprintf("the commit does not carry the regression: %.0f%% of it, at most %.0f%% (look %d of %d, wrong under %.2g).",
			100*s.Share, 100*s.High, k, s.Looks, p.Alpha)
	case last:
		s.Decision = Undecided
		s.Why = fmt.Sprintf("%d runs, the maximum, put the commit at %.0f%% of the regression (%.0f%% .. %.0f%%): neither side of half.",
			x.N, 100*s.Share, 100*s.Low, 100*s.High)
	default:
		s.Decision = Continue
		s.Why = fmt.Sprintf("%d runs put the commit at %.0f%% of the regression (%.0f%% .. %.0f%%): add runs.",
			x.N, 100*s.Share, 100*s.Low, 100*s.High)
	}
	return s, nil
}

func spreadless(s stats.Side) bool { return s.N >= 2 && s.StdDev == 0 }

func sq(v float64) float64 { return v * v }
