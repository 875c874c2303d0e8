package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/changes"
)

// onShard runs a query returning one UInt64 on one shard of the private
// cluster, in the store's database.
func onShard(t *testing.T, s *Store, shard int, query string, args ...any) uint64 {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{chtest.ClusterShards(t)[shard].Addr},
		Auth: clickhouse.Auth{Database: s.opts.Auth.Database}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n uint64
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("shard %d: %s: %v", shard+1, query, err)
	}
	return n
}

func TestMigrateCluster(t *testing.T) {
	ctx := context.Background()
	s := clusterStore(t, Options{})
	check := func() {
		t.Helper()
		for shard := range chtest.ClusterShards(t) {
			for _, name := range []string{"runs", "stacks", "frames", "samples", "run_stacks", "changes"} {
				if n := onShard(t, s, shard, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = ? AND engine = 'Distributed'", name); n != 1 {
					t.Errorf("shard %d: no Distributed table %s", shard+1, name)
				}
				if n := onShard(t, s, shard, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = ? AND engine LIKE '%MergeTree'", name+LocalSuffix); n != 1 {
					t.Errorf("shard %d: no MergeTree table %s", shard+1, name+LocalSuffix)
				}
			}
		}
		if err := s.CheckTables(ctx); err != nil {
			t.Error(err)
		}
		summary, err := s.CheckCluster(ctx)
		if err != nil || !strings.Contains(summary, "cluster "+chtest.ClusterName+": 2 shards") {
			t.Errorf("CheckCluster: %q, %v", summary, err)
		}
	}
	check()
	// Migrating again completes a shard that lost tables and keeps data.
	ingest(t, s, meta("a", "b", "r"), build("main;x 1", "main;y 2", "z 3"))
	shard2, err := clickhouse.Open(&clickhouse.Options{Addr: []string{chtest.ClusterShards(t)[1].Addr}, Auth: clickhouse.Auth{Database: s.opts.Auth.Database}})
	if err != nil {
		t.Fatal(err)
	}
	defer shard2.Close()
	// An older version's tables: a column missing on shard 2.
	for _, stmt := range []string{"DROP TABLE changes", "DROP TABLE changes_local",
		"ALTER TABLE runs DROP COLUMN branch", "ALTER TABLE runs_local DROP COLUMN branch",
		"ALTER TABLE frames DROP COLUMN file", "ALTER TABLE frames_local DROP COLUMN file",
		"ALTER TABLE frames DROP COLUMN line", "ALTER TABLE frames_local DROP COLUMN line"} {
		if err := shard2.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MigrateCluster(ctx, chtest.ClusterName); err != nil {
		t.Fatal(err)
	}
	check()
	if n := onShard(t, s, 1, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND name = 'branch'"); n != 2 {
		t.Errorf("column branch in %d tables of shard 2 after migrate, want runs and runs_local", n)
	}
	if n := onShard(t, s, 1, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND name IN ('file', 'line')"); n != 4 {
		t.Errorf("columns file and line in %d tables of shard 2 after migrate, want frames and frames_local", n)
	}
	equalTotals(t, export(t, s, "a", "b", "r"), totals(build("main;x 1", "main;y 2", "z 3")))

	if err := s.MigrateCluster(ctx, "no_such_cluster"); err == nil || !strings.Contains(err.Error(), "not in system.clusters") {
		t.Errorf("unknown cluster: %v", err)
	}
}

// The same runs read through a cluster and from one server give the same
// answers, and the rows of a run share a shard.
func TestClusterReadsMatchSingleNode(t *testing.T) {
	ctx := context.Background()
	single, cluster := singleStore(t, Options{}), clusterStore(t, Options{})
	profiles := map[string][]string{
		"r1": {"main;parse;lex 5 @t10", "main;parse 3 @t20", "main;eval 7 @t900"},
		"r2": {"main;parse;lex 4 @t5", "main;eval 9 @t400", "gc 2 @t600"},
		"r3": {"main;eval 1", "main;render 6", "gc 3"},
	}
	for _, s := range []*Store{single, cluster} {
		for i, run := range []string{"r1", "r2", "r3"} {
			ingest(t, s, meta("app", fmt.Sprintf("b%d", i%2), run), build(profiles[run]...))
		}
		if err := s.SaveChanges(ctx, "app", "b1", changes.Changes{Modified: []string{"main.eval"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Ingest ids are random: re-ingest a run until both shards hold
	// visible rows, so that the reads below do merge shards.
	visibleOn := func(shard int) uint64 {
		return onShard(t, cluster, shard, "SELECT count() FROM samples_local WHERE ingest_id IN "+
			"(SELECT argMax(ingest_id, committed_ns) FROM runs GROUP BY app, build, run)")
	}
	for try := 0; visibleOn(0) == 0 || visibleOn(1) == 0; try++ {
		if try == 30 {
			t.Fatal("every ingest landed on one shard")
		}
		ingest(t, cluster, meta("app", "b0", "r3"), build(profiles["r3"]...))
	}
	type answers struct {
		apps     []string
		builds   []Build
		runs     []Run
		export   map[string]int64
		values   map[string]int64
		timeline map[string]int64
		search   []string
		changes  map[string]changes.Changes
	}
	read := func(s *Store) answers {
		var a answers
		var err error
		if a.apps, err = s.Apps(ctx); err != nil {
			t.Fatal(err)
		}
		a.apps = slices.Compact(a.apps) // 18.16 may repeat rows of DISTINCT + IN + ORDER BY on one server (fixed on branch robust-ds)
		if a.builds, err = s.Builds(ctx, "app"); err != nil {
			t.Fatal(err)
		}
		if a.runs, err = s.Runs(ctx, "app", nil, nil); err != nil {
			t.Fatal(err)
		}
		groups := [][]Run{{a.runs[0], a.runs[1]}, {a.runs[2]}}
		for i := range a.runs {
			a.runs[i].IngestID, a.runs[i].CommittedAt = 0, time.Time{} // differ per ingest
		}
		a.export = export(t, s, "app", "b0", "r1")
		a.values, a.timeline = map[string]int64{}, map[string]int64{}
		err = s.StackValues(ctx, groups, func(g int, h uint64, v int64, first uint64) error {
			a.values[fmt.Sprint(g, h, first)] += v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Timeline(ctx, groups, func(g int, h uint64, tf int, v int64) error {
			a.timeline[fmt.Sprint(g, h, tf)] += v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a.search, err = s.SearchFunctions(ctx, "app", "e", 0); err != nil {
			t.Fatal(err)
		}
		if a.changes, err = s.Changes(ctx, "app", []string{"b0", "b1"}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	want, got := read(single), read(cluster)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cluster answers\n%+v\nsingle server\n%+v", got, want)
	}
	if len(want.values) < 5 || len(want.search) < 2 {
		t.Fatalf("too little data to compare: %+v", want)
	}
	// Each ingest's samples and stack list sit on one shard.
	for _, table := range []string{"samples_local", "run_stacks_local"} {
		spread := onShard(t, cluster, 0, "SELECT count() FROM "+table+" WHERE ingest_id IN (SELECT ingest_id FROM remote(?, currentDatabase(), ?))",
			chtest.ClusterShards(t)[1].Addr, table)
		if spread != 0 {
			t.Errorf("%s: %d rows of shard 1 belong to ingests that shard 2 has rows of too", table, spread)
		}
	}
}

// A run is complete the moment its ingest returns: the commit is written
// only after every shard stored the run's rows.
func TestClusterRunCompleteWhenIngestReturns(t *testing.T) {
	s := clusterStore(t, Options{BatchRows: 2000})
	p, _ := generate(20_000, 5_000)
	want := totals(p)
	for i := range 6 {
		run := fmt.Sprint("r", i)
		ingest(t, s, meta("a", "b", run), p)
		got := export(t, s, "a", "b", run)
		if !maps.Equal(got, want) {
			var sum int64
			for _, v := range got {
				sum += v
			}
			t.Fatalf("run %s read right after its ingest: %d stacks, total %d; want %d stacks, total %d",
				run, len(got), sum, len(want), p.Total())
		}
	}
}

// A shard that dies during an ingest fails it, and nothing of the run
// becomes visible, not even once the shard is back.
func TestClusterShardKilledMidIngest(t *testing.T) {
	ctx := context.Background()
	s := clusterStore(t, Options{BatchRows: 500})
	shard := chtest.ClusterShards(t)[1]
	t.Cleanup(func() {
		if err := shard.Restart(context.Background()); err != nil && !strings.Contains(err.Error(), "is running") {
			t.Error(err)
		}
	})
	kept := build("main;old 1")
	ingest(t, s, meta("a", "b", "kept"), kept)
	p, _ := generate(20_000, 5_000)
	killed := false
	err := s.Write(ctx, meta("a", "b", "lost"), p, func(done, total int) {
		if !killed && done > total/2 {
			shard.Kill()
			killed = true
		}
	})
	if !killed || err == nil {
		t.Fatalf("ingest with a shard killed half way: killed %v, err %v", killed, err)
	}
	if err := shard.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// Stacks go to both shards by hash: the live one got its share.
	if n := onShard(t, s, 0, "SELECT count() FROM stacks_local"); n < 100 {
		t.Fatalf("%d stacks reached the live shard before the kill: the test proves nothing", n)
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Run != "kept" {
		t.Fatalf("runs %+v, want only \"kept\"", runs)
	}
	if _, err := s.Export(ctx, "a", "b", "lost"); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("export of the failed run: %v, want ErrUnknownRun", err)
	}
	// Ingesting it again works and gives the whole run.
	ingest(t, s, meta("a", "b", "lost"), p)
	if got := export(t, s, "a", "b", "lost"); !maps.Equal(got, totals(p)) {
		t.Errorf("the run ingested again reads %d stacks, want %d", len(got), len(totals(p)))
	}
}

// Reads detect Distributed tables; a distributed override that
// contradicts the tables, a shard down and a missing local table are
// reported by CheckCluster.
func TestClusterChecks(t *testing.T) {
	ctx := context.Background()
	on, off := true, false
	cluster := clusterStore(t, Options{})
	ingest(t, cluster, meta("a", "b", "r"), build("main;x 1"))
	for _, c := range []struct {
		name string
		s    *Store
		want string
	}{
		{"off on a cluster", openDSN(t, dsnOf(cluster), Options{Distributed: &off}), "is off but 8 tables are Distributed"},
		{"on on one server", func() *Store { s := singleStore(t, Options{}); s.override = &on; return s }(), "is on but no table is Distributed"},
	} {
		if _, err := c.s.CheckCluster(ctx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// The detection is what makes reads work: forced IN fails (code 288).
	if _, err := openDSN(t, dsnOf(cluster), Options{Distributed: &off}).Apps(ctx); err == nil {
		t.Error("forced IN over Distributed tables worked: the detection is not what the reads need")
	}
	if summary, err := singleStore(t, Options{}).CheckCluster(ctx); summary != "" || err != nil {
		t.Errorf("one server: %q, %v", summary, err)
	}

	shard := chtest.ClusterShards(t)[1]
	shard2, err := clickhouse.Open(&clickhouse.Options{Addr: []string{shard.Addr}, Auth: clickhouse.Auth{Database: cluster.opts.Auth.Database}})
	if err != nil {
		t.Fatal(err)
	}
	defer shard2.Close()
	if err := shard2.Exec(ctx, "DROP TABLE frames_local"); err != nil {
		t.Fatal(err)
	}
	_, err = cluster.CheckCluster(ctx)
	if want := fmt.Sprintf("shard 2 replica 1 (%s) of cluster %s lacks local tables %s.frames_local", shard.Addr, chtest.ClusterName, cluster.opts.Auth.Database); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("local table missing: %v, want %q", err, want)
	}
	t.Cleanup(func() {
		if err := shard.Restart(context.Background()); err != nil && !strings.Contains(err.Error(), "is running") {
			t.Error(err)
		}
	})
	shard.Kill()
	_, err = cluster.CheckCluster(ctx)
	if want := fmt.Sprintf("shard 2 replica 1 (%s) of cluster %s is down", shard.Addr, chtest.ClusterName); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("shard down: %v, want %q", err, want)
	}
}

func dsnOf(s *Store) string {
	return fmt.Sprintf("clickhouse://default:@%s/%s", s.opts.Addr[0], s.opts.Auth.Database)
}

// A representative part of the suite runs on the cluster in every run
// (FLAMEDIFF_CLICKHOUSE_CLUSTER=1 runs all of it there, in about twice
// the time).
func TestSuiteOnCluster(t *testing.T) {
	t.Setenv(chtest.ClusterEnv, "1")
	for _, test := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"IngestExportRoundTrip", TestIngestExportRoundTrip}, {"InterruptedIngestIsInvisible", TestInterruptedIngestIsInvisible},
		{"AppsBuildsAndDelete", TestAppsBuildsAndDelete}, {"StackValuesAndStacks", TestStackValuesAndStacks},
		{"FirstSeenAndTimeline", TestFirstSeenAndTimeline}, {"SearchFunctions", TestSearchFunctions}, {"GC", TestGC},
		{"ReingestReplaces", TestReingestReplaces}, {"PackedFramesMatchTheServer", TestPackedFramesMatchTheServer},
	} {
		t.Run(test.name, test.run)
	}
}
