package query

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// FrameChangePoints names the changepoints query's frame (also the last
// frame of an evolution answer, for the matrix's cues).
const FrameChangePoints = "changepoints"

// TotalFunction names the whole profile's series in a changepoints answer.
const TotalFunction = "total"

// ChangePoint is one row of a changepoints answer.
type ChangePoint struct {
	// Function is a frame name, or TotalFunction.
	Function string
	// Build is the first build after the change, Previous the one before
	// it; Commit is Build's commit.
	Build, Previous, Commit string
	stats.ChangePoint
}

// changepoints answers a changepoints query.
func (e *Executor) changepoints(ctx context.Context, m Model, r Range) (data.Frames, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return nil, err
	}
	cps, err := e.changePoints(ctx, m, builds)
	if err != nil {
		return nil, err
	}
	f := changePointsFrame(cps, frames.GrafanaUnit(unit))
	names := make([]string, len(builds))
	for i, b := range builds {
		names[i] = b.Name
	}
	f.Meta.Custom = map[string]any{"builds": names}
	return data.Frames{f}, nil
}

// changePoints detects the change points of the total and of every
// function above m.MinShare of the total in some build, over builds.
func (e *Executor) changePoints(ctx context.Context, m Model, builds []buildRuns) ([]ChangePoint, error) {
	names, series, err := e.functionSeries(ctx, builds, *m.MinShare, nil)
	if err != nil {
		return nil, err
	}
	return detectChangePoints(m, builds, names, series), nil
}

// detectChangePoints finds the change points of series (functionSeries'
// answer) over builds.
func detectChangePoints(m Model, builds []buildRuns, names []string, series [][][]float64) []ChangePoint {
	found := stats.ChangePoints(series, stats.ChangeOptions{Alpha: *m.Alpha, MinChange: *m.MinChange})
	var out []ChangePoint
	for s, cps := range found {
		for _, c := range cps {
			b := builds[c.Index]
			commit := ""
			if len(b.runs) > 0 {
				commit = b.runs[0].Commit
			}
			out = append(out, ChangePoint{Function: names[s], Build: b.Name, Previous: builds[c.Index-1].Name, Commit: commit, ChangePoint: c})
		}
	}
	// Newest changes first, the largest first within a build: the order a
	// regressions table reads in.
	slices.SortStableFunc(out, func(a, b ChangePoint) int {
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
// recurs in the stack (functionIndex). It reads one row per (run, stack):
// the run stacks table's sums (Store.StackValues). x, if not nil,
// indexes the stacks of the builds' runs.
func (e *Executor) functionSeries(ctx context.Context, builds []buildRuns, minShare float64, x *functionIndex) ([]string, [][][]float64, error) {
	var runs []storage.Run
	for _, b := range builds {
		runs = append(runs, b.runs...)
	}
	var err error
	if x == nil {
		if x, err = e.indexFunctions(ctx, runs); err != nil {
			return nil, nil, err
		}
	}
	names := x.names
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
		at := stackCursor{x: x}
		err = e.Store.StackValues(ctx, groups, func(g int, hash uint64, value int64, _ uint64) error {
			k, err := at.find(hash)
			if err != nil {
				return err
			}
			for _, f := range x.frames(k) {
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
	outNames := []string{TotalFunction}
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

// changePointsFrame is the "changepoints" frame, one row per change point
// in the given order: function, build, previous (the build before),
// commit, before and after (per-run means, in unit), change, pValue,
// significant.
func changePointsFrame(cps []ChangePoint, unit string) *data.Frame {
	n := len(cps)
	function, build, previous, commit := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	before, after := make([]float64, n), make([]float64, n)
	change, pValue := make([]*float64, n), make([]float64, n)
	significant := make([]bool, n)
	for i, c := range cps {
		function[i], build[i], previous[i], commit[i] = c.Function, c.Build, c.Previous, c.Commit
		before[i], after[i], change[i] = c.Before, c.After, finiteOrNil(c.Change)
		pValue[i], significant[i] = c.PValue, c.Significant
	}
	amount := &data.FieldConfig{Unit: unit}
	f := data.NewFrame(FrameChangePoints,
		data.NewField("function", nil, function),
		data.NewField("build", nil, build),
		data.NewField("previous", nil, previous),
		data.NewField("commit", nil, commit),
		data.NewField("before", nil, before).SetConfig(amount),
		data.NewField("after", nil, after).SetConfig(amount),
		data.NewField("change", nil, change).SetConfig(&data.FieldConfig{Unit: "percentunit"}),
		data.NewField("pValue", nil, pValue),
		data.NewField("significant", nil, significant),
	)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeTable}
	return f
}
