package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/testkit"
)

// flamediffErr runs a command in-process and returns its standard output,
// its error output and its error.
func flamediffErr(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every command's -h starts with its synopsis, positional arguments
// included; --version names the build.
func TestSynopsisAndVersion(t *testing.T) {
	for name, cmd := range commands {
		_, errOut, err := flamediffErr(name, "-h")
		want := "usage: flamediff " + name + " " + cmd.synopsis + "\n"
		if err != nil || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "  -") {
			t.Errorf("%s -h: %v\n%s\nwant it to start with %q and list the flags", name, err, errOut, want)
		}
	}
	for name, arg := range map[string]string{"ingest": "FILE", "changes": "CHANGES.json"} {
		if !strings.Contains(strings.SplitN(commands[name].synopsis, "\n", 2)[0], " "+arg) {
			t.Errorf("%s synopsis %q lacks its argument %s", name, commands[name].synopsis, arg)
		}
	}
	out, _, err := flamediffErr("--version")
	if err != nil || !strings.HasPrefix(out, "flamediff ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q, %v", out, err)
	}
}

// apps, builds and runs list what is stored; delete hides a run; gc then
// removes the rows of the deleted and replaced ingests and nothing
// visible changes.
func TestListDeleteAndGC(t *testing.T) {
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) { listDeleteAndGC(t, dsn) })
	}
}

func listDeleteAndGC(t *testing.T, dsn string) {
	a := writeFile(t, "a.folded", "main;a 3\nmain;b 1\n")
	b := writeFile(t, "b.folded", "main;a 1\nmain;c 2\n")
	ingest := func(app, build, run, file string) {
		mustRun(t, "ingest", "--dsn", dsn, "--app", app, "--build", build, "--run", run,
			"--time", "2026-09-0"+build+"T10:00:00Z", "--commit", "c"+build, file)
	}
	ingest("shop", "1", "r1", a)
	ingest("shop", "1", "r2", b)
	ingest("shop", "2", "r1", b)
	ingest("shop", "2", "r1", a) // replaces it
	ingest("ios", "1", "r1", a)
	if got := mustRun(t, "apps", "--dsn", dsn); got != "ios\nshop\n" {
		t.Errorf("apps:\n%s", got)
	}
	wantBuilds := "BUILD  FIRST RUN             RUNS\n1      2026-09-01T10:00:00Z  2\n2      2026-09-02T10:00:00Z  1\n"
	if got := mustRun(t, "builds", "--dsn", dsn, "--app", "shop"); got != wantBuilds {
		t.Errorf("builds:\n%s\nwant\n%s", got, wantBuilds)
	}
	runs := mustRun(t, "runs", "--dsn", dsn, "--app", "shop", "--build", "1")
	if lines := strings.Split(strings.TrimSpace(runs), "\n"); len(lines) != 3 ||
		!strings.HasPrefix(lines[1], "1      r1   2026-09-01T10:00:00Z  0s        2        2       4      count  c1") {
		t.Errorf("runs:\n%s", runs)
	}
	if got := mustRun(t, "delete", "--dsn", dsn, "--app", "shop", "--build", "1", "--run", "r2"); got != "deleted shop/1/r2\n" {
		t.Errorf("delete: %q", got)
	}
	if runs := mustRun(t, "runs", "--dsn", dsn, "--app", "shop"); strings.Contains(runs, "r2") {
		t.Errorf("the deleted run is listed:\n%s", runs)
	}
	export := func() string {
		return mustRun(t, "export", "--dsn", dsn, "--app", "shop", "--build", "2", "--output", "folded") +
			mustRun(t, "runs", "--dsn", dsn, "--app", "shop")
	}
	before := export()
	if got := mustRun(t, "gc", "--dsn", dsn); got != "removed 0 superseded and 0 uncommitted ingests: 0 sample rows\n" {
		t.Errorf("gc within the default grace period: %q", got)
	}
	if got := mustRun(t, "gc", "--dsn", dsn, "--grace", "0s"); got != "removed 2 superseded and 0 uncommitted ingests: 4 sample rows\n" {
		t.Errorf("gc: %q", got)
	}
	if after := export(); after != before {
		t.Errorf("gc changed what is visible:\n%s\nwant\n%s", after, before)
	}
}

// --settings reads the provisioned data source: its table names and
// system-frame rules apply to every command, stored queries included,
// and --output folded prints a stored query as a local one prints files.
func TestSettingsFile(t *testing.T) {
	dsn := chtest.DSN(t)
	settings := writeFile(t, "flamediff.yaml", `apiVersion: 1
datasources:
  - name: Other
    type: prometheus
  - name: Flamediff
    type: flamediff-clickhouse-datasource
    jsonData:
      host: clickhouse
      tables: {runs: my_runs, samples: my_samples}
      systemFrames: ["^lib"]
`)
	base := writeFile(t, "base.folded", "main;libx;liby;work 4\nmain;a 2\n")
	head := writeFile(t, "head.folded", "main;libx;liby;work 6\nmain;libz 1\n")
	mustRun(t, "migrate", "--dsn", dsn, "--settings", settings)
	for build, file := range map[string]string{"base": base, "head": head} {
		mustRun(t, "ingest", "--dsn", dsn, "--settings", settings, "--app", "app", "--build", build, "--run", "r", file)
	}
	if n := count(t, dsn, "SELECT count() FROM my_runs"); n != 2 {
		t.Errorf("%d rows in the settings' runs table, want 2", n)
	}
	if got := mustRun(t, "apps", "--dsn", dsn, "--settings", settings); got != "app\n" {
		t.Errorf("apps of the settings' tables: %q", got)
	}
	stored := mustRun(t, "query", "--dsn", dsn, "--settings", settings, "--output", "folded", "--model",
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"collapseSystem":true}`)
	local := mustRun(t, "query", "--type", "diff", "--collapse-system", "--system", "^lib", "--output", "folded",
		"--head", head, "--base", base)
	if stored != local || !strings.Contains(stored, "main;libx;work 4 6\n") {
		t.Errorf("stored query:\n%s\nlocal query:\n%s", stored, local)
	}
	// Without --dsn the settings give the connection too.
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(o.Addr[0], ":")
	connected := writeFile(t, "connected.yaml", fmt.Sprintf(`datasources:
  - type: flamediff-clickhouse-datasource
    jsonData: {host: %q, port: %s, username: default, defaultDatabase: %q, tables: {runs: my_runs}}
`, host, port, o.Auth.Database))
	if got := mustRun(t, "apps", "--settings", connected); got != "app\n" {
		t.Errorf("apps with the settings' connection: %q", got)
	}
	for _, bad := range []string{"x: [", "datasources: [{type: prometheus}]"} {
		if _, err := flamediff(t, "apps", "--settings", writeFile(t, "bad.yaml", bad)); err == nil {
			t.Errorf("settings %q accepted", bad)
		}
	}
}

// A bad system-frame rule in the settings fails the commands that build
// trees, naming the rules, and no other: ingest and apps do not use them.
func TestBadSystemFrameRuleFailsOnlyQueries(t *testing.T) {
	dsn := chtest.DSN(t)
	settings := writeFile(t, "flamediff.yaml", `datasources:
  - type: flamediff-clickhouse-datasource
    jsonData: {host: clickhouse, systemFrames: ["(unclosed"]}
`)
	mustRun(t, "migrate", "--dsn", dsn, "--settings", settings)
	mustRun(t, "ingest", "--dsn", dsn, "--settings", settings, "--app", "app", "--build", "b", "--run", "r",
		writeFile(t, "p.folded", "main;work 3\n"))
	if got := mustRun(t, "apps", "--dsn", dsn, "--settings", settings); got != "app\n" {
		t.Errorf("apps: %q", got)
	}
	_, err := flamediff(t, "query", "--dsn", dsn, "--settings", settings, "--model",
		`{"queryType":"flamegraph","app":"app","head":{"builds":["b"]}}`)
	if err == nil || !strings.Contains(err.Error(), "system frame rules") {
		t.Errorf("a query with a bad rule: %v, want the rules named", err)
	}
}

// count runs a count() query on the database of dsn.
func count(t *testing.T, dsn, query string) uint64 {
	t.Helper()
	var n uint64
	if err := chtest.Conn(t, dsn).QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Lines the perf collapse ignores are counted on stderr, or with --strict
// refused; the stored stacks are the collapse's.
func TestIngestPerfIgnoredLines(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	perf := writeFile(t, "x.perf", "app 1 1.5: cycles:\n\t 1 f (/bin/a)\n\tjunk\n\n")
	args := []string{"ingest", "--dsn", dsn, "--app", "a", "--build", "1", "--run", "r", perf}
	_, errOut, err := flamediffErr(args...)
	want := "flamediff: " + perf + `: 1 lines ignored, as stackcollapse-perf.pl ignores them (the first: line 3 "\tjunk")` + "\n"
	if err != nil || errOut != want {
		t.Errorf("ingest: %v, stderr %q, want %q", err, errOut, want)
	}
	if got := mustRun(t, "export", "--dsn", dsn, "--app", "a", "--build", "1"); got != "app;f 1\n" {
		t.Errorf("stored %q", got)
	}
	if _, err := flamediff(t, append(args, "--strict", "--run", "strict")...); err == nil || !strings.Contains(err.Error(), ":3: line ignored") {
		t.Errorf("--strict: %v", err)
	}
}

// Ingest and query read the same names from a file with invalid UTF-8,
// and --sample-type picks the stored sample type.
func TestIngestLikeQuery(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	bad := writeFile(t, "bad.folded", "main;caf\xe9 2\nmain;ok 1\n")
	mustRun(t, "ingest", "--dsn", dsn, "--app", "a", "--build", "1", "--run", "r", bad)
	stored := mustRun(t, "export", "--dsn", dsn, "--app", "a", "--build", "1", "--output", "folded")
	local := mustRun(t, "query", "--type", "flamegraph", "--output", "folded", "--head", bad)
	if stored != "main;caf\uFFFD 2\nmain;ok 1\n" || local != stored {
		t.Errorf("stored %q, query %q", stored, local)
	}
	contention := testkit.Testdata("pprof", "legacy", "contention.txt")
	mustRun(t, "ingest", "--dsn", dsn, "--app", "a", "--build", "2", "--run", "r", "--sample-type", "contentions", contention)
	if runs := mustRun(t, "runs", "--dsn", dsn, "--app", "a", "--build", "2"); !strings.Contains(runs, " 4      count ") {
		t.Errorf("runs of the contention profile:\n%s", runs)
	}
	if _, err := flamediff(t, "ingest", "--dsn", dsn, "--app", "a", "--build", "2", "--run", "r", "--sample-type", "cpu", contention); err == nil {
		t.Error("an unknown sample type was accepted")
	}
}

// On a server where migrate never ran, the commands say to run it.
func TestNoDatabaseSaysMigrate(t *testing.T) {
	dsn := "clickhouse://default:@" + chtest.Addr(t) + "/flamediff_never_migrated"
	for _, args := range [][]string{
		{"ingest", "--dsn", dsn, "--app", "a", "--build", "b", "--run", "r", testkit.PprofRuns(t, "head")[0]},
		{"serve", "--dsn", dsn, "--addr", "127.0.0.1:0"},
		{"apps", "--dsn", dsn},
		{"query", "--dsn", dsn, "--model", `{"queryType":"evolution","app":"a"}`},
	} {
		_, err := flamediff(t, args...)
		if err == nil || !strings.Contains(err.Error(), "run `flamediff migrate`") {
			t.Errorf("%s: %v, want a message saying to run flamediff migrate", args[0], err)
		}
	}
}
