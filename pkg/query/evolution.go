package query

import (
	"context"
	"fmt"

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
	sel := evolutionRuns{builds: builds, in: make([]evolution.Build, len(builds))}
	names := make([]string, len(builds))
	for i, b := range builds {
		for _, r := range b.runs {
			sel.runs, sel.buildOf = append(sel.runs, r), append(sel.buildOf, int32(i)) // #nosec G115 -- a build index
		}
		names[i] = b.Name
		sel.in[i] = evolution.Build{Name: b.Name, Time: b.Time}
	}
	// Runs stored with their function sums are read from those; the
	// others (until migrate fills them in) from their samples.
	summed, err := e.Store.FunctionsSummed(ctx, sel.runs)
	if err != nil {
		return Answer{}, err
	}
	read := e.evolutionFromSamples
	if summed {
		read = e.evolutionFromSums
	}
	x, values, err := read(ctx, &sel, *m.Threshold)
	if err != nil {
		return Answer{}, err
	}
	in, runs := sel.in, sel.runs
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

// evolutionRuns is an evolution query's selection: its builds and their
// runs laid end to end, and the matrix's input, whose Total, Functions,
// Edges and Timeline the readers fill in.
type evolutionRuns struct {
	builds  []buildRuns
	runs    []storage.Run
	buildOf []int32 // per run
	in      []evolution.Build
}

// evolutionFromSums fills in the matrix's input from the function sums
// written at ingest: the run functions (each run's value of every
// function, and so each build's), the function timelines of the
// functions the matrix can show, and which runs have which stacks for the
// call edges. A year of builds of 20,000 stacks a run is some 4M rows
// instead of the samples' 36.5M.
func (e *Executor) evolutionFromSums(ctx context.Context, sel *evolutionRuns, threshold float64) (*loader.FunctionIndex, []float64, error) {
	builds, runs, in := sel.builds, sel.runs, sel.in
	// Which runs have which stacks is ClickHouse's longest part (a count
	// per stack over every (run, stack) row): it runs meanwhile.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	presence := aside("stack runs reader", func() (stackRuns, error) {
		var p stackRuns
		return p, e.Store.StackRuns(ctx, runs, func(r int, stack uint64) error {
			if r == storage.EveryRun {
				p.every = append(p.every, stack)
			} else {
				p.some = append(p.some, runStack{r, stack})
			}
			return nil
		})
	})
	x, err := loader.IndexFunctions(ctx, e.Store, e.Stacks, runs)
	if err != nil {
		return nil, nil, err
	}
	nf := len(x.Names())
	values := make([]float64, len(runs)*nf) // per run, per function (run-major)
	totals := make([]*loader.Sums, len(builds))
	for g := range totals {
		totals[g] = x.NewSums()
	}
	err = x.RunValues(ctx, e.Store, runs, func(r int, f int32, v float64) {
		values[r*nf+int(f)] += v
		totals[sel.buildOf[r]].Add(f, v)
	})
	if err != nil {
		return nil, nil, err
	}
	for g, b := range builds {
		for _, r := range b.runs {
			totals[g].Total += float64(r.Total)
		}
		totals[g].Finish(len(b.runs))
		in[g].Total, in[g].Functions = totals[g].Total, x.ByName(totals[g])
	}
	// The timelines of the functions that can show only (evolution.Shown).
	shown := evolution.Shown(in, threshold)
	number := map[uint64]int32{}
	var hashes []uint64
	for f, name := range x.Names() {
		if shown(name) {
			h := storage.FunctionHash(name)
			number[h], hashes = int32(f), append(hashes, h) // #nosec G115 -- function ids are int32 by design
		}
	}
	timeline := make([][]*loader.Sums, len(builds)) // per build, per time bucket
	err = e.Store.FunctionTimeline(ctx, runs, hashes, func(r int, h uint64, bucket int, v int64) error {
		g := sel.buildOf[r]
		for len(timeline[g]) <= bucket {
			timeline[g] = append(timeline[g], x.NewSums())
		}
		if h == 0 {
			timeline[g][bucket].Total += float64(v)
			return nil
		}
		f, ok := number[h]
		if !ok {
			return fmt.Errorf("read function timelines: function %x was not asked for", h)
		}
		timeline[g][bucket].Add(f, float64(v))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for g, b := range builds {
		for _, tf := range timeline[g] {
			tf.Finish(len(b.runs))
			in[g].Timeline = append(in[g].Timeline, evolution.TimeBucket{Total: tf.Total, Functions: x.ByName(tf)})
		}
	}
	p := <-presence
	if p.err != nil {
		return nil, nil, p.err
	}
	seen := loader.NewBuildSet(x.Stacks(), len(builds))
	for _, stack := range p.v.every {
		k, err := x.Lookup(stack)
		if err != nil {
			return nil, nil, err
		}
		for g, b := range builds {
			if len(b.runs) > 0 {
				seen.Add(k, g)
			}
		}
	}
	for _, rs := range p.v.some {
		k, err := x.Lookup(rs.stack)
		if err != nil {
			return nil, nil, err
		}
		seen.Add(k, int(sel.buildOf[rs.run]))
	}
	for g, edges := range x.ChangedEdges(seen, len(builds)) {
		in[g].Edges = edges
	}
	return x, values, nil
}

// stackRuns is what Store.StackRuns gives: the stacks every run has, and
// the others run by run.
type stackRuns struct {
	every []uint64
	some  []runStack
}

type runStack struct {
	run   int
	stack uint64
}

// evolutionFromSamples fills in the matrix's input from the runs'
// samples, one row per (run, stack, time bucket), for runs stored before
// the function sums existed: the timeline's rows also give each run's
// value of every function (for the change points, the matrix's cues, and
// the cells' tests), with no second read.
func (e *Executor) evolutionFromSamples(ctx context.Context, sel *evolutionRuns, threshold float64) (*loader.FunctionIndex, []float64, error) {
	builds, runs, buildOf, in := sel.builds, sel.runs, sel.buildOf, sel.in
	groups := storage.EachRun(runs)
	// The stack texts are read meanwhile: the first row waits for the
	// index.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sideline := aside("stack reader", func() (*loader.FunctionIndex, error) { return loader.IndexFunctions(ctx, e.Store, e.Stacks, runs) })
	var x *loader.FunctionIndex
	var seen loader.BuildSet
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
		x, seen = r.v, loader.NewBuildSet(r.v.Stacks(), len(builds))
		nf = len(x.Names())
		values = make([]float64, len(runs)*nf)
		return nil
	}
	timeline := make([][]*loader.Sums, len(builds)) // per build, per time bucket
	// Each run's rows come in ascending hash order (the samples table's
	// sort key): a cursor per run finds a row's stack a step or two on.
	var cursors []*loader.Cursor
	err := e.Store.Timeline(ctx, groups, func(run int, hash uint64, bucket int, value int64) error {
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
		return nil, nil, err
	}
	// Every sample is in a time bucket, so the timeline's rows also add up
	// to the builds' totals: one aggregation in ClickHouse instead of two.
	// Values are per run.
	totals := make([]*loader.Sums, len(builds))
	for g, b := range builds {
		totals[g] = x.NewSums()
		for _, tf := range timeline[g] {
			totals[g].AddSums(tf)
			tf.Finish(len(b.runs))
		}
		totals[g].Finish(len(b.runs))
	}
	changed := x.ChangedEdges(seen, len(builds))
	seen = loader.BuildSet{}
	for g := range in {
		in[g].Total, in[g].Functions, in[g].Edges = totals[g].Total, x.ByName(totals[g]), changed[g]
		totals[g] = nil
	}
	// The timeline keeps the functions that can show (a map per bucket of
	// every function would be most of a year of builds' memory).
	shown := evolution.Shown(in, threshold)
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
	return x, values, nil
}
