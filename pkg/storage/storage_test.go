package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

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
