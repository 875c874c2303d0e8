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
// it all crosses every share), then checks that the commit it names is
// the whole step (the commit before it short of a quarter, the commit past
// three quarters). When the check fails, or a commit of that search ends
// undecided clearly between good and bad (partial: it carries part of
// the regression; the search stops there), it searches the crossings of a
// quarter and of three quarters: one commit for both is the commit, two
// are a split regression, each carrying part. The decisions of the first
// search bound the others (a commit past a half is past a quarter; one
// short of a half is short of three quarters), at no further test.
func Hunt(commits, tests int, test Tester) (Finding, error) {
	var f Finding
	half := map[int]string{}
	steps := map[int]Step{}
	a, split, err := f.searchUntil(commits, tests, 0.5, half, steps, test, func(o string, s Step) bool { return o == Undecided && partial(s) })
	if err != nil {
		return f, err
	}
	quarter, three := map[int]string{}, map[int]string{}
	if a.First != 0 {
		// The step must be whole: the commit before it not past a quarter,
		// the commit itself not short of three quarters. A commit carrying
		// half of a split sits on the midpoint, where noise (or a half
		// that costs a little more than half) can decide it either way;
		// these tests catch it from a quarter away, or, undecided, by an
		// interval an eighth of the regression clear of good (before) or
		// of bad (the commit). Anything less is no evidence of a split:
		// noise, or a refactor that moves a little of the function's cost,
		// leaves an interval so.
		if before := a.First - 1; before > 0 {
			if quarter[before], err = f.test(before, 0.25, steps, test); err != nil {
				return f, err
			}
		}
		if a.First < commits {
			if three[a.First], err = f.test(a.First, 0.75, steps, test); err != nil {
				return f, err
			}
		}
		partBefore := quarter[a.First-1] == Carries || quarter[a.First-1] == Undecided && steps[a.First-1].Low > margin
		partHere := three[a.First] == Clean || three[a.First] == Undecided && steps[a.First].High < 1-margin
		if !partBefore && !partHere {
			f.Kind, f.Commits, f.Lo, f.Hi = One, []int{a.First}, a.Lo, a.Hi
			return f, nil
		}
		split = true
	}
	f.Kind, f.Lo, f.Hi, f.Why = Unplaced, a.Lo, a.Hi, a.Why
	if !split {
		return f, nil
	}
	bounded := func(outcomes map[int]string, at string) int {
		n := 0
		for i, o := range half {
			if _, tested := outcomes[i]; tested {
				continue
			}
			switch {
			case o == at:
				outcomes[i] = o
				n++
			case o == Skipped:
				outcomes[i] = Skipped
			}
		}
		return n
	}
	q, err := f.search(commits, tests+bounded(quarter, Carries), 0.25, quarter, steps, test)
	if err != nil {
		return f, err
	}
	t, err := f.search(commits, tests+bounded(three, Clean), 0.75, three, steps, test)
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

// HuntFall finds the commits that undid a regression between commit 0
// (the peak, where it is) and commits (where it is gone, as in good): Hunt
// run backwards from commits, the gone end playing good. test and the
// Finding speak of commits in history's order: its Commits are the first
// commits without the regression (one, or two that undid it between
// them), and they lie in Lo+1 .. Hi when it is Unplaced.
func HuntFall(commits, tests int, test Tester) (Finding, error) {
	f, err := Hunt(commits, tests, func(j int, at float64) (string, Step, error) { return test(commits-j, at) })
	// Backwards, commit j is commits-j: a fall between j-1 (gone) and j
	// (there) is made by commits-j+1.
	for k := range f.Commits {
		f.Commits[k] = commits - f.Commits[k] + 1
	}
	slices.Sort(f.Commits)
	f.Lo, f.Hi = commits-f.Hi, commits-f.Lo
	for k := range f.Tests {
		f.Tests[k].Commit = commits - f.Tests[k].Commit
	}
	return f, err
}

// search runs one search at share at from the outcomes given, recording
// its tests; steps keeps each commit's last look (for its share).
func (f *Finding) search(commits, tests int, at float64, outcomes map[int]string, steps map[int]Step, test Tester) (Answer, error) {
	a, _, err := f.searchUntil(commits, tests, at, outcomes, steps, test, func(string, Step) bool { return false })
	return a, err
}

// searchUntil is search, stopped (true) after the first test stop holds
// for, with the answer as it stood before that test.
func (f *Finding) searchUntil(commits, tests int, at float64, outcomes map[int]string, steps map[int]Step, test Tester,
	stop func(string, Step) bool) (Answer, bool, error) {
	s := Search{Commits: commits, Tests: tests, Outcomes: outcomes}
	for {
		a := s.Next()
		if a.Next == 0 {
			return a, false, nil
		}
		o, err := f.test(a.Next, at, steps, test)
		if err != nil {
			return a, false, err
		}
		outcomes[a.Next] = o
		if stop(o, steps[a.Next]) {
			a.Next, a.Why = 0, fmt.Sprintf("commit %d carries part of the regression", a.Next)
			return a, true, nil
		}
	}
}

// margin is how far an undecided interval must lie from good or bad to
// say that a commit carries part of a regression: an eighth of it.
const margin = 1.0 / 8

// partial says that a step's interval lies clearly between good and bad
// (an eighth of the regression from each): the commit carries part of it.
func partial(s Step) bool { return s.Low > margin && s.High < 1-margin }

// test tests commit i at share at, recording the test and the commit's
// last look.
func (f *Finding) test(i int, at float64, steps map[int]Step, test Tester) (string, error) {
	o, step, err := test(i, at)
	if err != nil {
		return "", err
	}
	if o != Skipped {
		steps[i] = step
	}
	f.Tests = append(f.Tests, Tested{Commit: i, At: at, Outcome: o, Step: step})
	return o, nil
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

func firstOf(whys ...string) string {
	for _, w := range whys {
		if w != "" {
			return w
		}
	}
	return ""
}
