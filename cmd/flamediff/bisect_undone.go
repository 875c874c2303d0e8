package main

import (
	"cmp"
	"errors"
	"fmt"
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
}

// undone probes --probes commits spread between good and bad for
// regressions bad does not carry (culprits of the probe against good that
// are not bad's), and hunts the rise and the fall of the largest
// bisect.MaxUndone of them, each from the probe where it was largest: the
// commit that made it (a hunt between good and that probe) and the one
// that undid it (a hunt between that probe and bad, in reverse). A
// regression that lived between two probes is not seen.
func (r *bisectRun) undone(good, bad string, commits []string, budget bisect.Budget) ([]bisectProbe, []bisectFound, error) {
	if budget.Probes == 0 || r.improvement {
		return nil, nil, nil
	}
	type seen struct {
		at      string // the probe where it was largest
		culprit verdict.Culprit
	}
	peaks := map[string]seen{}
	var probes []bisectProbe
	for _, i := range bisect.Probes(len(commits), budget.Probes) {
		c := commits[i-1]
		p := bisectProbe{Commit: c}
		if err := r.runs(min(2*r.batch, r.maxRuns), c); err != nil {
			var skip skipError
			if !errors.As(err, &skip) {
				return nil, nil, err
			}
			r.state.Skipped[c], p.Skipped = skip.Error(), skip.Error()
			fmt.Fprintf(r.log, "bisect: probe %s %s: skipped (%s)\n", short(c), r.subject(c), skip)
			probes = append(probes, p)
			if err := r.save(); err != nil {
				return nil, nil, err
			}
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
			if slices.Contains(r.changed, cu.Function) {
				continue
			}
			p.Regressions = append(p.Regressions, cu.Function)
			if peak, ok := peaks[cu.Function]; !ok || cu.Delta > peak.culprit.Delta {
				peaks[cu.Function] = seen{c, cu}
			}
		}
		fmt.Fprintf(r.log, "bisect: probe %s %s at %d runs: %d regressions bad does not carry %s\n",
			short(c), r.subject(c), p.Runs, len(p.Regressions), strings.Join(p.Regressions, ", "))
		probes = append(probes, p)
	}
	names := make([]string, 0, len(peaks))
	for name := range peaks {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(peaks[b].culprit.Delta, peaks[a].culprit.Delta) })
	var found []bisectFound
	for _, name := range names[:min(len(names), bisect.MaxUndone)] {
		peak := peaks[name]
		f, err := r.riseAndFall(good, bad, commits, peak.at, peak.culprit, budget)
		if err != nil {
			return nil, nil, err
		}
		found = append(found, f)
	}
	return probes, found, nil
}

// riseAndFall finds the commit that made culprit's regression, seen at
// commit peak, and the one that undid it before bad.
func (r *bisectRun) riseAndFall(good, bad string, commits []string, peak string, culprit verdict.Culprit, budget bisect.Budget) (bisectFound, error) {
	target := []string{culprit.Function}
	found := bisectFound{Culprit: &culprit, Kind: Undone, Peak: peak}
	fmt.Fprintf(r.log, "bisect: hunting the regression of %s seen at %s and undone before bad\n", culprit.Function, short(peak))
	// The peak is the searches' reference, as good and bad: at --max-runs.
	if err := r.runs(r.maxRuns, peak); err != nil {
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
