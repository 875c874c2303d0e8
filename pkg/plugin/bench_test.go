package plugin_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Benchmark scale (issue 4): a diff of 2 builds x 20 runs, 10 million
// sample rows, 200k distinct stacks.
const (
	benchRunsPerBuild = 20
	benchStacks       = 200_000
	benchRowsPerRun   = 250_000 // x 40 runs = 10M rows
	benchFramesPerRow = 4       // time frames each stack of a run falls into
)

// benchScale is what the benchmarks of this package multiply their data's
// sizes by: 1, or 1/100 with -short, which the test command runs them with
// (once each) so that the checks inside them run.
func benchScale(n int) int {
	if testing.Short() {
		return max(1, n/100)
	}
	return n
}

// benchProfiles makes the runs of one build: every run samples perRun
// random stacks of a shared pool of distinct stacks (depth 20-40 over
// 5,000 functions), each in frames time frames, so the whole data set
// has the pool's distinct stacks and one sample row per (run, stack,
// time frame).
func benchProfiles(pool [][]profile.Frame, seed uint64, runs, perRun, frames int) []*profile.Profile {
	rng := rand.New(rand.NewPCG(seed, 7))
	frameNs := int64(time.Second) / storage.TimeBuckets
	var out []*profile.Profile
	for range runs {
		p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
		ids := map[profile.Frame]uint32{}
		for _, k := range rng.Perm(len(pool))[:perRun] {
			stack := make([]uint32, len(pool[k]))
			for i, f := range pool[k] {
				id, ok := ids[f]
				if !ok {
					id = p.Intern(f)
					ids[f] = id
				}
				stack[i] = id
			}
			for j := range frames {
				t := int64(j*storage.TimeBuckets/frames)*frameNs + rng.Int64N(frameNs)
				p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: 10_000_000 + rng.Int64N(1000), Time: t})
			}
		}
		out = append(out, p)
	}
	return out
}

// benchPool makes n distinct stacks over nFuncs functions, shaped like a
// real program's: each new stack branches off a random earlier one at a
// random depth and continues with new calls, so stacks share prefixes (a
// call tree) instead of being unrelated random paths.
func benchPool(n, nFuncs int) [][]profile.Frame {
	rng := rand.New(rand.NewPCG(3, 4))
	funcs := make([]profile.Frame, nFuncs)
	for i := range funcs {
		funcs[i] = profile.Frame{Name: fmt.Sprintf("example.com/svc/pkg%03d.(*T%d).M%d", i%250, i%13, i), Module: "svc"}
	}
	pool := make([][]profile.Frame, 0, n)
	seen := map[string]bool{}
	for len(pool) < n {
		var s []profile.Frame
		if len(pool) == 0 {
			s = []profile.Frame{{Name: "main.main", Module: "svc"}}
		} else {
			parent := pool[rng.IntN(len(pool))]
			s = append(s, parent[:1+rng.IntN(len(parent))]...)
		}
		for len(s) < 8 || (len(s) < 40 && rng.IntN(4) > 0) {
			s = append(s, funcs[rng.IntN(len(funcs))])
		}
		key := fmt.Sprint(s)
		if !seen[key] {
			seen[key] = true
			pool = append(pool, s)
		}
	}
	return pool
}

// BenchmarkDiffVsBareAggregation measures, in one run, the end-to-end
// QueryData of a diff over go-plugin (per-run stack sums, stack texts,
// tree with per-node statistics, culprits and verdict, frames, gRPC) against the bare ClickHouse
// aggregation a diff without statistics would need at least (the per-side
// GROUP BY stack over the sample rows, rows read to the client) and the
// floor (issue 30: the same GROUP BY over the run stacks' per-run sums,
// the least a per-run diff asks of ClickHouse), and on a warm instance the
// same diff as a sandwich and filtered (issue 26). The targets: a ratio
// (QueryData / bare) of at most 1.0, and a floor-ratio of at most 1.5 warm
// and 2.0 cold. The server's
// max_threads is logged (both must run on the same parallel plans). Run
// with:
//
//	go test -run '^$' -bench DiffVsBare -benchtime 5x -timeout 30m ./pkg/plugin/
func BenchmarkDiffVsBareAggregation(b *testing.B) {
	store, dsn := migratedStore(b)
	ctx := context.Background()
	pool := benchPool(benchScale(benchStacks), 5000)
	runsPerBuild, rowsPerRun := benchRunsPerBuild, benchScale(benchRowsPerRun)
	if testing.Short() {
		runsPerBuild = 3 // the fewest that give every node a test
	}
	loadStart := time.Now()
	for bi, build := range []string{"base", "head"} {
		for ri, p := range benchProfiles(pool, uint64(bi+1), runsPerBuild, rowsPerRun/benchFramesPerRow, benchFramesPerRow) {
			meta := storage.RunMeta{App: "bench", Build: build, Run: fmt.Sprintf("run-%02d", ri),
				Start: time.Date(2026, 11, 1, bi, ri, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	head, base := teststore.Runs(b, store, "bench", "head"), teststore.Runs(b, store, "bench", "base")
	conn := chtest.Conn(b, dsn)
	var threads string
	if err := conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'max_threads'").Scan(&threads); err != nil {
		b.Fatal(err)
	}
	var stacks uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(stack_hash) FROM samples").Scan(&stacks); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d runs, %d distinct stacks in %v; server max_threads %s", len(head)+len(base), stacks,
		time.Since(loadStart).Round(time.Second), threads)

	// The bare aggregation: what StackValues ran before the run stacks
	// held sums, one key per side; over run_stacks, the floor (issue 30):
	// the least ClickHouse work for a per-run diff, the same per-side
	// GROUP BY over the (run, stack) sums written at ingest.
	var ids []uint64
	var sides []uint32
	for side, runs := range [][]storage.Run{head, base} {
		for _, r := range runs {
			ids, sides = append(ids, r.IngestID), append(sides, uint32(side))
		}
	}
	var rows uint64
	aggregate := func(table string) func() {
		return func() {
			rows = 0
			rs, err := conn.Query(ctx, "SELECT toUInt32(transform(ingest_id, ?, ?, 0)) AS k, stack_hash, sum(value), min(first_seen) "+
				"FROM "+table+" WHERE app = ? AND ingest_id IN ? GROUP BY k, stack_hash", ids, sides, "bench", clickhouse.GroupSet{Value: anys(ids)})
			if err != nil {
				b.Fatal(err)
			}
			defer rs.Close()
			var k uint32
			var hash, seen uint64
			var value int64
			for rs.Next() {
				if err := rs.Scan(&k, &hash, &value, &seen); err != nil {
					b.Fatal(err)
				}
				rows++
			}
			if err := rs.Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	bare, floor := aggregate("samples"), aggregate("run_stacks")

	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	var f *fixture
	var plugins []*fixture
	for _, start := range benchPlugins(b) {
		plugins = append(plugins, &fixture{plugin: start(), settings: settings})
	}
	diff := map[string]any{"queryType": "diff", "app": "bench", "head": sel("head"), "base": sel("base")}
	// Around the culprit (issue 26): a function in many stacks, and
	// filters that hide a fifth of the functions and drop a tenth of the
	// stacks.
	sandwich := maps.Clone(diff)
	sandwich["sandwich"] = pool[0][1].Name
	filtered := maps.Clone(diff)
	filtered["hideFrames"], filtered["drop"] = `\.M\d*[37]$`, `pkg249\.`
	var model map[string]any
	endToEnd := func() {
		for _, fr := range f.mustQuery(b, model) {
			if fr.Name == frames.FrameCulprits {
				continue
			}
			// A tree beyond its root, with statistics (the test command runs
			// this once on a hundredth of the data: a sandwich of a dozen nodes).
			if q, _ := fr.FieldByName("qValue"); q == nil || fr.Rows() < 2 {
				b.Fatalf("%v: a frame of %d nodes, statistics %v", model, fr.Rows(), q != nil)
			}
		}
	}
	// warm: the same data source instance answers again (a dashboard
	// refresh): stack texts come from its cache. cold: the settings
	// change before each query, so Grafana's instance manager replaces the
	// instance with a fresh one (empty cache, new pool) that reads them
	// from ClickHouse too. (The old one is disposed 5 s later, as in
	// Grafana; a new uid per query instead would keep every instance and
	// its cache alive, which no real Grafana does with one data source.)
	for _, c := range []struct {
		mode  string
		model map[string]any
	}{{"warm", diff}, {"cold", diff}, {"sandwich-warm", sandwich}, {"filtered-warm", filtered}} {
		for i, p := range plugins {
			name, cold := c.mode, c.mode == "cold"
			model, f = c.model, p
			if i > 0 {
				name += "-before"
			}
			b.Run(name, func(b *testing.B) {
				bare()
				floor()
				if cold { // the server's caches warm for the stack reads too
					f.settings.Updated = time.Now()
				}
				endToEnd() // warm the server's caches and the pool
				var bareTime, floorTime, e2eTime time.Duration
				b.ResetTimer()
				for range b.N {
					if cold {
						f.settings.Updated = time.Now()
					}
					start := time.Now()
					bare()
					bareTime += time.Since(start)
					start = time.Now()
					floor()
					floorTime += time.Since(start)
					start = time.Now()
					endToEnd()
					e2eTime += time.Since(start)
				}
				b.ReportMetric(float64(bareTime.Milliseconds())/float64(b.N), "bare-ms/op")
				b.ReportMetric(float64(floorTime.Milliseconds())/float64(b.N), "floor-ms/op")
				b.ReportMetric(float64(e2eTime.Milliseconds())/float64(b.N), "querydata-ms/op")
				b.ReportMetric(float64(e2eTime)/float64(bareTime), "ratio")
				b.ReportMetric(float64(e2eTime)/float64(floorTime), "floor-ratio")
			})
		}
	}
	b.Logf("aggregated (side, stack) rows: %d; sample rows: %d", rows, runsPerBuild*2*rowsPerRun)
}

// benchPlugins starts the plugin built from this code and, when
// FLAMEDIFF_BENCH_BEFORE names a plugin binary built from other code (go
// build -o PATH ./pkg in its checkout), returns a start of that one too
// (its benchmarks' names end in "-before"), so that a benchmark
// alternates them on the same data in one run.
func benchPlugins(b *testing.B) []func() *plugintest.Client {
	out := []func() *plugintest.Client{func() *plugintest.Client { return plugintest.Start(b, pluginBinary) }}
	if before := os.Getenv("FLAMEDIFF_BENCH_BEFORE"); before != "" {
		out = append(out, func() *plugintest.Client { return plugintest.Start(b, before) })
	}
	return out
}

func anys(ids []uint64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
