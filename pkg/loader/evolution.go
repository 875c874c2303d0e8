package loader

import (
	"context"
	"fmt"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/internal/aside"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Evolution fills in the evolution matrix's input in (Total, Functions,
// Edges and Timeline of each build; builds[g] are build g's runs) and
// returns the function index with each run's value of every function
// (run-major, the runs of builds laid end to end), for the change points,
// the matrix's cues and the cells' tests. Runs stored with their function
// sums are read from those; the others (until migrate fills them in,
// docs/SCHEMA.md) from their samples. threshold is the matrix's: only the
// functions it can show keep timelines (evolution.Shown). A nil cache
// stands for a fresh one of this load's own.
func Evolution(ctx context.Context, store *storage.Store, cache *Cache, builds [][]storage.Run, in []evolution.Build, threshold float64) (*FunctionIndex, []float64, error) {
	sel := evolutionRuns{store: store, cache: cache, builds: builds, in: in}
	for g, runs := range builds {
		for _, r := range runs {
			sel.runs, sel.buildOf = append(sel.runs, r), append(sel.buildOf, int32(g)) // #nosec G115 -- a build index
		}
	}
	summed, err := store.FunctionsSummed(ctx, sel.runs)
	if err != nil {
		return nil, nil, err
	}
	if summed {
		return sel.fromSums(ctx, threshold)
	}
	return sel.fromSamples(ctx, threshold)
}

// evolutionRuns is an evolution query's selection: its builds and their
// runs laid end to end, and the matrix's input, whose Total, Functions,
// Edges and Timeline the readers fill in.
type evolutionRuns struct {
	store   *storage.Store
	cache   *Cache
	builds  [][]storage.Run
	runs    []storage.Run
	buildOf []int32 // per run
	in      []evolution.Build
}

// fromSums fills in the matrix's input from the function sums
// written at ingest: the run functions (each run's value of every
// function, and so each build's), the function timelines of the
// functions the matrix can show, and which runs have which stacks for the
// call edges. A year of builds of 20,000 stacks a run is some 4M rows
// instead of the samples' 36.5M.
func (sel *evolutionRuns) fromSums(ctx context.Context, threshold float64) (*FunctionIndex, []float64, error) {
	builds, runs, in := sel.builds, sel.runs, sel.in
	// Which runs have which stacks is ClickHouse's longest part (a count
	// per stack over every (run, stack) row): it runs meanwhile.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	presence := aside.Run("stack runs reader", func() (stackRuns, error) {
		var p stackRuns
		return p, sel.store.StackRuns(ctx, runs, func(r int, stack uint64) error {
			if r == storage.EveryRun {
				p.every = append(p.every, stack)
			} else {
				p.some = append(p.some, runStack{r, stack})
			}
			return nil
		})
	})
	x, err := IndexFunctions(ctx, sel.store, sel.cache, runs)
	if err != nil {
		return nil, nil, err
	}
	nf := len(x.Titles())
	values := make([]float64, len(runs)*nf) // per run, per function (run-major)
	totals := make([]*Sums, len(builds))
	for g := range totals {
		totals[g] = x.NewSums()
	}
	err = x.RunValues(ctx, sel.store, runs, func(r int, f int32, v float64) {
		values[r*nf+int(f)] += v
		totals[sel.buildOf[r]].Add(f, v)
	})
	if err != nil {
		return nil, nil, err
	}
	for g, b := range builds {
		for _, r := range b {
			totals[g].Total += float64(r.Total)
		}
		totals[g].Finish(len(b))
		in[g].Total, in[g].Functions = totals[g].Total, x.ByTitle(totals[g])
	}
	// The timelines of the functions that can show only (evolution.Shown).
	shown := evolution.Shown(in, threshold)
	number := map[uint64]int32{}
	var hashes []uint64
	for f, title := range x.Titles() {
		if shown(title) {
			h := x.fhash[f]
			number[h], hashes = int32(f), append(hashes, h) // #nosec G115 -- function ids are int32 by design
		}
	}
	timeline := make([][]*Sums, len(builds)) // per build, per time bucket
	err = sel.store.FunctionTimeline(ctx, runs, hashes, func(r int, h uint64, bucket int, v int64) error {
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
			tf.Finish(len(b))
			in[g].Timeline = append(in[g].Timeline, evolution.TimeBucket{Total: tf.Total, Functions: x.ByTitle(tf)})
		}
	}
	p := <-presence
	if p.Err != nil {
		return nil, nil, p.Err
	}
	seen := NewBuildSet(x.Stacks(), len(builds))
	for _, stack := range p.V.every {
		k, err := x.Lookup(stack)
		if err != nil {
			return nil, nil, err
		}
		for g, b := range builds {
			if len(b) > 0 {
				seen.Add(k, g)
			}
		}
	}
	for _, rs := range p.V.some {
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

// fromSamples fills in the matrix's input from the runs'
// samples, one row per (run, stack, time bucket), for runs stored before
// the function sums existed: the timeline's rows also give each run's
// value of every function (for the change points, the matrix's cues, and
// the cells' tests), with no second read.
func (sel *evolutionRuns) fromSamples(ctx context.Context, threshold float64) (*FunctionIndex, []float64, error) {
	builds, runs, buildOf, in := sel.builds, sel.runs, sel.buildOf, sel.in
	groups := storage.EachRun(runs)
	// The stack texts are read meanwhile: the first row waits for the
	// index.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sideline := aside.Run("stack reader", func() (*FunctionIndex, error) { return IndexFunctions(ctx, sel.store, sel.cache, runs) })
	var x *FunctionIndex
	var seen BuildSet
	var values []float64 // per run, per function (run-major)
	nf := 0
	waited, indexErr := false, error(nil)
	wait := func() error { // the first call takes the index; later ones, its error
		if waited {
			return indexErr
		}
		waited = true
		r := <-sideline
		if indexErr = r.Err; r.Err != nil {
			return r.Err
		}
		x, seen = r.V, NewBuildSet(r.V.Stacks(), len(builds))
		nf = len(x.Titles())
		values = make([]float64, len(runs)*nf)
		return nil
	}
	timeline := make([][]*Sums, len(builds)) // per build, per time bucket
	// Each run's rows come in ascending hash order (the samples table's
	// sort key): a cursor per run finds a row's stack a step or two on.
	var cursors []*Cursor
	err := sel.store.Timeline(ctx, groups, func(run int, hash uint64, bucket int, value int64) error {
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
	totals := make([]*Sums, len(builds))
	for g, b := range builds {
		totals[g] = x.NewSums()
		for _, tf := range timeline[g] {
			totals[g].AddSums(tf)
			tf.Finish(len(b))
		}
		totals[g].Finish(len(b))
	}
	changed := x.ChangedEdges(seen, len(builds))
	seen = BuildSet{}
	for g := range in {
		in[g].Total, in[g].Functions, in[g].Edges = totals[g].Total, x.ByTitle(totals[g]), changed[g]
		totals[g] = nil
	}
	// The timeline keeps the functions that can show (a map per bucket of
	// every function would be most of a year of builds' memory).
	shown := evolution.Shown(in, threshold)
	keep := make([]bool, nf)
	for f, title := range x.Titles() {
		keep[f] = shown(title)
	}
	for g := range in {
		for _, tf := range timeline[g] {
			in[g].Timeline = append(in[g].Timeline, evolution.TimeBucket{Total: tf.Total, Functions: x.ByTitleOf(tf, keep)})
		}
		timeline[g] = nil
	}
	return x, values, nil
}
