package bisect

import (
	"fmt"
	"math"
	"slices"
)

// Skipped is the outcome of a commit that does not build or whose
// benchmark fails: it tells nothing, as `git bisect skip`.
const Skipped = "skipped"

// Search is a bisection over commits 0..Commits in order: 0 is good (clean),
// Commits is bad (carries the regression), and Outcomes holds what the
// commits tested so far were found to be (Carries, Clean, Undecided or
// Skipped). It is a value: the outcomes are the whole state, so a search
// resumes from them.
type Search struct {
	Commits int
	// Tests is the most commits the search tests (a skipped commit is not a
	// test: it spent no alpha).
	Tests    int
	Outcomes map[int]string
}

// Answer is where a search stands.
type Answer struct {
	// Next is the commit to test next; 0 when the search is over.
	Next int
	// First is the first commit that carries the regression; 0 when the
	// search ended without naming one.
	First int
	// Lo and Hi bound the first bad commit: it is in Lo+1 .. Hi (Lo clean,
	// Hi carries).
	Lo, Hi int
	// Why says why the search ended without naming a commit.
	Why string
}

// Next is the commit to test next, or the answer: the untested commit
// nearest the middle of the commits between the last clean one and the
// first that carries the regression (the lower of two at the same
// distance). It ends with the first bad commit when the two are adjacent,
// and with a range when every commit between them is skipped or
// undecided, or when the tests are spent.
func (s Search) Next() Answer {
	hi := s.Commits
	for i, o := range s.Outcomes {
		if o == Carries && i > 0 && i < hi {
			hi = i
		}
	}
	lo, tests := 0, 0
	for i, o := range s.Outcomes {
		if o == Clean && i > lo && i < hi {
			lo = i
		}
		if o == Carries || o == Clean || o == Undecided {
			tests++
		}
	}
	a := Answer{Lo: lo, Hi: hi}
	if hi == lo+1 {
		a.First = hi
		return a
	}
	mid := lo + (hi-lo)/2
	for d := 0; d < hi-lo; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && s.Outcomes[i] == "" && a.Next == 0 {
				a.Next = i
			}
		}
	}
	switch {
	case a.Next == 0:
		a.Why = fmt.Sprintf("the %d commits before the one that carries the regression are skipped or undecided", hi-lo-1)
	case tests >= s.Tests:
		a.Next = 0
		a.Why = fmt.Sprintf("the search's %d tests are spent", s.Tests)
	}
	return a
}

// Probes are n commits spread evenly over 1 .. commits-1 (bad, whose
// culprits are known, left out), each once: where a search looks for
// regressions a later commit undid before bad.
func Probes(commits, n int) []int {
	var out []int
	for k := 1; k <= n; k++ {
		i := int(math.Round(float64(k*commits) / float64(n+1)))
		if i >= 1 && i < commits && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// Undone reads the probes' steps on one culprit's cost at a half of bad's
// regression, in commit order (Skipped and undecided steps tell nothing):
// a probe that carries it before a later probe that is clean says the cost
// rose and fell back before bad's regression was made, and a hunt over
// every commit would end at the earlier rise when its midpoint fell inside
// it. It returns the index in steps of the last clean probe after a
// carrying one (bad's regression was made after it) and of the carrying
// probe before it with the largest share (the peak of the regression it
// undid); -1, -1 when the cost never falls back. A wrong clean decision
// past the true rise is the only way it misleads a hunt: at most its
// step's alpha (Budget.ProbeStep).
func Undone(steps []Step) (peak, clean int) {
	peak, clean = -1, -1
	carried := -1
	for i, s := range steps {
		switch s.Decision {
		case Carries:
			if carried < 0 || s.Share > steps[carried].Share {
				carried = i
			}
		case Clean:
			if carried >= 0 {
				peak, clean = carried, i
			}
		}
	}
	return peak, clean
}
