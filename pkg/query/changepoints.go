package query

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// changepoints answers a changepoints query.
func (e *Executor) changepoints(ctx context.Context, m Model, r Range) (Answer, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return Answer{}, err
	}
	cps, err := e.changePoints(ctx, m, builds)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{ChangePoints: cps, Builds: make([]string, len(builds)), Unit: frames.GrafanaUnit(unit)}
	for i, b := range builds {
		a.Builds[i] = b.Name
	}
	a.Frames = data.Frames{frames.ChangePoints(cps, a.Unit, a.Builds)}
	return a, nil
}

// changePoints detects the change points of the total and of every
// function above m.MinShare of the total in some build, over builds.
func (e *Executor) changePoints(ctx context.Context, m Model, builds []buildRuns) ([]evolution.ChangePoint, error) {
	names, series, err := e.functionSeries(ctx, builds, *m.MinShare)
	if err != nil {
		return nil, err
	}
	return detectChangePoints(m, builds, names, series), nil
}

// detectChangePoints finds the change points of series (functionSeries'
// answer) over builds.
func detectChangePoints(m Model, builds []buildRuns, names []string, series [][][]float64) []evolution.ChangePoint {
	found := stats.ChangePoints(series, stats.ChangeOptions{Alpha: *m.Alpha, MinChange: *m.MinChange})
	var out []evolution.ChangePoint
	for s, cps := range found {
		for k, c := range cps {
			b := builds[c.Index]
			commit := ""
			if len(b.runs) > 0 {
				commit = b.runs[0].Commit
			}
			cp := evolution.ChangePoint{Function: names[s], Build: b.Name, Previous: builds[c.Index-1].Name, Commit: commit, ChangePoint: c}
			if s > 0 && (c.Before == 0 || c.After == 0) {
				if cp.Moved = movedAt(series[0], cps, k, *m.Alpha); cp.Moved {
					cp.Significant = false
				}
			}
			out = append(out, cp)
		}
	}
	// Newest changes first, the largest first within a build: the order a
	// regressions table reads in.
	slices.SortStableFunc(out, func(a, b evolution.ChangePoint) int {
		if c := cmp.Compare(b.Index, a.Index); c != 0 {
			return c
		}
		return cmp.Compare(math.Abs(b.Change), math.Abs(a.Change))
	})
	return out
}

// movedAt says whether the function whose change points are cps appears
// (or vanishes) at cps[k] with work that moved rather than cost: the
// total (per-run values of each build) did not change by the function's
// step between the change points either side, by Welch's t at alpha (a
// function split off from another, a wrapper, a change of inlining or a
// rename, whose work the total already held). docs/CHANGEPOINTS.md.
func movedAt(total [][]float64, cps []stats.ChangePoint, k int, alpha float64) bool {
	c, lo, hi := cps[k], 0, len(total)
	if k > 0 {
		lo = cps[k-1].Index
	}
	if k+1 < len(cps) {
		hi = cps[k+1].Index
	}
	step := c.After - c.Before
	var x, y []float64
	for _, b := range total[c.Index:hi] {
		x = append(x, b...)
	}
	for _, b := range total[lo:c.Index] {
		for _, v := range b {
			y = append(y, v+step)
		}
	}
	w := stats.WelchTest(x, y)
	return w.P < alpha && w.Diff*step < 0
}

// functionSeries returns the per-run values of every build (runs in time
// order) for the total (first) and for each function whose per-run mean
// reaches minShare of the build's mean total in some build. A function's
// value in a run counts each stack holding it once, however often it
// recurs in the stack (loader.FunctionIndex). It reads one row per (run,
// function): the run functions table's sums (FunctionIndex.RunValues).
func (e *Executor) functionSeries(ctx context.Context, builds []buildRuns, minShare float64) ([]string, [][][]float64, error) {
	var runs []storage.Run
	for _, b := range builds {
		runs = append(runs, b.runs...)
	}
	x, err := loader.IndexFunctions(ctx, e.Store, e.Stacks, runs)
	if err != nil {
		return nil, nil, err
	}
	nf := len(x.Titles())
	// Run-major (values[run*nf+f]): a row adds to its run's block only.
	values := make([]float64, len(runs)*nf)
	err = x.RunValues(ctx, e.Store, runs, func(r int, f int32, v float64) { values[r*nf+int(f)] += v })
	if err != nil {
		return nil, nil, err
	}
	names, series := seriesOf(builds, runs, x.Titles(), values, minShare)
	return names, series, nil
}

// seriesOf is functionSeries' answer from the per-run values of every
// function (run-major, values[run*len(names)+f], runs in build order).
func seriesOf(builds []buildRuns, runs []storage.Run, names []string, values []float64, minShare float64) ([]string, [][][]float64) {
	nf := len(names)
	// The functions that reach minShare in some build, from their sums
	// per build.
	keep := make([]bool, nf)
	perBuild := make([]float64, nf)
	first := 0
	for _, b := range builds {
		clear(perBuild)
		var total float64
		for r := first; r < first+len(b.runs); r++ {
			total += float64(runs[r].Total)
			for f, v := range values[r*nf : (r+1)*nf] {
				perBuild[f] += v
			}
		}
		if len(b.runs) > 0 {
			for f, v := range perBuild {
				keep[f] = keep[f] || v >= minShare*total
			}
		}
		first += len(b.runs)
	}
	outNames := []string{evolution.TotalFunction}
	var kept []int
	for f, k := range keep {
		if k {
			outNames, kept = append(outNames, names[f]), append(kept, f)
		}
	}
	// One copy into series order (function, then run), for the change
	// points' and the cells' tests.
	n := len(runs)
	flat := make([]float64, (len(kept)+1)*n)
	for r, run := range runs {
		flat[r] = float64(run.Total)
		row := values[r*nf : (r+1)*nf]
		for i, f := range kept {
			flat[(i+1)*n+r] = row[f]
		}
	}
	series := make([][][]float64, len(kept)+1)
	for s := range series {
		perRun := flat[s*n : (s+1)*n]
		out := make([][]float64, len(builds))
		at := 0
		for i, b := range builds {
			out[i] = perRun[at : at+len(b.runs) : at+len(b.runs)]
			at += len(b.runs)
		}
		series[s] = out
	}
	return outNames, series
}

// reaches reports whether a function's per-run values (by build) reach
// share of the total's in some build.
func reaches(s, total [][]float64, share float64) bool {
	for i, b := range s {
		if len(b) > 0 && sum(b) >= share*sum(total[i]) {
			return true
		}
	}
	return false
}

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}
