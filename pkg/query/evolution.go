package query

import (
	"context"
	"slices"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/storage"
)

// evolution answers an evolution query: the Performance Evolution Matrix
// over the builds, with call edges and execution timelines.
func (e *Executor) evolution(ctx context.Context, m Model, r Range) (Answer, error) {
	builds, unit, err := e.overTime(ctx, m, r)
	if err != nil {
		return Answer{}, err
	}
	runsOf := make([][]storage.Run, len(builds))
	in := make([]evolution.Build, len(builds))
	names := make([]string, len(builds))
	for i, b := range builds {
		runsOf[i], names[i] = b.runs, b.Name
		in[i] = evolution.Build{Name: b.Name, Time: b.Time}
	}
	x, values, err := loader.Evolution(ctx, e.Store, e.Stacks, runsOf, in, *m.Threshold)
	if err != nil {
		return Answer{}, err
	}
	runs := slices.Concat(runsOf...)
	changes, err := e.Store.Changes(ctx, m.App, names)
	if err != nil {
		return Answer{}, err
	}
	for i := range in {
		in[i].Changes = changes[in[i].Name]
	}
	// Every function a cell may show (Threshold) or a change point
	// follow (MinShare).
	fnames, series := seriesOf(builds, runs, x.Titles(), values, min(*m.MinShare, *m.Threshold))
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
