package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// BaselinePrevious as a timeseries baseline compares every build with the
// one before it.
const BaselinePrevious = "previous"

// ErrUnknownFunction means a timeseries names a function no stack has.
var ErrUnknownFunction = errors.New("no samples of function")

// ErrAmbiguousFunction means a timeseries names a function by a name that
// functions of several modules have (docs/QUERIES.md): its title tells
// them apart.
var ErrAmbiguousFunction = errors.New("ambiguous function")

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
	cps := stats.ChangePoints([][][]float64{perBuild}, stats.ChangeOptions{Alpha: *m.Alpha, MinChange: *m.MinChange})[0]
	var totals [][]float64 // read when a function appears: did its work move?
	for k, c := range cps {
		if c.Significant && c.Change > 0 && m.Function != "" && c.Before == 0 {
			if totals == nil {
				tm := m
				tm.Function = ""
				all, err := e.runValues(ctx, tm, builds, nil)
				if err != nil {
					return Answer{}, err
				}
				for _, b := range builds {
					totals = append(totals, all[b.Name])
				}
			}
			if movedAt(totals, cps, k, *m.Alpha) {
				continue
			}
		}
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
// when the function recurses): the function it titles, or the one of
// that name (FunctionIndex.Match; a name several share is an error).
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
	x, err := loader.IndexFunctions(ctx, e.Store, e.Stacks, runs)
	if err != nil {
		return nil, err
	}
	fns := x.Match(m.Function)
	switch len(fns) {
	case 0:
		return nil, fmt.Errorf("%w %q in the selected builds of %q", ErrUnknownFunction, m.Function, m.App)
	case 1:
	default:
		titles := make([]string, len(fns))
		for i, f := range fns {
			titles[i] = fmt.Sprintf("%q", x.Titles()[f])
		}
		return nil, fmt.Errorf("%w: %q names %d functions of the selected builds of %q; name one by its title: %s",
			ErrAmbiguousFunction, m.Function, len(fns), m.App, strings.Join(titles, ", "))
	}
	sums := make([]float64, len(runs))
	function := fns[0]
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
