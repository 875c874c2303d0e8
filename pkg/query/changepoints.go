package query

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stacks"
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
	names, series, err := e.functionSeries(ctx, builds, *m.MinShare, nil)
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
		for _, c := range cps {
			b := builds[c.Index]
			commit := ""
			if len(b.runs) > 0 {
				commit = b.runs[0].Commit
			}
			out = append(out, evolution.ChangePoint{Function: names[s], Build: b.Name, Previous: builds[c.Index-1].Name, Commit: commit, ChangePoint: c})
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

// functionSeries returns the per-run values of every build (runs in time
// order) for the total (first) and for each function whose per-run mean
// reaches minShare of the build's mean total in some build. A function's
// value in a run counts each stack holding it once, however often it
// recurs in the stack (stacks.FunctionIndex). It reads one row per (run, stack):
// the run stacks table's sums (Store.StackValues). x, if not nil,
// indexes the stacks of the builds' runs.
func (e *Executor) functionSeries(ctx context.Context, builds []buildRuns, minShare float64, x *stacks.FunctionIndex) ([]string, [][][]float64, error) {
	var runs []storage.Run
	for _, b := range builds {
		runs = append(runs, b.runs...)
	}
	var err error
	if x == nil {
		if x, err = stacks.IndexFunctions(ctx, e.Store, e.Stacks, runs); err != nil {
			return nil, nil, err
		}
	}
	names := x.Names()
	n := len(runs)
	values := make([]float64, len(names)*n) // function-major: values[f*n+run]
	// One read per build, a group per run: rows are summed as they stream
	// in, so the store's cap on the rows of one read (sized for readers
	// that hold them) need only fit a build's runs, not the series'.
	first := 0
	for _, b := range builds {
		groups := make([][]storage.Run, len(b.runs))
		for i, r := range b.runs {
			groups[i] = []storage.Run{r}
		}
		at := x.Cursor()
		err = e.Store.StackValues(ctx, groups, func(g int, hash uint64, value int64, _ uint64) error {
			k, err := at.Find(hash)
			if err != nil {
				return err
			}
			for _, f := range x.Frames(k) {
				if f >= 0 { // once per stack
					values[int(f)*n+first+g] += float64(value)
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		first += len(b.runs)
	}

	split := func(perRun []float64) [][]float64 {
		out := make([][]float64, len(builds))
		at := 0
		for i, b := range builds {
			out[i] = perRun[at : at+len(b.runs) : at+len(b.runs)]
			at += len(b.runs)
		}
		return out
	}
	totals := make([]float64, n)
	for i, r := range runs {
		totals[i] = float64(r.Total)
	}
	total := split(totals)
	outNames := []string{evolution.TotalFunction}
	series := [][][]float64{total}
	for f, name := range names {
		if s := split(values[f*n : (f+1)*n]); reaches(s, total, minShare) {
			outNames = append(outNames, name)
			series = append(series, s)
		}
	}
	return outNames, series, nil
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
