package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/bisect"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Undone is the kind of a regression a later commit undid before bad: it
// is not in bad against good, so no hunt of bad's culprits follows it.
const Undone = "undone"

// bisectProbe is one commit probed for regressions undone before bad.
type bisectProbe struct {
	Commit string `json:"commit"`
	Runs   int    `json:"runs"`
	// Regressions are the culprits of the probe against good that bad
	// does not carry.
	Regressions []string `json:"regressions"`
	Skipped     string   `json:"skipped,omitempty"`
	// culprits are the probe's regressions against good, bad's culprits
	// among them.
	culprits map[string]verdict.Culprit
}

// peak is a regression bad does not carry, at the probe where it was
// largest, undone before bad or before the probe until.
type peak struct {
	at, until string
	culprit   verdict.Culprit
}

// probe probes --probes commits spread between good and bad for
// regressions bad does not carry (culprits of the probe against good that
// bad did not regress; one bad improved counts): regressions a later
// commit undid. It returns the probes and the largest bisect.MaxUndone
// regressions, each at the probe where it was largest. A regression that
// lived between two probes is not seen.
func (r *bisectRun) probe(good string, commits []string, budget bisect.Budget) ([]bisectProbe, []peak, error) {
	if budget.Probes == 0 || r.improvement {
		return nil, nil, nil
	}
	peaks := map[string]peak{}
	var probes []bisectProbe
	for _, i := range bisect.Probes(len(commits), budget.Probes) {
		c := commits[i-1]
		p := bisectProbe{Commit: c, culprits: map[string]verdict.Culprit{}}
		if err := r.runs(min(2*r.batch, r.maxRuns), c); err != nil {
			if p.Skipped, err = r.skipped(c, err); err != nil {
				return nil, nil, err
			}
			fmt.Fprintf(r.log, "bisect: probe %s %s: skipped (%s)\n", short(c), r.subject(c), p.Skipped)
			probes = append(probes, p)
			continue
		}
		p.Runs = r.have(c)
		b, m, err := r.load(good, r.have(good), c, p.Runs, budget.Probe())
		if err != nil {
			return nil, nil, err
		}
		// Shares of each run's total: a probe runs long after good, and a
		// machine that got slower meanwhile slows every function (absolute
		// costs named the run totals and whole programs' functions).
		m.Normalize = "relative"
		v, err := query.Judge{MinBaseShare: *r.minBaseShare}.Verdict(b, query.TreeOptions(b, m, r.rules))
		if err != nil {
			return nil, nil, err
		}
		for _, cu := range v.Regressions {
			p.culprits[cu.Function] = cu
			// The gate's culprits (verdict.Verdict's failing ones): a
			// function, by the threshold or more, that bad does not carry.
			if cu.Root() || float64(cu.Delta) < *r.minBaseShare || slices.Contains(r.regressed, cu.Function) {
				continue
			}
			p.Regressions = append(p.Regressions, cu.Function)
			if seen, ok := peaks[cu.Function]; !ok || cu.Delta > seen.culprit.Delta {
				peaks[cu.Function] = peak{at: c, culprit: cu}
			}
		}
		fmt.Fprintf(r.log, "bisect: probe %s %s at %d runs: %d regressions bad does not carry %s\n",
			short(c), r.subject(c), p.Runs, len(p.Regressions), strings.Join(p.Regressions, ", "))
		probes = append(probes, p)
	}
	r.probed = probes
	out := slices.Collect(maps.Values(peaks))
	slices.SortFunc(out, func(a, b peak) int {
		return cmp.Or(cmp.Compare(b.culprit.Delta, a.culprit.Delta), strings.Compare(a.culprit.Function, b.culprit.Function))
	})
	return probes, out[:min(len(out), bisect.MaxUndone)], nil
}

// sameUndone reads culprit's cost at the probes (bisect.Undone), each
// tested at a half of its regression as a step is, at the budget's
// ProbeStep: a probe that carries it before a later one that is clean
// says that the cost rose and fell back before bad's regression was made,
// and a hunt over every commit could end at that earlier rise. It returns
// that rise's peak, undone by the clean probe (until); nil when the cost
// never fell back.
func (r *bisectRun) sameUndone(culprit *verdict.Culprit, good, bad string, budget bisect.Budget) (*peak, error) {
	if culprit == nil || len(r.probed) == 0 {
		return nil, nil
	}
	target := []string{culprit.Function}
	plan := stats.Plan{Batch: r.batch, MaxRuns: r.maxRuns, Alpha: budget.ProbeStep()}
	var steps []bisect.Step
	var at []string
	fmt.Fprintf(r.log, "bisect: reading %s's cost at the probes\n", culprit.Function)
	for _, p := range r.probed {
		if p.Skipped != "" {
			continue
		}
		step, skip, err := r.test(p.Commit, good, bad, target, plan, 0.5)
		if err != nil {
			return nil, err
		}
		if skip == "" {
			steps, at = append(steps, step), append(at, p.Commit)
		}
	}
	k, clean := bisect.Undone(steps)
	if clean < 0 {
		return nil, nil
	}
	fmt.Fprintf(r.log, "bisect: %s's cost rose by %s and fell back by %s: its regression in bad is hunted after %s\n",
		culprit.Function, short(at[k]), short(at[clean]), short(at[clean]))
	p := peak{at: at[k], until: at[clean], culprit: *culprit}
	for _, probe := range r.probed {
		if c, ok := probe.culprits[culprit.Function]; ok && probe.Commit == at[k] {
			p.culprit = c
		}
	}
	return &p, nil
}

// undone hunts each peak's rise and fall (riseAndFall), the fall before
// bad or before the probe where it was seen undone.
func (r *bisectRun) undone(good, bad string, commits []string, peaks []peak, budget bisect.Budget) ([]bisectFound, error) {
	var found []bisectFound
	for _, p := range peaks {
		list, low := commits, bad
		if p.until != "" {
			list, low = commits[:slices.Index(commits, p.until)+1], p.until
		}
		f, err := r.riseAndFall(good, low, list, p.at, p.culprit, budget)
		if err != nil {
			return nil, err
		}
		found = append(found, f)
	}
	return found, nil
}

// riseAndFall finds the commit that made culprit's regression, seen at
// commit peak, and the one that undid it before bad, the last of commits
// (bad, or a probe where it was seen undone).
func (r *bisectRun) riseAndFall(good, bad string, commits []string, peak string, culprit verdict.Culprit, budget bisect.Budget) (bisectFound, error) {
	target := []string{culprit.Function}
	found := bisectFound{Culprit: &culprit, Kind: Undone, Peak: peak}
	fmt.Fprintf(r.log, "bisect: hunting the regression of %s seen at %s and undone before %s\n", culprit.Function, short(peak), short(bad))
	// The peak is the searches' reference, as good and bad: at --max-runs.
	if err := r.runs(r.maxRuns, peak, bad); err != nil {
		return found, err
	}
	for _, low := range []string{good, bad} {
		lowCost, peakCost, err := r.costs(low, r.have(low), peak, r.have(peak), target)
		if err != nil {
			return found, err
		}
		if !(stats.Describe(peakCost).Mean > stats.Describe(lowCost).Mean) {
			found.Why = fmt.Sprintf("at --max-runs %s costs no more at %s than at %s", culprit.Function, short(peak), short(low))
			return found, nil
		}
	}
	k := slices.Index(commits, peak)
	rise, err := r.search(bisect.Hunt, &found, commits[:k+1], good, peak, target, budget.Undone(), budget)
	if err != nil {
		return found, err
	}
	after := commits[k+1:] // up to bad
	fall, err := r.search(bisect.HuntFall, &found, after, bad, peak, target, budget.Undone(), budget)
	if err != nil {
		return found, err
	}
	var whys []string
	if rise.Kind == bisect.Unplaced {
		found.Range = commits[rise.Lo:rise.Hi]
		whys = append(whys, "where it was made: "+rise.Why)
	}
	if fall.Kind == bisect.Unplaced {
		found.UndoneRange = after[fall.Lo:fall.Hi]
		whys = append(whys, "where it was undone: "+fall.Why)
	}
	for _, i := range rise.Commits {
		info, err := r.commit(commits[i-1], parentIn(commits, i-1, good), target, lastStep(rise, i))
		if err != nil {
			return found, err
		}
		found.Commits = append(found.Commits, *info)
	}
	for _, i := range fall.Commits {
		info, err := r.commit(after[i-1], parentIn(after, i-1, peak), target, nil)
		if err != nil {
			return found, err
		}
		found.Undone = append(found.Undone, *info)
	}
	found.Why = strings.Join(whys, "; ")
	return found, nil
}
