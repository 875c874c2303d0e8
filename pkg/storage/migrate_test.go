package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/profile"
)

func TestMigrateAndCheckTables(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, Options{Tables: Tables{Runs: "fd_runs", Changes: "fd_changes"}})
	if err := s.CheckTables(ctx); err == nil || !strings.Contains(err.Error(), "fd_runs is missing") {
		t.Fatalf("before migrate: %v, want fd_runs missing", err)
	}
	for i := range 2 { // idempotent
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
	}
	if err := s.CheckTables(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := s.ServerVersion(ctx); err != nil || v == "" {
		t.Fatalf("version %q, %v", v, err)
	}
	if err := s.conn.Exec(ctx, "DROP TABLE stacks"); err != nil {
		t.Fatal(err)
	}
	if err := s.conn.Exec(ctx, "ALTER TABLE fd_changes DROP COLUMN removed"); err != nil {
		t.Fatal(err)
	}
	err := s.CheckTables(ctx)
	for _, want := range []string{"table " + dbOf(t, s) + ".stacks is missing", "fd_changes lacks columns removed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckTables: %v, want it to say %q", err, want)
		}
	}
}

// Ingests written before the run stacks table or its sum columns existed
// get their rows from Migrate, once; those of invisible ingests (replaced,
// deleted) are not worth writing.
func TestMigrateSumsStacksOfEarlierIngests(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	r1, r2 := build("main;a 3", "main;b 2", "main;a 4 @t9"), build("main;a 1 @t5", "main;c 1")
	ingest(t, s, meta("a", "1", "r1"), r1)
	ingest(t, s, meta("a", "1", "r2"), r2)
	ingest(t, s, meta("b", "1", "r1"), build("main;x 1"))
	ingest(t, s, meta("a", "1", "gone"), build("main;d 1"))
	if err := s.DeleteRun(ctx, "a", "1", "gone"); err != nil {
		t.Fatal(err)
	}
	summed := func() map[string]int {
		rows, err := s.conn.Query(ctx, "SELECT app, count() FROM run_stacks WHERE first_seen != "+unsummedSQL+" GROUP BY app")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := map[string]int{}
		for rows.Next() {
			var app string
			var c uint64
			if err := rows.Scan(&app, &c); err != nil {
				t.Fatal(err)
			}
			n[app] = int(c)
		}
		return n
	}
	// (ingest, stack) pairs; a deleted run keeps its rows, as its samples.
	if got := summed(); !maps.Equal(got, map[string]int{"a": 5, "b": 1}) {
		t.Fatalf("ingest summed %v", got)
	}
	for _, before := range []struct{ name, sql string }{
		{"no table", ""},
		{"a list without sums", "CREATE TABLE run_stacks (app String, ingest_id UInt64, stack_hash UInt64) " +
			"ENGINE = MergeTree() ORDER BY (app, ingest_id, stack_hash)"},
	} {
		t.Run(before.name, func(t *testing.T) {
			if err := s.conn.Exec(ctx, "DROP TABLE run_stacks"); err != nil {
				t.Fatal(err)
			}
			if before.sql != "" {
				if err := s.conn.Exec(ctx, before.sql); err != nil {
					t.Fatal(err)
				}
				if err := s.conn.Exec(ctx, "INSERT INTO run_stacks SELECT app, ingest_id, stack_hash FROM samples "+
					"GROUP BY app, ingest_id, stack_hash"); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if err := s.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CheckTables(ctx); err != nil {
				t.Fatal(err)
			}
			if got := summed(); !maps.Equal(got, map[string]int{"a": 4, "b": 1}) {
				t.Fatalf("after migrating twice: %v", got)
			}
			runs, err := s.Runs(ctx, "a", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			equalTotals(t, perRun(t, s, runs)[0], totals(r1))
			equalTotals(t, perRun(t, s, runs)[1], totals(r2))
		})
	}
	// The sums read are the run stacks rows, not the samples: a sample row
	// added behind the store's back does not show.
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// (synchronous on a cluster, or the row could arrive after the check)
	if err := s.conn.Exec(syncInserts(ctx), "INSERT INTO samples (app, ingest_id, stack_hash, value) SELECT app, ingest_id, stack_hash, 1000 "+
		"FROM samples WHERE ingest_id = ? LIMIT 1", runs[0].IngestID); err != nil {
		t.Fatal(err)
	}
	equalTotals(t, perRun(t, s, runs)[0], totals(r1))
}

// An ingest commits saying that its stack sums are written, and readers
// take its run stacks rows as they are; for a run without that mark (an
// ingest of an older version) they count the rows first, and read the
// samples when the count is off.
func TestStacksSummedMark(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	p := build("main;a 3", "main;b 2")
	ingest(t, s, meta("a", "1", "r1"), p)
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !runs[0].StacksSummed {
		t.Fatal("a run ingested now is not marked as summed")
	}
	// A summed row too many: a count that does not match the run's stacks.
	if err := s.conn.Exec(syncInserts(ctx), "INSERT INTO run_stacks (app, ingest_id, stack_hash, value, first_seen) "+
		"SELECT app, ingest_id, stack_hash, 1000, first_seen FROM run_stacks WHERE ingest_id = ? LIMIT 1", runs[0].IngestID); err != nil {
		t.Fatal(err)
	}
	marked := perRun(t, s, runs)[0]
	var extra int64
	for k, v := range marked {
		extra += v - totals(p)[k]
	}
	if extra != 1000 {
		t.Errorf("marked run: read %v, want the run stacks rows as they are (1000 over %v)", marked, totals(p))
	}
	runs[0].StacksSummed = false
	equalTotals(t, perRun(t, s, runs)[0], totals(p))
}

// The packed frame columns read alike whether an ingest wrote them
// (packFrames) or the server computes them from frame_hashes (rows written
// before the columns existed), for hashes with and without their top bit
// and with trailing zero bytes.
func TestPackedFramesMatchTheServer(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	r := rand.New(rand.NewPCG(3, 5))
	stacks := [][]uint64{{}, {0}, {1 << 63}, {1<<63 - 1, math.MaxUint64}, {0x0100000000000000, 0x8000000000000001, 256}}
	for range 50 {
		stack := make([]uint64, 1+r.IntN(40))
		for i := range stack {
			stack[i] = r.Uint64() >> (8 * r.IntN(8)) << (8 * r.IntN(8))
		}
		stacks = append(stacks, stack)
	}
	b, err := s.conn.PrepareBatch(syncInserts(ctx), "INSERT INTO "+s.q.stacks+" (app, stack_hash, frame_hashes)")
	if err != nil {
		t.Fatal(err)
	}
	for i, stack := range stacks {
		if err := b.Append("older", uint64(i), stack); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	ingest(t, s, meta("newer", "1", "r1"), build("main;a 3", "main;b;c 2"))
	for _, app := range []string{"older", "newer"} {
		rows, err := s.conn.Query(ctx, "SELECT frame_hashes, frame_bytes, frame_tops FROM "+s.q.stacks+" WHERE app = ?", app)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ; rows.Next(); n++ {
			var frames []uint64
			var packed, tops string
			if err := rows.Scan(&frames, &packed, &tops); err != nil {
				t.Fatal(err)
			}
			if p, tp := packFrames(frames); p != packed || tp != tops {
				t.Errorf("%s: frames %x read packed as %x %q, want %x %q", app, frames, packed, tops, p, tp)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"older": len(stacks), "newer": 2}[app]; n != want {
			t.Errorf("%s: %d stacks, want %d", app, n, want)
		}
	}
	var got [][]uint64
	if err := s.StackFrames(ctx, "older", []uint64{3, 4}, func(_ uint64, frames []uint64) error {
		got = append(got, slices.Clone(frames))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b []uint64) int { return len(a) - len(b) })
	if !slices.EqualFunc(got, stacks[3:5], slices.Equal) {
		t.Errorf("read back %x, want %x", got, stacks[3:5])
	}
}

// Migrate upgrades tables of an older version that hold rows: their runs
// are read as unmarked (their sums counted), their stacks' packed frames
// are computed from frame_hashes, and their frames have no source
// position until an ingest gives one.
func TestMigrateUpgradesRunsAndStacks(t *testing.T) {
	ctx := context.Background()
	if chtest.OnCluster() {
		t.Skip("rebuilds the tables by hand, as single tables")
	}
	s := newStore(t, Options{})
	p := build("main;a 3", "main;b;c 2")
	ingest(t, s, meta("a", "1", "r1"), p)
	for _, sql := range []string{
		"CREATE TABLE old_stacks ENGINE = MergeTree() ORDER BY (app, stack_hash) AS SELECT app, stack_hash, frame_hashes FROM stacks",
		"DROP TABLE stacks", "RENAME TABLE old_stacks TO stacks",
		"CREATE TABLE old_runs ENGINE = MergeTree() ORDER BY (app, build, run, committed_ns) AS " +
			"SELECT * FROM runs", // every column, then drop the new one
		"ALTER TABLE old_runs DROP COLUMN stacks_summed", "ALTER TABLE old_runs DROP COLUMN functions_summed",
		"DROP TABLE runs", "RENAME TABLE old_runs TO runs", "DROP TABLE run_functions",
		"CREATE TABLE old_frames ENGINE = ReplacingMergeTree() ORDER BY (app, frame_hash) AS SELECT app, frame_hash, name, module FROM frames",
		"DROP TABLE frames", "RENAME TABLE old_frames TO frames",
	} {
		if err := s.conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := s.CheckTables(ctx); err == nil || !strings.Contains(err.Error(), "frame_bytes") || !strings.Contains(err.Error(), "stacks_summed, functions_summed") ||
		!strings.Contains(err.Error(), "file, line") || !strings.Contains(err.Error(), "run_functions is missing") {
		t.Fatalf("before migrate: %v, want the new columns missing", err)
	}
	// what the data source tells apart to say "run flamediff migrate"
	var ex *clickhouse.Exception
	if _, err := s.Runs(ctx, "a", nil, nil); !errors.As(err, &ex) || ex.Code != 16 && ex.Code != 47 {
		t.Errorf("runs before migrate: %v, want ClickHouse's missing column (16 or 47)", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTables(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].StacksSummed || runs[0].FunctionsSummed {
		t.Fatalf("runs %+v, want one, not marked", runs)
	}
	equalTotals(t, perRun(t, s, runs)[0], totals(p))
	// Migrate summed the run's functions from its stacks.
	if got, want := functionValues(t, s, runs, "main", "a", "b", "c"), map[string]int64{"main": 5, "a": 3, "b": 2, "c": 2}; got == nil || !maps.Equal(got[0], want) {
		t.Errorf("function sums after migrate %v, want %v", got, want)
	}
	if got := frameSources(t, s, "a"); got["main"] != ":0" || got["c"] != ":0" {
		t.Errorf("old frames %v, want no source", got)
	}
	// A later ingest that knows a frame's source gives it to the old row.
	q := build("main;a 1")
	q.Frames[q.Intern(profile.Frame{Name: "main"})].File = "/src/main.go"
	q.Frames[q.Intern(profile.Frame{Name: "main"})].Line = 7
	ingest(t, s, meta("a", "2", "r1"), q)
	if got := frameSources(t, s, "a"); got["main"] != "/src/main.go:7" || got["a"] != ":0" {
		t.Errorf("frames after an ingest with sources %v", got)
	}
}

// frameSources reads every frame of app as name -> "file:line".
func frameSources(t *testing.T, s *Store, app string) map[string]string {
	t.Helper()
	runs, err := s.Runs(context.Background(), app, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := s.stackTexts(context.Background(), runs, func(_ uint64, frames []Frame) error {
		for _, f := range frames {
			got[f.Name] = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// perRun reads the per-run stack values of runs as stack texts.
func perRun(t *testing.T, s *Store, runs []Run) []map[string]int64 {
	t.Helper()
	ctx := context.Background()
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		var names []string
		for _, f := range frames {
			names = append(names, f.Name+"@"+f.Module)
		}
		text[h] = strings.Join(names, ";")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	groups := make([][]Run, len(runs))
	got := make([]map[string]int64, len(runs))
	for i := range runs {
		groups[i], got[i] = runs[i:i+1], map[string]int64{}
	}
	if err := s.StackValues(ctx, groups, func(g int, h uint64, v int64, _ uint64) error {
		got[g][text[h]] += v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func dbOf(t *testing.T, s *Store) string {
	t.Helper()
	var db string
	if err := s.conn.QueryRow(context.Background(), "SELECT currentDatabase()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMigrateCreatesDatabase(t *testing.T) {
	ctx := context.Background()
	base := openStore(t, Options{}) // its fresh database is dropped at the end
	o := base.opts
	o.Auth.Database = dbOf(t, base) + "_new"
	t.Cleanup(func() { _ = base.conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+o.Auth.Database) })
	s, err := Open(Options{ClickHouse: &o})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err == nil {
		t.Fatal("ping succeeded before the database exists")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTables(ctx); err != nil {
		t.Fatal(err)
	}
}
