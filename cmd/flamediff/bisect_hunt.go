package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/bisect"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// The hunts of bad's culprits: each a search over the commits, its steps,
// and the commits it names where a user acts.

// hunts finds where bad's regression was made: each of its largest
// culprits' (or the run totals') hunt, and the regressions the probes saw
// undone before bad.
func (r *bisectRun) hunts(a *bisectAnswer, good, bad string, commits []string, budget bisect.Budget) error {
	// The steps' reference: good and bad at --max-runs each, so that
	// their noise does not bound the steps' (docs/BISECT.md). The
	// culprits are those of all these runs (the deciding look may have
	// been too early to name every one).
	if err := r.runs(r.maxRuns, good, bad); err != nil {
		return fmt.Errorf("good or bad cannot be benchmarked: %w", err)
	}
	b, m, err := r.change(good, bad, r.maxRuns, budget.Regression())
	if err != nil {
		return err
	}
	all, err := query.Judge{MinBaseShare: *r.minBaseShare}.Verdict(b, query.TreeOptions(b, m, r.rules))
	if err != nil {
		return err
	}
	reg := a.Regression
	if len(all.Regressions) >= len(reg.Regressions) {
		reg.Regressions = all.Regressions
	}
	r.culprits(all)
	var names []string
	for _, c := range reg.Regressions {
		names = append(names, fmt.Sprintf("%s %s", c.Function, verdict.Percent(float64(c.Delta))))
	}
	fmt.Fprintf(r.log, "bisect: culprits of %s at %d runs each: %s\n", r.sides(), r.maxRuns, strings.Join(names, ", "))
	probes, peaks, err := r.probe(good, commits, budget)
	if err != nil {
		return err
	}
	a.Probes = probes
	targets := []*verdict.Culprit{nil} // the run totals
	if len(reg.Regressions) > 0 {
		targets = targets[:0]
		for i := range reg.Regressions[:min(len(reg.Regressions), bisect.MaxTargets)] {
			targets = append(targets, &reg.Regressions[i])
		}
	}
	a.Result = "found"
	var same []peak // rises of the culprits' costs undone before bad's
	for j, culprit := range targets {
		found, earlier, err := r.hunt(j, culprit, good, commits, budget)
		if err != nil {
			return err
		}
		if earlier != nil {
			same = append(same, *earlier)
		}
		if found.Kind == bisect.Unplaced {
			a.Result = "undecided"
		}
		for _, c := range found.Commits {
			if a.First == "" || slices.Index(commits, c.Hash) < slices.Index(commits, a.First) {
				a.First = c.Hash
			}
		}
		a.Found = append(a.Found, found)
	}
	peaks = append(same, peaks...)
	undone, err := r.undone(good, bad, commits, peaks[:min(len(peaks), bisect.MaxUndone)], budget)
	a.Found = append(a.Found, undone...)
	return err
}

// undoneOnly probes a range whose bad carries no regression for
// regressions made and undone in it, and hunts those it sees, with good
// and bad as their references at --max-runs.
func (r *bisectRun) undoneOnly(a *bisectAnswer, good, bad string, commits []string, budget bisect.Budget) error {
	if budget.Probes == 0 || r.improvement {
		return nil
	}
	// The probes' reference is good, at least at the probes' runs.
	if err := r.runs(min(max(2*r.batch, r.have(good)), r.maxRuns), good); err != nil {
		return fmt.Errorf("good cannot be benchmarked: %w", err)
	}
	probes, peaks, err := r.probe(good, commits, budget)
	if err != nil {
		return err
	}
	a.Probes = probes
	if len(peaks) == 0 {
		return nil
	}
	if err := r.runs(r.maxRuns, good, bad); err != nil {
		return fmt.Errorf("good or bad cannot be benchmarked: %w", err)
	}
	undone, err := r.undone(good, bad, commits, peaks, budget)
	a.Found = append(a.Found, undone...)
	return err
}

// culprits records v's culprits: what bad regressed, and every function
// it changed (bisectRun.changed).
func (r *bisectRun) culprits(v *verdict.Verdict) {
	r.regressed, r.changed = nil, nil
	for _, c := range v.Regressions {
		r.regressed = append(r.regressed, c.Function)
	}
	r.changed = slices.Clone(r.regressed)
	for _, c := range v.Improvements {
		r.changed = append(r.changed, c.Function)
	}
}

// hunt finds the commits that made the regression of culprit (nil: of the
// run totals), the j-th of bad against good (bisect.Hunt), after the probe
// where an earlier rise of its cost fell back, if one did (sameUndone:
// that rise is returned, to be hunted as undone).
func (r *bisectRun) hunt(j int, culprit *verdict.Culprit, good string, commits []string, budget bisect.Budget) (bisectFound, *peak, error) {
	var target []string
	name := "the run totals"
	if culprit != nil {
		target, name = []string{culprit.Function}, culprit.Function
	}
	found := bisectFound{Culprit: culprit}
	bad := commits[len(commits)-1]
	earlier, err := r.sameUndone(culprit, good, bad, budget)
	if err != nil {
		return found, nil, err
	}
	list, before := commits, good
	if earlier != nil {
		k := slices.Index(commits, earlier.until)
		list, before, found.After = commits[k+1:], earlier.until, earlier.until
	}
	fmt.Fprintf(r.log, "bisect: hunting the regression of %s\n", name)
	f, err := r.search(bisect.Hunt, &found, list, good, bad, target, budget.Culprit(j), budget)
	if err != nil {
		return found, earlier, err
	}
	found.Kind, found.Why = f.Kind, f.Why
	for _, i := range f.Beyond() {
		found.Beyond = append(found.Beyond, list[i-1])
	}
	if f.Kind == bisect.Unplaced {
		found.Range = list[f.Lo:f.Hi]
		return found, earlier, nil
	}
	for _, i := range f.Commits {
		info, err := r.commit(list[i-1], parentIn(list, i-1, before), target, lastStep(f, i))
		if err != nil {
			return found, earlier, err
		}
		found.Commits = append(found.Commits, *info)
	}
	return found, earlier, nil
}

// search is hunt (bisect.Hunt or bisect.HuntFall) over list, its commit i
// list[i-1], on target's cost between low's (without the regression) and
// high's (with it), at alpha over the hunt; its steps go to found.
func (r *bisectRun) search(hunt func(int, int, bisect.Tester) (bisect.Finding, error), found *bisectFound, list []string, low, high string,
	target []string, alpha float64, budget bisect.Budget) (bisect.Finding, error) {
	return hunt(len(list), budget.PerSearch(), func(i int, at float64) (string, bisect.Step, error) {
		c := list[i-1]
		plan := stats.Plan{Batch: r.batch, MaxRuns: r.maxRuns, Alpha: budget.PerTest(alpha, at)}
		step, skip, err := r.test(c, low, high, target, plan, at)
		bs := bisectStep{Commit: c, Subject: r.subject(c), At: at, Outcome: step.Decision, Step: step, Skipped: skip}
		if skip != "" {
			bs.Outcome = bisect.Skipped
			fmt.Fprintf(r.log, "bisect: %s %s: skipped (%s)\n", short(c), bs.Subject, skip)
		}
		found.Steps = append(found.Steps, bs)
		return bs.Outcome, step, err
	})
}

// lastStep is commit i's last test in f that was not skipped (nil: none).
func lastStep(f bisect.Finding, i int) *bisect.Step {
	for k := len(f.Tests) - 1; k >= 0; k-- {
		if f.Tests[k].Commit == i && f.Tests[k].Outcome != bisect.Skipped {
			return &f.Tests[k].Step
		}
	}
	return nil
}

// parentIn is the commit before commits[k]: the one before it in
// commits, or good for the first.
func parentIn(commits []string, k int, good string) string {
	if k > 0 {
		return commits[k-1]
	}
	return good
}

// commit is commit c as found, with its share of the regression and the
// functions it changed against parent (changes --git-diff), the target's
// among them or not.
func (r *bisectRun) commit(c, parent string, target []string, share *bisect.Step) (*bisectCommit, error) {
	info, err := r.info(c)
	if err != nil {
		return nil, err
	}
	info.Share = share
	ch, err := changes.FromGitDiff(r.clone, parent, c)
	if err != nil {
		fmt.Fprintf(r.log, "bisect: the functions %s changed are unknown: %v\n", short(c), err)
		return info, nil
	}
	info.Changed = &ch
	for _, list := range [][]string{ch.Modified, ch.Added, ch.Removed} {
		for _, t := range target {
			info.Matched = info.Matched || slices.Contains(list, t)
		}
	}
	return info, nil
}
