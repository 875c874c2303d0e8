package loader_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/cespare/xxhash/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Functions of one name in two packages and in Node are three functions
// over time, from one server and the cluster, whichever way their rows
// were stored: the planted change is qs's stringify's alone in the change
// points, the time series and the evolution matrix, each titled with its
// module. Rows of runs ingested before (keyed by name) give the same
// answers from the run stacks, and again once migrate has rewritten them.
func TestOverTimeKeepsSameNamedFunctionsApart(t *testing.T) {
	for name, cluster := range map[string]bool{"one server": false, "cluster": true} {
		t.Run(name, func(t *testing.T) {
			if cluster {
				chtest.ClusterShards(t)
			}
			store, dsn := teststore.Fresh(t, cluster)
			if err := teststore.StoreStringifies(context.Background(), store, "app"); err != nil {
				t.Fatal(err)
			}
			e := &query.Executor{Store: store, Stacks: loader.NewCache(0)}
			checkStringifies(t, e)

			queries := []string{
				`{"queryType":"changepoints","app":"app","minShare":0}`,
				`{"queryType":"timeseries","app":"app","function":"` + teststore.QsStringify + `","baseline":"previous"}`,
				`{"queryType":"timeseries","app":"app","function":"` + teststore.NodeStringify + `"}`,
				`{"queryType":"evolution","app":"app","threshold":0}`,
			}
			want := map[string]string{}
			for _, q := range queries {
				want[q] = answerJSON(t, e, q)
			}
			nameKeyed(t, store, dsn, cluster)
			for stage, migrate := range []bool{false, true} {
				if migrate {
					start := time.Now()
					if err := store.Migrate(context.Background()); err != nil {
						t.Fatal(err)
					}
					t.Logf("migrate rewrote %d runs in %v", 3*len(teststore.StringifyBuilds), time.Since(start))
				}
				runs := teststore.Runs(t, store, "app")
				summed, err := store.FunctionsSummed(context.Background(), runs)
				if err != nil || summed != migrate {
					t.Fatalf("stage %d: function sums of this version: %v (%v), want %v", stage, summed, err, migrate)
				}
				fresh := &query.Executor{Store: store, Stacks: loader.NewCache(0)}
				for _, q := range queries {
					if got := answerJSON(t, fresh, q); got != want[q] {
						t.Errorf("stage %d (0: name-keyed rows, read from the run stacks; 1: migrated): %s answered\n %s\nwant %s", stage, q, got, want[q])
					}
				}
				checkStringifies(t, fresh)
			}
		})
	}
}

// checkStringifies checks e's over-time answers on teststore.StoreStringifies' data.
func checkStringifies(t *testing.T, e *query.Executor) {
	t.Helper()
	ctx := context.Background()
	answer := func(raw string) query.Answer {
		t.Helper()
		m, err := query.Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Answer(ctx, m, query.Range{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	var found []string
	for _, cp := range answer(`{"queryType":"changepoints","app":"app","minShare":0}`).ChangePoints {
		if strings.HasPrefix(cp.Function, "stringify") && cp.Significant {
			found = append(found, cp.Function+" at "+cp.Build)
		}
	}
	if want := []string{teststore.QsStringify + " at b3"}; !slices.Equal(found, want) {
		t.Errorf("significant change points of a stringify: %q, want %q", found, want)
	}
	for title, changed := range map[string]bool{teststore.QsStringify: true, teststore.FastStringify: false, teststore.NodeStringify: false} {
		a := answer(`{"queryType":"timeseries","app":"app","function":"` + title + `"}`)
		f := a.Frames[0]
		if v, _ := f.FieldByName(frames.FieldValue); v.Config.DisplayNameFromDS != title {
			t.Errorf("series of %s named %q", title, v.Config.DisplayNameFromDS)
		}
		cp, _ := f.FieldByName(frames.FieldChangePoint)
		for i := range cp.Len() {
			if at := cp.At(i).(float64) != 0; at != (changed && i == 3) {
				t.Errorf("%s: change point %v at build %d", title, cp.At(i), i)
			}
		}
	}
	m, err := query.Parse([]byte(`{"queryType":"timeseries","app":"app","function":"stringify"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Answer(ctx, m, query.Range{}); !errors.Is(err, query.ErrAmbiguousFunction) || !strings.Contains(err.Error(), `"`+teststore.FastStringify+`"`) {
		t.Errorf("a timeseries of a shared name: %v, want ErrAmbiguousFunction naming the titles", err)
	}
	rows := map[string]bool{}
	matrix := answer(`{"queryType":"evolution","app":"app","threshold":0}`).Frames[0]
	component, _ := matrix.FieldByName(frames.FieldComponent)
	for i := range component.Len() {
		rows[component.At(i).(string)] = true
	}
	for _, title := range []string{teststore.QsStringify, teststore.FastStringify, teststore.NodeStringify} {
		if !rows[title] {
			t.Errorf("the evolution matrix has no row %q (rows %v)", title, rows)
		}
	}
	if rows["stringify"] {
		t.Errorf("the evolution matrix has a row of the bare name")
	}
}

// nameKeyed leaves the function sums of the stored runs as ingests before
// identity keys wrote them: run functions and function timelines rows
// keyed by xxhash64 of the name alone, the runs saying so
// (functions_summed = 1). Each shard's tables are rewritten directly: a
// Distributed table refuses ALTER and TRUNCATE.
func nameKeyed(t *testing.T, store *storage.Store, dsn string, cluster bool) {
	t.Helper()
	ctx := context.Background()
	runs := teststore.Runs(t, store, "app")
	// The old rows, summed as the old migrate did: per stack its distinct
	// names, each stack once per name.
	stacks := map[uint64][]uint64{} // stack -> frame hashes
	if err := store.RunStackFrames(ctx, runs, func(h uint64, fs []uint64) error { stacks[h] = fs; return nil }); err != nil {
		t.Fatal(err)
	}
	var hashes []uint64
	for _, fs := range stacks {
		hashes = append(hashes, fs...)
	}
	names := map[uint64]string{}
	if err := store.Frames(ctx, "app", hashes, func(f storage.Frame) error { names[f.Hash] = f.Name; return nil }); err != nil {
		t.Fatal(err)
	}
	type key struct {
		run      int
		function uint64
	}
	whole, timeline := map[key]int64{}, map[key]map[uint8]int64{}
	err := store.Timeline(ctx, storage.EachRun(runs), func(r int, stack uint64, bucket int, v int64) error {
		seen := map[uint64]bool{0: false}
		for _, f := range stacks[stack] {
			seen[xxhash.Sum64String(names[f])] = true
		}
		for h := range seen {
			k := key{r, h}
			whole[k] += v
			if timeline[k] == nil {
				timeline[k] = map[uint8]int64{}
			}
			timeline[k][uint8(bucket)] += v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each shard's local tables, or the one server's.
	conns, suffix := []string{dsn}, ""
	if cluster {
		db := dsn[strings.LastIndex(dsn, "/")+1:]
		conns, suffix = nil, storage.LocalSuffix
		for _, s := range chtest.ClusterShards(t) {
			conns = append(conns, "clickhouse://default:@"+s.Addr+"/"+db)
		}
	}
	for _, c := range conns {
		conn := chtest.Conn(t, c)
		for _, sql := range []string{"ALTER TABLE runs" + suffix + " UPDATE functions_summed = 1 WHERE 1",
			"TRUNCATE TABLE run_functions" + suffix, "TRUNCATE TABLE function_timelines" + suffix} {
			if err := conn.Exec(ctx, sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		waitMutations(ctx, t, conn)
	}
	conn := chtest.Conn(t, dsn)
	sync := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	fb, err := conn.PrepareBatch(sync, "INSERT INTO run_functions (app, ingest_id, function_hash, value)")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := conn.PrepareBatch(sync, "INSERT INTO function_timelines (app, function_hash, ingest_id, time_frame, value)")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range whole {
		id := runs[k.run].IngestID
		if err := fb.Append("app", id, k.function, v); err != nil {
			t.Fatal(err)
		}
		for bucket, bv := range timeline[k] {
			if err := tb.Append("app", k.function, id, bucket, bv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tb.Send(); err != nil {
		t.Fatal(err)
	}
	if err := fb.Send(); err != nil {
		t.Fatal(err)
	}
	for _, r := range teststore.Runs(t, store, "app") {
		if r.FunctionsSummed {
			t.Fatalf("run %s/%s still says its function sums are keyed by identity", r.Build, r.Run)
		}
	}
}
