package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/profile"
)

func TestOpenRejectsBadIdentifiers(t *testing.T) {
	tests := []struct {
		name    string
		tables  Tables
		db      string
		wantErr string
	}{
		{"defaults", Tables{}, "flamediff", ""},
		{"qualified", Tables{Runs: "other.runs_dist", Samples: "_s1"}, "", ""},
		{"quote", Tables{Runs: "runs`; DROP TABLE x"}, "", "runs table: invalid identifier"},
		{"space", Tables{Frames: "my frames"}, "", "frames table: invalid identifier"},
		{"leading digit", Tables{Stacks: "1stacks"}, "", "stacks table: invalid identifier"},
		{"empty part", Tables{Changes: "db..changes"}, "", "changes table: invalid identifier"},
		{"trailing dot", Tables{Samples: "db."}, "", "samples table: invalid identifier"},
		{"bad database", Tables{}, "flame-diff", "database: invalid identifier"},
		{"dotted database", Tables{}, "a.b", "database: invalid identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(Options{ClickHouse: &clickhouse.Options{Auth: clickhouse.Auth{Database: tt.db}}, Tables: tt.tables})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

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

func TestIngestExportRoundTrip(t *testing.T) {
	s := newStore(t, Options{BatchRows: 3}) // several INSERTs per table
	tests := []struct {
		name string
		meta RunMeta
		p    *profile.Profile
	}{
		{"untimed", meta("app", "1.0", "r1"), build("main;a;b 5", "main;a 2", "main;a;b 7", "main;c 1")},
		{"timed", meta("app", "1.0", "r2"), build("main;a 5 @t10", "main;b 3 @t900", "main;a 1 @t999")},
		{"modules", meta("mods", "1.0", "r3"), build("main@/bin/app;read@libc.so.6 4", "main@/bin/app;read@/bin/app 6")}, // an app of its own: its main is the main of the others
		{"hostile names", RunMeta{App: `o'hare "app"`, Build: `b\'; DROP TABLE runs; --`, Run: "ран 🚀"},
			build(`it's;back\slash;'; DROP TABLE frames; -- 3`, "日本語;\t tab;?;%_ 4", `\0;\';\\ 1`)},
		{"zero value", meta("app", "1.0", "r4"), build("main;idle 0", "main;busy 9")},
		{"source positions", meta("app", "1.0", "r5"), withSources(build("main;a 2", "main;b 3"),
			map[string]profile.Frame{"main": {File: "/src/main.go", Line: 10}, "b": {File: "C:\\src\\b, \"x\".go", Line: 1 << 40}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ingest(t, s, tt.meta, tt.p)
			equalTotals(t, export(t, s, tt.meta.App, tt.meta.Build, tt.meta.Run), totals(tt.p))
			exported := exportProfile(t, s, tt.meta.App, tt.meta.Build, tt.meta.Run)
			for _, f := range tt.p.Frames {
				g := exported.Frames[exported.Intern(profile.Frame{Name: f.Name, Module: f.Module})]
				if g.File != f.File || g.Line != f.Line {
					t.Errorf("frame %q: source %q:%d, want %q:%d", f.Name, g.File, g.Line, f.File, f.Line)
				}
			}
			runs, err := s.Runs(context.Background(), tt.meta.App, []string{tt.meta.Build}, []string{tt.meta.Run})
			if err != nil {
				t.Fatal(err)
			}
			if r := runs[0]; r.Total != tt.p.Total() || r.Samples != uint64(len(tt.p.Samples)) || r.Run != tt.meta.Run {
				t.Errorf("run %+v, want total %d, %d samples", r, tt.p.Total(), len(tt.p.Samples))
			}
		})
	}
	// A whole build sums its runs.
	var want []map[string]int64
	for _, tt := range tests {
		if tt.meta.App == "app" {
			want = append(want, totals(tt.p))
		}
	}
	equalTotals(t, export(t, s, "app", "1.0", ""), sumTotals(want...))
}

func TestExportKeepsFirstSeenOrder(t *testing.T) {
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "b", "r"), build("z 1", "m;x 2", "a 3", "z 4"))
	p, err := s.Export(context.Background(), "a", "b", "r")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, smp := range p.Samples {
		got = append(got, strings.Join(p.Names(smp.Stack), ";"))
	}
	if want := "z m;x a"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestRunMetadataRoundTrip(t *testing.T) {
	s := newStore(t, Options{})
	start := time.Date(2024, 2, 29, 23, 59, 58, 123456789, time.UTC)
	m := RunMeta{App: "a", Build: "b", Run: "r", Start: start, Duration: 3 * time.Second,
		Commit: "abc123", Branch: "feature/x", Labels: map[string]string{"host": "ci-1", "kéy": "vä'lue"}}
	p := build("main;a 5 @t100", "main;b 3 @t2999999999")
	p.SampleType, p.Unit = "wall", "nanoseconds"
	ingest(t, s, m, p)
	runs, err := s.Runs(context.Background(), "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if !r.Start.Equal(start) || r.Duration != m.Duration || r.Commit != m.Commit || r.Branch != m.Branch ||
		r.SampleType != "wall" || r.Unit != "nanoseconds" || r.Total != 8 || r.Stacks != 2 ||
		r.Buckets != TimeBuckets || r.BucketNs != uint64(3*time.Second)/TimeBuckets ||
		len(r.Labels) != 2 || r.Labels["kéy"] != "vä'lue" || r.Labels["host"] != "ci-1" || r.IngestID == 0 {
		t.Errorf("run %+v does not match %+v", r, m)
	}
}

func TestReingestReplaces(t *testing.T) {
	s := newStore(t, Options{})
	first, second := build("main;a 5", "main;b 1"), build("main;a 2", "main;c 9")
	ingest(t, s, meta("a", "b", "r"), first)
	ingest(t, s, meta("a", "b", "r"), second)
	ingest(t, s, meta("a", "b", "r"), second) // same data again: still no doubling
	equalTotals(t, export(t, s, "a", "b", "r"), totals(second))
	// A stack is stored once, by the first ingest that has it (main;a is
	// in all three), not once per ingest.
	if n := count(t, s, "SELECT count() FROM stacks"); n != 3 {
		t.Errorf("%d stack rows for the 3 distinct stacks", n)
	}
	runs, err := s.Runs(context.Background(), "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Total != second.Total() {
		t.Errorf("runs %+v, want one with total %d", runs, second.Total())
	}
}

func TestInterruptedIngestIsInvisible(t *testing.T) {
	s := newStore(t, Options{BatchRows: 1})
	old := build("main;old 1")
	ingest(t, s, meta("a", "b", "kept"), old)
	tests := []struct {
		name     string
		run      string
		stopAt   int // cancel once this many rows are written
		wantRuns int
	}{
		{"after frames", "new", 1, 1},
		{"before commit row", "new", 10, 1}, // 4 frames + 3 stacks + 3 sample rows written
		{"re-ingest of a visible run", "kept", 8, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			before := count(t, s, "SELECT count() FROM samples")
			err := s.Write(ctx, meta("a", "b", tt.run), build("main;x 1", "main;y 2", "z 3"), func(done, total int) {
				if done >= tt.stopAt {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ingest: %v, want context.Canceled", err)
			}
			if tt.stopAt >= 10 && count(t, s, "SELECT count() FROM samples") != before+3 {
				t.Fatal("sample rows were not written before the cancel: the test proves nothing")
			}
			runs, err := s.Runs(context.Background(), "a", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != tt.wantRuns || runs[0].Run != "kept" {
				t.Fatalf("runs %+v, want only \"kept\"", runs)
			}
			equalTotals(t, export(t, s, "a", "b", "kept"), totals(old))
		})
	}
}

func TestIngestRejectsBadInput(t *testing.T) {
	s := newStore(t, Options{})
	good := build("main 1")
	tests := []struct {
		name    string
		meta    RunMeta
		p       *profile.Profile
		wantErr string
	}{
		{"empty app", meta("", "b", "r"), good, "app is empty"},
		{"empty build", meta("a", "", "r"), good, "build is empty"},
		{"empty run", meta("a", "b", ""), good, "run is empty"},
		{"bad utf-8 run", meta("a", "b", "r\xff"), good, "run \"r\\xff\" is not valid UTF-8"},
		{"empty label key", RunMeta{App: "a", Build: "b", Run: "r", Labels: map[string]string{"": "v"}}, good, "label key is empty"},
		{"negative duration", RunMeta{App: "a", Build: "b", Run: "r", Duration: -1}, good, "negative duration"},
		{"start before 1970", RunMeta{App: "a", Build: "b", Run: "r", Start: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}, good, "outside 1970-2105"},
		{"nil profile", meta("a", "b", "r"), nil, "no samples"},
		{"no samples", meta("a", "b", "r"), &profile.Profile{}, "no samples"},
		{"bad frame index", meta("a", "b", "r"), &profile.Profile{Samples: []profile.Sample{{Stack: []uint32{3}, Value: 1}}}, "out of range"},
		{"negative value", meta("a", "b", "r"), build("main -4"), "negative value"},
		{"bad utf-8 frame", meta("a", "b", "r"), build("ma\xffin 1"), "frame 0 name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Write(context.Background(), tt.meta, tt.p, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
	if n := count(t, s, "SELECT count() FROM frames"); n != 0 {
		t.Errorf("%d frame rows written by rejected ingests", n)
	}
}

func TestSelectionErrors(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	ingest(t, s, meta("a", "1.0", "r1"), build("main 1"))
	ingest(t, s, meta("a", "1.1", "r1"), build("main 2"))
	ingest(t, s, meta("a", "1.1", "r2"), build("main 3"))
	tests := []struct {
		name      string
		app       string
		builds    []string
		runs      []string
		wantErr   error
		wantMsg   string
		wantTotal int64
	}{
		{"all runs", "a", nil, nil, nil, "", 6},
		{"one build", "a", []string{"1.1"}, nil, nil, "", 5},
		{"run in two builds", "a", []string{"1.0", "1.1"}, []string{"r1"}, nil, "", 3},
		{"unknown app", "nope", nil, nil, ErrUnknownApp, `unknown app "nope"`, 0},
		{"hostile app", "a' OR '1'='1", nil, nil, ErrUnknownApp, "unknown app", 0},
		{"unknown build", "a", []string{"1.0", "2.0"}, nil, ErrUnknownBuild, `unknown build "2.0" of app "a"`, 0},
		{"unknown run", "a", []string{"1.0"}, []string{"r2"}, ErrUnknownRun, `unknown run "r2" in builds "1.0"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tt.app, tt.builds, tt.runs)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("error %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, r := range runs {
				total += r.Total
			}
			if total != tt.wantTotal {
				t.Errorf("total of runs %d, want %d", total, tt.wantTotal)
			}
		})
	}
	if err := s.StackValues(ctx, nil, nil); !errors.Is(err, ErrNoRuns) {
		t.Errorf("StackValues of no runs: %v, want ErrNoRuns", err)
	}
	if _, err := s.Export(ctx, "a", "1.0", "r9"); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("Export of unknown run: %v, want ErrUnknownRun", err)
	}
}

func TestAppsBuildsAndDelete(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	at := func(app, build, run string, day int) RunMeta {
		m := meta(app, build, run)
		m.Start = time.Date(2024, 1, day, 0, 0, 0, 0, time.UTC)
		return m
	}
	ingest(t, s, at("web", "2.0", "r1", 5), build("main 1"))
	ingest(t, s, at("web", "1.0", "r1", 3), build("main 1"))
	ingest(t, s, at("web", "1.0", "r2", 4), build("main 1"))
	ingest(t, s, at("ios", "9", "r1", 1), build("main 1"))
	apps, err := s.Apps(ctx)
	if err != nil || strings.Join(apps, ",") != "ios,web" {
		t.Fatalf("apps %v, %v", apps, err)
	}
	builds, err := s.Builds(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(builds) != 2 || builds[0].Name != "1.0" || builds[0].Runs != 2 || !builds[0].Time.Equal(time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)) ||
		builds[1].Name != "2.0" || builds[1].Runs != 1 {
		t.Errorf("builds %+v", builds)
	}

	if err := s.DeleteRun(ctx, "ios", "9", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRun(ctx, "ios", "9", "r1"); !errors.Is(err, ErrUnknownApp) {
		t.Errorf("second delete: %v, want ErrUnknownApp (its only run is gone)", err)
	}
	if apps, err := s.Apps(ctx); err != nil || strings.Join(apps, ",") != "web" {
		t.Errorf("apps after delete %v, %v", apps, err)
	}
	if _, err := s.Builds(ctx, "ios"); !errors.Is(err, ErrUnknownApp) {
		t.Errorf("builds of deleted app: %v", err)
	}
	ingest(t, s, at("ios", "9", "r1", 1), build("main 7")) // back again
	equalTotals(t, export(t, s, "ios", "9", "r1"), map[string]int64{"main@": 7})
}

func TestStackValuesAndStacks(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	base1 := build("main;a 4", "main;b 2")
	base2 := build("main;a 6", "main;c 1")
	head1 := build("main;a 10", "main;b 2")
	ingest(t, s, meta("a", "base", "1"), base1)
	ingest(t, s, meta("a", "base", "2"), base2)
	ingest(t, s, meta("a", "head", "1"), head1)
	runsOf := func(build string) []Run {
		r, err := s.Runs(ctx, "a", []string{build}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base, head := runsOf("base"), runsOf("head")
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, append(base, head...), func(h uint64, frames []Frame) error {
		var names []string
		for _, f := range frames {
			if f.Hash != FrameHash(f.Name, f.Module, f.Inlined) {
				t.Errorf("frame %+v has a wrong hash", f)
			}
			names = append(names, f.Name+"@"+f.Module)
		}
		if _, dup := text[h]; dup {
			t.Errorf("stack %x visited twice", h)
		}
		text[h] = strings.Join(names, ";")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(text) != 3 {
		t.Errorf("stacks %v, want 3", text)
	}
	tests := []struct {
		name   string
		groups [][]Run
		want   []map[string]int64
		shared bool // a run in two groups: one row per run and stack
	}{
		{"per side", [][]Run{base, head}, []map[string]int64{sumTotals(totals(base1), totals(base2)), totals(head1)}, false},
		{"per run", [][]Run{base[:1], base[1:], head}, []map[string]int64{totals(base1), totals(base2), totals(head1)}, false},
		{"run in two groups", [][]Run{base, base[:1]}, []map[string]int64{sumTotals(totals(base1), totals(base2)), totals(base1)}, true},
	}
	// The same sums whether the run stacks rows hold them, hold an ingest
	// twice (two migrates at once: that ingest is read from the samples)
	// or are missing (not migrated yet). The last two happen to ingests of
	// older versions, whose runs are not marked as summed.
	older := func(groups [][]Run) [][]Run {
		out := make([][]Run, len(groups))
		for i, g := range groups {
			out[i] = slices.Clone(g)
			for j := range out[i] {
				out[i][j].StacksSummed = false
			}
		}
		return out
	}
	for _, state := range []struct {
		name, sql string
		older     bool
	}{
		{"summed", "", false},
		{"summed, older ingests", "", true},
		{"an ingest twice", "INSERT INTO run_stacks SELECT * FROM run_stacks WHERE ingest_id = " + fmt.Sprint(base[0].IngestID), true},
		{"none", "TRUNCATE TABLE run_stacks", true},
	} {
		if state.sql != "" {
			// synchronous on a cluster: rows queued for a shard would
			// arrive in the middle of the reads below
			if err := s.conn.Exec(syncInserts(ctx), state.sql); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range tests {
			t.Run(state.name+"/"+tt.name, func(t *testing.T) {
				groups := tt.groups
				if state.older {
					groups = older(groups)
				}
				got := make([]map[string]int64, len(groups))
				for i := range got {
					got[i] = map[string]int64{}
				}
				err := s.StackValues(ctx, groups, func(g int, h uint64, v int64, _ uint64) error {
					if _, dup := got[g][text[h]]; dup && !tt.shared {
						t.Errorf("group %d, stack %s visited twice", g, text[h])
					}
					got[g][text[h]] += v
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := range got {
					equalTotals(t, got[i], tt.want[i])
				}
			})
		}
	}
	stop := errors.New("stop")
	if err := s.StackValues(ctx, older([][]Run{base}), func(int, uint64, int64, uint64) error { return stop }); err != stop {
		t.Errorf("visit error %v, want it returned as is", err)
	}
	if err := s.StackValues(ctx, [][]Run{{{App: "a", Build: "x", Run: "y"}}}, nil); err == nil {
		t.Error("a run without ingest id was accepted")
	}
}

func TestFirstSeenAndTimeline(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	m := meta("a", "b", "timed")
	m.Duration = 3200 // 32 frames of 100ns
	ingest(t, s, m, build("main;a 1 @t50", "main;b 2 @t150", "main;a 4 @t3199", "main;a 8 @t120"))
	ingest(t, s, meta("a", "b", "untimed"), build("x 1", "y 1", "x 1", "y 1"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		text[h] = frames[len(frames)-1].Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type cell struct {
		run, leaf string
		frame     int
	}
	got := map[cell]int64{}
	groups := [][]Run{runs[:1], runs[1:]}
	if err := s.Timeline(ctx, groups, func(g int, h uint64, frame int, v int64) error {
		got[cell{groups[g][0].Run, text[h], frame}] += v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[cell]int64{
		{"timed", "a", 0}: 1, {"timed", "a", 1}: 8, {"timed", "b", 1}: 2, {"timed", "a", 31}: 4,
		// Untimed: four samples over 32 frames by position.
		{"untimed", "x", 0}: 1, {"untimed", "y", 8}: 1, {"untimed", "x", 16}: 1, {"untimed", "y", 24}: 1,
	}
	if len(got) != len(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("timeline %v = %d, want %d", k, got[k], v)
		}
	}
	seen := map[string]uint64{}
	if err := s.StackValues(ctx, [][]Run{runs}, func(_ int, h uint64, _ int64, first uint64) error {
		seen[text[h]] = first
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Earliest across runs: a at 50ns (timed), b at 150ns, x at ordinal 0, y at 1.
	if seen["a"] != 50 || seen["b"] != 150 || seen["x"] != 0 || seen["y"] != 1 {
		t.Errorf("first seen %v", seen)
	}
}

func TestRowCap(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		maxRows int
		wantErr bool
	}{
		{"under", 4, false},
		{"exactly", 3, false},
		{"over", 2, true},
	}
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "b", "r"), build("a 1", "b 1", "c 1"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.maxRows = tt.maxRows
			n := 0
			err := s.StackValues(ctx, [][]Run{runs}, func(int, uint64, int64, uint64) error { n++; return nil })
			if tt.wantErr {
				if !errors.Is(err, ErrTooManyRows) || !strings.Contains(err.Error(), "more than 2 rows") {
					t.Fatalf("error %v, want ErrTooManyRows", err)
				}
				return
			}
			if err != nil || n != 3 {
				t.Fatalf("%d rows, %v", n, err)
			}
		})
	}
}

func TestSearchFunctions(t *testing.T) {
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "b", "r"), build("main;Compress;ÄrgerFunc 1", "main;x%y;a_b 1", "main;axyb;acb 1"))
	ingest(t, s, meta("other", "b", "r"), build("compressOther 1"))
	// Names of deleted and replaced runs are not offered.
	ingest(t, s, meta("a", "b", "gone"), build("main;GoneFunc 1"))
	if err := s.DeleteRun(context.Background(), "a", "b", "gone"); err != nil {
		t.Fatal(err)
	}
	ingest(t, s, meta("a", "b", "again"), build("main;ReplacedFunc 1"))
	ingest(t, s, meta("a", "b", "again"), build("main;axyb 1"))
	tests := []struct {
		q     string
		limit int
		want  string
	}{
		{"compress", 0, "Compress"},
		{"äRGER", 0, "ÄrgerFunc"},
		{"%", 0, "x%y"},
		{"_", 0, "a_b"},
		{"", 2, "Compress,a_b"},
		{"'; DROP TABLE frames; --", 0, ""},
		{"gone", 0, ""},
		{"replaced", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			got, err := s.SearchFunctions(context.Background(), "a", tt.q, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := s.SearchFunctions(context.Background(), "a", "", -1); err == nil {
		t.Error("negative limit accepted")
	}
}

// Stack texts are read by hash through external tables and come back as
// packed bytes, which must hold frame hashes of any bytes
// (reinterpretAsString drops trailing zeros).
func TestStackReadsByHash(t *testing.T) {
	native := newStore(t, Options{})
	ctx := context.Background()
	ingest(t, native, meta("a", "b", "1"), build("main;a 3", "main;b;c 2", "x@lib 1"))
	ingest(t, native, meta("a", "b", "2"), build("main;a 4")) // the stack again, in another part
	ingest(t, native, meta("other", "b", "1"), build("main;a 5"))
	odd := []uint64{1, 256, 0, 1 << 63, math.MaxUint64}
	insert := func(table string, rows ...[]any) {
		// synchronous on a cluster: the reads below must find the rows
		batch, err := native.conn.PrepareBatch(syncInserts(ctx), "INSERT INTO "+table)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := batch.Append(r...); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Send(); err != nil {
			t.Fatal(err)
		}
	}
	var frameRows [][]any
	for i, h := range odd {
		frameRows = append(frameRows, []any{"a", h, fmt.Sprint("odd", i), ""})
	}
	insert("frames (app, frame_hash, name, module)", frameRows...)
	// Twice, in two parts, as two ingests of the same stack leave it until
	// ClickHouse merges them: readers may pass it on twice, alike.
	insert("stacks (app, stack_hash, frame_hashes)", []any{"a", uint64(42), odd})
	insert("stacks (app, stack_hash, frame_hashes)", []any{"a", uint64(42), odd})
	runs, err := native.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// into collects what a reader passes on.
	into := func(m map[uint64][]uint64) func(uint64, []uint64) error {
		return func(h uint64, frames []uint64) error {
			if old, dup := m[h]; dup && !slices.Equal(old, frames) {
				t.Errorf("stack %x read twice, as %x and %x", h, old, frames)
			}
			m[h] = slices.Clone(frames)
			return nil
		}
	}
	want := map[uint64][]uint64{}
	if err := native.RunStackFrames(ctx, runs, into(want)); err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("%d stacks, want 3 ingested", len(want))
	}
	// Stacks passes each stack on once, copies or not.
	for h, frames := range want {
		insert("stacks (app, stack_hash, frame_hashes)", []any{"a", h, frames})
	}
	visits := map[uint64]int{}
	if err := native.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		if visits[h]++; len(frames) != len(want[h]) {
			t.Errorf("stack %x: %d frames, want %d", h, len(frames), len(want[h]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(visits) != len(want) {
		t.Errorf("Stacks passed on %d stacks, want %d", len(visits), len(want))
	}
	for h, n := range visits {
		if n != 1 {
			t.Errorf("Stacks passed on stack %x %d times", h, n)
		}
	}
	want[42] = odd

	hashes := append(slices.Collect(maps.Keys(want)), 7) // 7: no such stack
	// (Not over HTTP: clickhouse-go's HTTP handshake sends a setting that
	// ClickHouse 18.16 rejects.)
	got := map[uint64][]uint64{}
	if err := native.StackFrames(ctx, "a", hashes, into(got)); err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("stacks by hash\n got %v\nwant %v", got, want)
	}
	names := map[uint64]string{}
	if err := native.Frames(ctx, "a", odd, func(f Frame) error {
		names[f.Hash] = f.Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(names) != len(odd) || names[math.MaxUint64] != "odd4" {
		t.Errorf("frames by hash %v", names)
	}
	if err := native.StackFrames(ctx, "other", []uint64{42}, func(uint64, []uint64) error {
		t.Error("a stack of app a read as app other's")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestIngestRunsCommitsTogether: several runs become visible in one
// commit; one bad run, or a cancel before the commit, stores none.
func TestIngestRunsCommitsTogether(t *testing.T) {
	s := newStore(t, Options{BatchRows: 1})
	ctx := context.Background()
	one, two := build("main;a 5", "main;b 1"), build("main;c 2")
	err := s.WriteRuns(ctx, []RunProfile{{meta("a", "b", "r1"), one}, {meta("a", "b", "r2"), build("main -1")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "negative value") {
		t.Fatalf("error %v, want the bad run's", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	err = s.WriteRuns(cctx, []RunProfile{{meta("a", "b", "r1"), one}, {meta("a", "b", "r2"), two}}, func(done, total int) {
		if done == total-1 { // every row but the runs rows
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ingest: %v", err)
	}
	if n := count(t, s, "SELECT count() FROM runs"); n != 0 {
		t.Fatalf("%d runs rows after failed ingests", n)
	}
	if err := s.WriteRuns(ctx, []RunProfile{{meta("a", "b", "r1"), one}, {meta("a", "b", "r2"), two}}, nil); err != nil {
		t.Fatal(err)
	}
	equalTotals(t, export(t, s, "a", "b", "r1"), totals(one))
	equalTotals(t, export(t, s, "a", "b", "r2"), totals(two))
	if err := s.WriteRuns(ctx, []RunProfile{{meta("a", "b", "r1"), one}, {meta("a", "b", "r1"), two}}, nil); err == nil {
		t.Fatal("a run given twice was stored")
	}
}

// TestRunStackValuesChunks reads the per-run values of runs whose rows
// together exceed the row cap: RunStackValues splits them into reads that
// each fit, and every (run, stack) value arrives once under the run's
// index; a run alone over the cap still fails.
func TestRunStackValuesChunks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	want := map[string]map[uint64]int64{}
	for i := range 6 {
		lines := []string{fmt.Sprintf("main;f%d %d", i, 10+i), fmt.Sprintf("main;g %d", 100*i+1)}
		if i%2 == 0 {
			lines = append(lines, "main 7")
		}
		ingest(t, s, meta("a", "b", fmt.Sprint(i)), build(lines...))
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		want[r.Run] = map[uint64]int64{}
		err := s.StackValues(ctx, [][]Run{{r}}, func(_ int, h uint64, v int64, _ uint64) error {
			want[r.Run][h] = v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, maxRows := range []int{3, 7, 100} {
		s.maxRows = maxRows
		got := map[string]map[uint64]int64{}
		err := s.RunStackValues(ctx, runs, func(r int, h uint64, v int64) error {
			if got[runs[r].Run] == nil {
				got[runs[r].Run] = map[uint64]int64{}
			}
			if _, dup := got[runs[r].Run][h]; dup {
				t.Errorf("cap %d: run %s stack %x twice", maxRows, runs[r].Run, h)
			}
			got[runs[r].Run][h] = v
			return nil
		})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cap %d: %v, %v; want %v", maxRows, got, err, want)
		}
	}
	s.maxRows = 2
	if err := s.RunStackValues(ctx, runs, func(int, uint64, int64) error { return nil }); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("a run of 3 stacks under a cap of 2: %v, want ErrTooManyRows", err)
	}
}

// TestTimelineChunks reads a timeline of groups whose rows together
// exceed the row cap: Timeline reads them a few groups at a time, and the
// (group, stack, bucket) sums are those read with a cap they fit.
func TestTimelineChunks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	for i := range 4 {
		ingest(t, s, meta("a", fmt.Sprint("b", i), "r"), build(fmt.Sprintf("main;f%d %d @t0", i, 10+i), "main;g 5 @t0", "main;g 6 @t900"))
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := [][]Run{runs[:1], runs[1:3], runs[3:]}
	read := func(maxRows int) (map[string]int64, error) {
		s.maxRows = maxRows
		got := map[string]int64{}
		err := s.Timeline(ctx, groups, func(g int, h uint64, bucket int, v int64) error {
			got[fmt.Sprint(g, h, bucket)] += v
			return nil
		})
		return got, err
	}
	want, err := read(100)
	if err != nil || len(want) != 10 {
		t.Fatalf("%d sums, %v", len(want), err)
	}
	for _, maxRows := range []int{6, 7} {
		if got, err := read(maxRows); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cap %d: %v, %v; want %v", maxRows, got, err, want)
		}
	}
	if _, err := read(5); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("a group of 6 rows under a cap of 5: %v, want ErrTooManyRows", err)
	}
}
