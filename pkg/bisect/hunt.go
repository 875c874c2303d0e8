package bisect

import (
	"fmt"
	"slices"
)

// Searches is the most searches a hunt makes for one regression: the
// crossing of a half, then, when a commit sits between good and bad, those
// of a quarter and of three quarters.
const Searches = 3

// Tester tests commit i (1 .. Commits-1) at share at of the regression
// (Classify): its outcome (Carries, Clean, Undecided or Skipped) and its
// last look.
type Tester func(i int, at float64) (string, Step, error)

// Tested is one test of a hunt.
type Tested struct {
	Commit  int     `json:"commit"`
	At      float64 `json:"at"`
	Outcome string  `json:"outcome"`
	Step    Step    `json:"step"`
}

// Kinds of a Finding.
const (
	// One: one commit carries the regression.
	One = "one"
	// Split: two commits carry it between them, the first part of it and
	// the second the rest.
	Split = "split"
	// Unplaced: the searches ended without naming the commits.
	Unplaced = "undecided"
)

// Finding is what a hunt found of one regression.
type Finding struct {
	Kind string `json:"kind"`
	// Commits are the commit (One) or the two commits (Split).
	Commits []int `json:"commits,omitempty"`
	// Lo and Hi bound the commits that made it (Unplaced): they are in
	// Lo+1 .. Hi.
	Lo  int    `json:"lo"`
	Hi  int    `json:"hi"`
	Why string `json:"why,omitempty"`
	// Tests are the tests the hunt made, in order.
	Tests []Tested `json:"tests"`
}

// Hunt finds the commits that made one regression between commit 0 (good)
// and Commits (bad), each search taking at most tests tests. It first
// searches the crossing of half of the regression (one commit that made
// it all crosses every share). When that search ends undecided because a
// commit sits clearly between good and bad (its interval inside 0 .. 1:
// it carries part of the regression), it searches the crossings of a
// quarter and of three quarters: one commit for both is the commit, two
// are a split regression, each carrying part. The decisions of the first
// search bound the others (a commit past a half is past a quarter; one
// short of a half is short of three quarters), at no further test.
func Hunt(commits, tests int, test Tester) (Finding, error) {
	var f Finding
	half := map[int]string{}
	steps := map[int]Step{}
	a, err := f.search(commits, tests, 0.5, half, steps, test)
	if err != nil {
		return f, err
	}
	if a.First != 0 {
		f.Kind, f.Commits, f.Lo, f.Hi = One, []int{a.First}, a.Lo, a.Hi
		return f, nil
	}
	f.Kind, f.Lo, f.Hi, f.Why = Unplaced, a.Lo, a.Hi, a.Why
	between := false
	for i, o := range half {
		if s := steps[i]; o == Undecided && i > a.Lo && i < a.Hi && s.Low > 0 && s.High < 1 {
			between = true
		}
	}
	if !between {
		return f, nil
	}
	quarter, three := map[int]string{}, map[int]string{}
	for i, o := range half {
		switch o {
		case Carries:
			quarter[i] = Carries
		case Clean:
			three[i] = Clean
		case Skipped:
			quarter[i], three[i] = Skipped, Skipped
		}
	}
	q, err := f.search(commits, tests+decided(quarter), 0.25, quarter, steps, test)
	if err != nil {
		return f, err
	}
	t, err := f.search(commits, tests+decided(three), 0.75, three, steps, test)
	if err != nil {
		return f, err
	}
	switch {
	case q.First == 0 || t.First == 0:
		f.Why = fmt.Sprintf("a commit carries part of the regression, and the searches of a quarter and three quarters of it ended undecided (%s)",
			firstOf(q.Why, t.Why))
	case q.First == t.First:
		f.Kind, f.Commits, f.Why = One, []int{q.First}, ""
	case q.First < t.First:
		f.Kind, f.Commits, f.Why = Split, []int{q.First, t.First}, ""
	default:
		f.Why = "the commit past three quarters of the regression comes before the one past a quarter: the cost went up and down between them"
	}
	return f, nil
}

// search runs one search at share at from the outcomes given, recording
// its tests; steps keeps each commit's last look (for its share).
func (f *Finding) search(commits, tests int, at float64, outcomes map[int]string, steps map[int]Step, test Tester) (Answer, error) {
	s := Search{Commits: commits, Tests: tests, Outcomes: outcomes}
	for {
		a := s.Next()
		if a.Next == 0 {
			return a, nil
		}
		o, step, err := test(a.Next, at)
		if err != nil {
			return a, err
		}
		outcomes[a.Next] = o
		if o != Skipped {
			steps[a.Next] = step
		}
		f.Tests = append(f.Tests, Tested{Commit: a.Next, At: at, Outcome: o, Step: step})
	}
}

// Beyond is the commits a hunt found clearly outside good .. bad: past bad
// (the lower bound of their share above 1) or before good (the upper bound
// under 0). A hunt assumes the cost rises once or twice from good's to
// bad's; such a commit says it rose further, or fell, and came back
// between good and bad (a change undone later), so the commits named
// deserve a look at the steps.
func (f Finding) Beyond() []int {
	var out []int
	for _, t := range f.Tests {
		if t.Outcome != Skipped && (t.Step.Low > 1 || t.Step.High < 0) && !slices.Contains(out, t.Commit) {
			out = append(out, t.Commit)
		}
	}
	return out
}

// decided is the outcomes that count as tests in a Search.
func decided(outcomes map[int]string) int {
	n := 0
	for _, o := range outcomes {
		if o != Skipped {
			n++
		}
	}
	return n
}

func firstOf(whys ...string) string {
	for _, w := range whys {
		if w != "" {
			return w
		}
	}
	return ""
}
