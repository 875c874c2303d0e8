package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/testkit"
)

// TestChangePointsGate: main.parse doubles in build 4 of 4; the table
// names it with its commit, and --fail-on-regression exits 3 while that
// build is the newest and 0 once a later build follows it.
func TestChangePointsGate(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	epoch := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	ingest := func(b int) {
		for r := range 4 {
			parse := 100 + r
			if b >= 3 {
				parse = 200 + r
			}
			file := filepath.Join(dir, fmt.Sprintf("b%d-r%d.folded", b, r))
			folded := fmt.Sprintf("main;main.serve;main.parse %d\nmain;main.serve;main.write %d\n", parse, 300+r)
			if err := os.WriteFile(file, []byte(folded), 0o644); err != nil {
				t.Fatal(err)
			}
			mustRun(t, "ingest", "--dsn", dsn, "--app", "gate", "--build", fmt.Sprintf("v%d", b), "--run", fmt.Sprint(r),
				"--commit", fmt.Sprintf("c0ffee%d", b), "--format", "folded",
				"--time", epoch.Add(time.Duration(b)*time.Hour+time.Duration(r)*time.Minute).Format(time.RFC3339), file)
		}
	}
	for b := range 4 {
		ingest(b)
	}
	model := `{"queryType":"changepoints","app":"gate"}`
	table := mustRun(t, "query", "--dsn", dsn, "--model", model)
	for _, want := range []string{"FUNCTION", "main.parse  v3", "v2", "c0ffee3", "+98.5%", "yes"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if stderr, code := runBinary(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression"); code != 3 ||
		!strings.Contains(stderr, "main.parse +98.5%") {
		t.Errorf("regression at the newest build: exit %d, stderr %q; want 3", code, stderr)
	}
	ingest(4)
	if stderr, code := runBinary(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression"); code != 0 {
		t.Errorf("regression before the newest build: exit %d (%s), want 0", code, stderr)
	}
	if _, err := flamediff(t, "query", "--dsn", dsn, "--fail-on-regression", "--model", `{"queryType":"runs","app":"gate","head":{"builds":["v1"]}}`); !isUsage(err) {
		t.Errorf("--fail-on-regression on a runs query: %v, want a usage error", err)
	}
}

// TestOverTimeOneBuild: an app's first build answers every over-time
// query (builds unset, named, named twice): no change point, the build in
// the evolution matrix, and the gate passes.
func TestOverTimeOneBuild(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	for r := range 3 {
		mustRun(t, "ingest", "--dsn", dsn, "--app", "new", "--build", "0.1.0", "--run", fmt.Sprint(r), testkit.PprofRuns(t, "head")[r])
	}
	for _, builds := range []string{``, `,"builds":["0.1.0"]`, `,"builds":["0.1.0","0.1.0"]`} {
		cp := `{"queryType":"changepoints","app":"new"` + builds + `}`
		if table := mustRun(t, "query", "--dsn", dsn, "--model", cp, "--fail-on-regression"); !strings.Contains(table, "no change points") {
			t.Errorf("%s: %q, want no change points", cp, table)
		}
		evo := `{"queryType":"evolution","app":"new"` + builds + `}`
		if out := mustRun(t, "query", "--dsn", dsn, "--model", evo, "--output", "json"); !strings.Contains(out, `"0.1.0"`) {
			t.Errorf("%s: the matrix lacks build 0.1.0: %.300s", evo, out)
		}
		ts := `{"queryType":"timeseries","app":"new"` + builds + `}`
		mustRun(t, "query", "--dsn", dsn, "--model", ts, "--output", "json")
	}
}
