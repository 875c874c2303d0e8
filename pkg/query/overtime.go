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
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// BaselinePrevious as a timeseries baseline compares every build with the
// one before it.
const BaselinePrevious = "previous"

// ErrUnknownFunction means a timeseries names a function no stack has.
var ErrUnknownFunction = errors.New("no samples of function")

// FrameTimeSeries names the timeseries query's frame.
const FrameTimeSeries = "timeseries"

// buildRuns is one build with its selected runs, in time order.
type buildRuns struct {
	storage.Build
	runs []storage.Run
}

// timelineRow is one row of Store.Timeline.
type timelineRow struct {
	hash         uint64
	value        int64
	group, frame int32
}

// timelineBatch is the number of timeline rows summed at a time.
const timelineBatch = 256

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
func (e *Executor) evolution(ctx context.Context, m Model, r Range) (data.Frames, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return nil, err
	}
	var runs []storage.Run
	groups := make([][]storage.Run, len(builds))
	names := make([]string, len(builds))
	in := make([]evolution.Build, len(builds))
	for i, b := range builds {
		runs = append(runs, b.runs...)
		groups[i], names[i] = b.runs, b.Name
		in[i] = evolution.Build{Name: b.Name, Time: b.Time}
	}
	// The stack texts and the timeline are read at once: ClickHouse
	// aggregates the samples while the stacks are indexed, and the first
	// row waits for the index (the server holds the rest meanwhile).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sideline := aside("stack reader", func() (*functionIndex, error) { return e.indexFunctions(ctx, runs) })
	// The change points (the matrix's cues) are read meanwhile too, from
	// the run stacks table, once the stacks are indexed.
	var changePoints <-chan outcome[[]ChangePoint]
	var x *functionIndex
	var seen buildSet
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
		x, seen = r.v, newBuildSet(r.v.stacks(), len(builds))
		changePoints = aside("change points", func() ([]ChangePoint, error) { return e.changePoints(ctx, m, builds, x) })
		return nil
	}
	timeline := make([][]*sums, len(builds)) // per build, per time frame
	// Rows are summed in batches: the stacks of a batch are looked up in
	// one loop whose cache misses overlap, then their values are added.
	var batch []timelineRow
	var ks []uint32
	flush := func() error {
		for i, r := range batch {
			k, err := x.lookup(r.hash)
			if err != nil {
				return err
			}
			ks[i] = k
		}
		for i, r := range batch {
			g, k := int(r.group), ks[i]
			for len(timeline[g]) <= int(r.frame) {
				timeline[g] = append(timeline[g], x.newSums())
			}
			x.addTo(timeline[g][r.frame], k, float64(r.value))
			seen.add(k, g)
		}
		batch = batch[:0]
		return nil
	}
	err = e.Store.Timeline(ctx, groups, func(g int, hash uint64, frame int, value int64) error {
		if x == nil {
			if err := wait(); err != nil {
				return err
			}
			batch, ks = make([]timelineRow, 0, timelineBatch), make([]uint32, timelineBatch)
		}
		batch = append(batch, timelineRow{hash: hash, value: value, group: int32(g), frame: int32(frame)}) // #nosec G115 -- a group index and a time frame
		if len(batch) == timelineBatch {
			return flush()
		}
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
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	// Every sample is in a time frame, so the timeline's rows also add up
	// to the builds' totals: one aggregation in ClickHouse instead of two.
	// Values are per run.
	totals := make([]*sums, len(builds))
	for g := range builds {
		totals[g] = x.newSums()
		for _, tf := range timeline[g] {
			totals[g].addSums(tf)
			tf.finish(len(groups[g]))
		}
		totals[g].finish(len(groups[g]))
	}
	changed := x.changedEdges(seen, len(builds))
	seen = buildSet{}
	for g := range in {
		in[g].Total, in[g].Functions, in[g].Edges = totals[g].total, x.byName(totals[g]), changed[g]
		for _, tf := range timeline[g] {
			in[g].Timeline = append(in[g].Timeline, evolution.TimeFrame{Total: tf.total, Functions: x.byName(tf)})
		}
		totals[g], timeline[g] = nil, nil
	}
	changes, err := e.Store.Changes(ctx, m.App, names)
	if err != nil {
		return nil, err
	}
	for i := range in {
		in[i].Changes = changes[in[i].Name]
	}
	res, err := evolution.Analyze(in, evolution.Options{Threshold: *m.Threshold})
	if err != nil {
		return nil, err
	}
	// The matrix marks where changes start: its answer carries them.
	cps := <-changePoints
	if cps.err != nil {
		return nil, cps.err
	}
	return append(res.Frames(frames.GrafanaUnit(unit)), changePointsFrame(cps.v, frames.GrafanaUnit(unit))), nil
}

// timeseries answers a timeseries query: per build, the mean per-run total
// (or the chosen function's), and against a baseline the relative change,
// its Mann-Whitney p-value, significance, and `regression` (the change
// when significant, else 0) for alert rules to threshold; and always
// `changepoint`: the change at a build where a significant rise of the
// series starts (docs/CHANGEPOINTS.md; 1 where it rises from 0), else 0, so that a rule on the
// newest value fires once per regression and not on every later build.
func (e *Executor) timeseries(ctx context.Context, m Model, r Range) (data.Frames, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return nil, err
	}
	var baseline *buildRuns
	if m.Baseline != "" && m.Baseline != BaselinePrevious {
		if baseline, err = e.baselineBuild(ctx, m, builds); err != nil {
			return nil, err
		}
	}
	values, err := e.runValues(ctx, m, builds, baseline)
	if err != nil {
		return nil, err
	}

	n := len(builds)
	times, names := make([]time.Time, n), make([]string, n)
	mean := make([]float64, n)
	change, pValue := make([]*float64, n), make([]*float64, n)
	significant, regression := make([]float64, n), make([]float64, n)
	changepoint, perBuild := make([]float64, n), make([][]float64, n)
	for i, b := range builds {
		perBuild[i] = values[b.Name]
	}
	for _, c := range stats.ChangePoints([][][]float64{perBuild}, stats.ChangeOptions{Alpha: *m.Alpha, MinChange: *m.MinChange})[0] {
		if c.Significant && c.Change > 0 {
			changepoint[c.Index] = c.Change
			if math.IsInf(c.Change, 1) { // a function that appears: +100%
				changepoint[c.Index] = 1
			}
		}
	}
	for i, b := range builds {
		times[i], names[i] = b.Time, b.Name
		cur := values[b.Name]
		mean[i] = stats.Describe(cur).Mean
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
		s := stats.Compare(ref, cur)
		change[i], pValue[i] = finiteOrNil(s.Change), finiteOrNil(s.PValue)
		if s.Significant {
			significant[i], regression[i] = 1, s.Change
		}
	}
	name := "total"
	if m.Function != "" {
		name = m.Function
	}
	fields := []*data.Field{
		data.NewField("time", nil, times),
		data.NewField("value", nil, mean).SetConfig(&data.FieldConfig{Unit: frames.GrafanaUnit(unit), DisplayNameFromDS: name}),
	}
	if m.Baseline != "" {
		percent := &data.FieldConfig{Unit: "percentunit"}
		fields = append(fields,
			data.NewField("change", nil, change).SetConfig(percent),
			data.NewField("pValue", nil, pValue),
			data.NewField("significant", nil, significant),
			data.NewField("regression", nil, regression).SetConfig(percent),
		)
	}
	var labels data.Labels
	if m.Function == "" && n >= 2 && changepoint[n-1] > 0 {
		// The newest build starts a regression: an alert on it names
		// where (docs/ALERTING.md).
		culprit, err := e.culpritLabel(ctx, m, builds)
		if err != nil {
			return nil, err
		}
		if culprit != "" {
			labels = data.Labels{"culprit": culprit}
		}
	}
	fields = append(fields, data.NewField("changepoint", labels, changepoint).SetConfig(&data.FieldConfig{Unit: "percentunit"}))
	if m.Field != "" {
		for _, fl := range fields[1:] {
			if fl.Name == m.Field {
				fields = []*data.Field{fields[0], fl}
				break
			}
		}
	}
	f := data.NewFrame(FrameTimeSeries, fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide, Custom: map[string]any{"builds": names}}
	return data.Frames{f}, nil
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
	if m.Function == "" || m.Function == TotalFunction {
		for _, r := range runs {
			out[r.Build] = append(out[r.Build], float64(r.Total))
		}
		return out, nil
	}
	x, err := e.indexFunctions(ctx, runs)
	if err != nil {
		return nil, err
	}
	fn := slices.Index(x.names, m.Function)
	if fn < 0 {
		return nil, fmt.Errorf("%w %q in the selected builds of %q", ErrUnknownFunction, m.Function, m.App)
	}
	groups := make([][]storage.Run, len(runs))
	sums := make([]float64, len(runs))
	for i, r := range runs {
		groups[i] = []storage.Run{r}
	}
	at := stackCursor{x: x}
	err = e.Store.StackValues(ctx, groups, func(g int, hash uint64, value int64, _ uint64) error {
		k, err := at.find(hash)
		if err == nil && x.has(k, int32(fn)) { // #nosec G115 -- a function number
			sums[g] += float64(value)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		out[r.Build] = append(out[r.Build], sums[i])
	}
	return out, nil
}
