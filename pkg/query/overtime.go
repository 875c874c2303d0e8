package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stacks"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// BaselinePrevious as a timeseries baseline compares every build with the
// one before it.
const BaselinePrevious = "previous"

// ErrUnknownFunction means a timeseries names a function no stack has.
var ErrUnknownFunction = errors.New("no samples of function")

// buildRuns is one build with its selected runs, in time order.
type buildRuns struct {
	storage.Build
	runs []storage.Run
}

// overTime lists the builds of an over-time query with their runs: the
// named builds, else every build in the dashboard's range, oldest first.
func (e *Executor) overTime(ctx context.Context, m Model, r Range) ([]buildRuns, string, error) {
	all, err := e.Store.Builds(ctx, m.App)
	if err != nil {
		return nil, "", err
	}
	named := map[string]bool{}
	for _, b := range m.Builds {
		named[b] = true
	}
	var names []string
	var out []buildRuns
	for _, b := range all {
		if (len(m.Builds) > 0 && named[b.Name]) || (len(m.Builds) == 0 && r.contains(b.Time)) {
			names = append(names, b.Name)
			out = append(out, buildRuns{Build: b})
		}
	}
	if len(out) < len(named) {
		for _, b := range m.Builds {
			if !slices.Contains(names, b) {
				return nil, "", fmt.Errorf("%w %q of app %q", storage.ErrUnknownBuild, b, m.App)
			}
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("%w: app %q has no build in the time range", storage.ErrNoRuns, m.App)
	}
	runs, err := e.selectRuns(ctx, m, Selection{Builds: names})
	if err != nil {
		return nil, "", err
	}
	unit, err := unitOf(runs)
	if err != nil {
		return nil, "", err
	}
	index := map[string]int{}
	for i, b := range out {
		index[b.Name] = i
	}
	for _, run := range runs {
		i := index[run.Build]
		out[i].runs = append(out[i].runs, run)
	}
	return out, unit, nil
}

// evolution answers an evolution query: the Performance Evolution Matrix
// over the builds, with call edges and execution timelines.
func (e *Executor) evolution(ctx context.Context, m Model, r Range) (Answer, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return Answer{}, err
	}
	// The timeline is read run by run: its rows also give each run's
	// value of every function (for the change points, the matrix's cues,
	// and the cells' tests), with no second read.
	var runs []storage.Run
	var buildOf []int32 // per run
	groups := make([][]storage.Run, 0, len(builds))
	names := make([]string, len(builds))
	in := make([]evolution.Build, len(builds))
	for i, b := range builds {
		for _, r := range b.runs {
			runs, buildOf = append(runs, r), append(buildOf, int32(i)) // #nosec G115 -- a build index
			groups = append(groups, []storage.Run{r})
		}
		names[i] = b.Name
		in[i] = evolution.Build{Name: b.Name, Time: b.Time}
	}
	// The stack texts are read meanwhile: the first row waits for the
	// index.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sideline := aside("stack reader", func() (*stacks.FunctionIndex, error) { return stacks.IndexFunctions(ctx, e.Store, e.Stacks, runs) })
	var x *stacks.FunctionIndex
	var seen stacks.BuildSet
	var values []float64 // per run, per function (run-major)
	nf := 0
	waited, indexErr := false, error(nil)
	wait := func() error { // the first call takes the index; later ones, its error
		if waited {
			return indexErr
		}
		waited = true
		r := <-sideline
		if indexErr = r.err; r.err != nil {
			return r.err
		}
		x, seen = r.v, stacks.NewBuildSet(r.v.Stacks(), len(builds))
		nf = len(x.Names())
		values = make([]float64, len(runs)*nf)
		return nil
	}
	timeline := make([][]*stacks.Sums, len(builds)) // per build, per time bucket
	// Each run's rows come in ascending hash order (the samples table's
	// sort key): a cursor per run finds a row's stack a step or two on.
	var cursors []*stacks.Cursor
	err = e.Store.Timeline(ctx, groups, func(run int, hash uint64, bucket int, value int64) error {
		if x == nil {
			if err := wait(); err != nil {
				return err
			}
			cursors = x.Cursors(len(runs))
		}
		k, err := cursors[run].Find(hash)
		if err != nil {
			return err
		}
		g := int(buildOf[run])
		for len(timeline[g]) <= bucket {
			timeline[g] = append(timeline[g], x.NewSums())
		}
		x.AddTo(timeline[g][bucket], values[run*nf:(run+1)*nf], k, float64(value))
		seen.Add(k, g)
		return nil
	})
	if x == nil { // no rows, or an error before the first
		if err != nil {
			cancel()
		}
		if sideErr := wait(); err == nil {
			err = sideErr
		}
	}
	if err != nil {
		return Answer{}, err
	}
	// Every sample is in a time bucket, so the timeline's rows also add up
	// to the builds' totals: one aggregation in ClickHouse instead of two.
	// Values are per run.
	totals := make([]*stacks.Sums, len(builds))
	for g, b := range builds {
		totals[g] = x.NewSums()
		for _, tf := range timeline[g] {
			totals[g].AddSums(tf)
			tf.Finish(len(b.runs))
		}
		totals[g].Finish(len(b.runs))
	}
	changed := x.ChangedEdges(seen, len(builds))
	seen = stacks.BuildSet{}
	for g := range in {
		in[g].Total, in[g].Functions, in[g].Edges = totals[g].Total, x.ByName(totals[g]), changed[g]
		totals[g] = nil
	}
	// The timeline keeps the functions that can show (a map per bucket of
	// every function would be most of a year of builds' memory).
	shown := evolution.Shown(in, *m.Threshold)
	keep := make([]bool, nf)
	for f, name := range x.Names() {
		keep[f] = shown(name)
	}
	for g := range in {
		for _, tf := range timeline[g] {
			in[g].Timeline = append(in[g].Timeline, evolution.TimeBucket{Total: tf.Total, Functions: x.ByNameOf(tf, keep)})
		}
		timeline[g] = nil
	}
	changes, err := e.Store.Changes(ctx, m.App, names)
	if err != nil {
		return Answer{}, err
	}
	for i := range in {
		in[i].Changes = changes[in[i].Name]
	}
	// Every function a cell may show (Threshold) or a change point
	// follow (MinShare).
	fnames, series := seriesOf(builds, runs, x.Names(), values, min(*m.MinShare, *m.Threshold))
	values = nil
	for f, name := range fnames[1:] { // the first is the total
		for g := range in {
			if in[g].Runs == nil {
				in[g].Runs = map[string][]float64{}
			}
			in[g].Runs[name] = series[f+1][g]
		}
	}
	res, err := evolution.Analyze(in, evolution.Options{Threshold: *m.Threshold, Alpha: *m.Alpha})
	if err != nil {
		return Answer{}, err
	}
	// The matrix marks where changes start: its answer carries them.
	cpNames, cpSeries := fnames[:1:1], series[:1:1]
	for f := 1; f < len(fnames); f++ {
		if reaches(series[f], series[0], *m.MinShare) {
			cpNames, cpSeries = append(cpNames, fnames[f]), append(cpSeries, series[f])
		}
	}
	cps := detectChangePoints(m, builds, cpNames, cpSeries)
	return Answer{Frames: append(frames.Evolution(res, frames.GrafanaUnit(unit)), frames.ChangePoints(cps, frames.GrafanaUnit(unit), nil))}, nil
}

// timeseries answers a timeseries query: per build, the mean per-run total
// (or the chosen function's), and against a baseline the relative change,
// its Mann-Whitney p-value, significance, and `regression` (the change
// when significant, else 0) for alert rules to threshold; and always
// `changepoint`: the change at a build where a significant rise of the
// series starts (docs/CHANGEPOINTS.md; 1 where it rises from 0), else 0, so that a rule on the
// newest value fires once per regression and not on every later build.
func (e *Executor) timeseries(ctx context.Context, m Model, r Range) (Answer, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return Answer{}, err
	}
	var baseline *buildRuns
	if m.Baseline != "" && m.Baseline != BaselinePrevious {
		if baseline, err = e.baselineBuild(ctx, m, builds); err != nil {
			return Answer{}, err
		}
	}
	values, err := e.runValues(ctx, m, builds, baseline)
	if err != nil {
		return Answer{}, err
	}

	n := len(builds)
	name := "total"
	if m.Function != "" {
		name = m.Function
	}
	s := frames.Series{Name: name, Unit: frames.GrafanaUnit(unit), Compared: m.Baseline != "", Only: m.Field,
		Times: make([]time.Time, n), Builds: make([]string, n), Value: make([]float64, n),
		Change: make([]float64, n), PValue: make([]float64, n), Significant: make([]float64, n),
		Regression: make([]float64, n), ChangePoint: make([]float64, n)}
	perBuild := make([][]float64, n)
	for i, b := range builds {
		perBuild[i] = values[b.Name]
	}
	for _, c := range stats.ChangePoints([][][]float64{perBuild}, stats.ChangeOptions{Alpha: *m.Alpha, MinChange: *m.MinChange})[0] {
		if c.Significant && c.Change > 0 {
			s.ChangePoint[c.Index] = c.Change
			if math.IsInf(c.Change, 1) { // a function that appears: +100%
				s.ChangePoint[c.Index] = 1
			}
		}
	}
	for i, b := range builds {
		s.Times[i], s.Builds[i] = b.Time, b.Name
		cur := values[b.Name]
		s.Value[i] = stats.Describe(cur).Mean
		s.Change[i], s.PValue[i] = math.NaN(), math.NaN()
		var ref []float64
		switch {
		case baseline != nil:
			ref = values[baseline.Name]
		case m.Baseline == BaselinePrevious && i > 0:
			ref = values[builds[i-1].Name]
		}
		if ref == nil {
			continue
		}
		c := stats.Compare(ref, cur)
		s.Change[i], s.PValue[i] = c.Change, c.PValue
		if c.Significant {
			s.Significant[i], s.Regression[i] = 1, c.Change
		}
	}
	if n := len(builds); m.Function == "" && n >= 2 && s.ChangePoint[n-1] > 0 {
		// The newest build starts a regression: an alert on it names
		// where (docs/ALERTING.md).
		culprit, err := e.culpritLabel(ctx, m, builds)
		if err != nil {
			return Answer{}, err
		}
		s.Culprit = culprit
	}
	return Answer{Frames: data.Frames{frames.TimeSeries(s)}}, nil
}

// baselineBuild finds the named baseline among builds or reads it.
func (e *Executor) baselineBuild(ctx context.Context, m Model, builds []buildRuns) (*buildRuns, error) {
	for i := range builds {
		if builds[i].Name == m.Baseline {
			return &builds[i], nil
		}
	}
	runs, err := e.selectRuns(ctx, m, Selection{Builds: []string{m.Baseline}})
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if _, err := unitOf(builds[0].runs, runs); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return &buildRuns{Build: storage.Build{Name: m.Baseline, Runs: len(runs)}, runs: runs}, nil
}

// runValues returns each build's per-run values: the runs' totals (no
// function, or TotalFunction as changepoints name it), or the inclusive
// total of m.Function in each run (each sample counted once even
// when the function recurses).
func (e *Executor) runValues(ctx context.Context, m Model, builds []buildRuns, baseline *buildRuns) (map[string][]float64, error) {
	all := builds
	if baseline != nil && !slices.ContainsFunc(builds, func(b buildRuns) bool { return b.Name == baseline.Name }) {
		all = append(builds[:len(builds):len(builds)], *baseline)
	}
	out := map[string][]float64{}
	var runs []storage.Run
	for _, b := range all {
		runs = append(runs, b.runs...)
	}
	if m.Function == "" || m.Function == evolution.TotalFunction {
		for _, r := range runs {
			out[r.Build] = append(out[r.Build], float64(r.Total))
		}
		return out, nil
	}
	x, err := stacks.IndexFunctions(ctx, e.Store, e.Stacks, runs)
	if err != nil {
		return nil, err
	}
	fn := slices.Index(x.Names(), m.Function)
	if fn < 0 {
		return nil, fmt.Errorf("%w %q in the selected builds of %q", ErrUnknownFunction, m.Function, m.App)
	}
	sums := make([]float64, len(runs))
	function := int32(fn) // #nosec G115 -- a function number: fewer functions than frames
	err = x.RunValues(ctx, e.Store, runs, func(r int, f int32, v float64) {
		if f == function {
			sums[r] += v
		}
	})
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		out[r.Build] = append(out[r.Build], sums[i])
	}
	return out, nil
}
