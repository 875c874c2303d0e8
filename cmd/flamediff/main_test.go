package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/profile"
)

var binDir string

func TestMain(m *testing.M) {
	chtest.Main(m, func() {
		for _, dir := range []string{binDir, toolsDir} {
			if dir != "" {
				os.RemoveAll(dir)
			}
		}
	})
}

// flamediff runs a command in-process and returns its standard output.
func flamediff(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), err
}

// mustRun is flamediff for commands that must succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := flamediff(t, args...)
	if err != nil {
		t.Fatalf("flamediff %s: %v", strings.Join(args, " "), err)
	}
	return out
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// flamediffBinary builds the command once per test binary.
func flamediffBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "flamediff-cli"); buildErr != nil {
			return
		}
		binary = filepath.Join(binDir, "flamediff")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building flamediff: %v", buildErr)
	}
	return binary
}

// runBinary runs the built command and returns its stderr and exit code,
// to check what a shell sees.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(flamediffBinary(t), args...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running flamediff: %v", err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// targets returns migrated fresh databases on one server and on the
// private cluster (migrate --cluster), by name, for tests that run the
// commands on both.
func targets(t *testing.T) map[string]string {
	t.Helper()
	single, cluster := chtest.DSN(t), chtest.ClusterDSN(t)
	mustRun(t, "migrate", "--dsn", single)
	if out := mustRun(t, "migrate", "--dsn", cluster, "--cluster", chtest.ClusterName); !strings.Contains(out, "cluster "+chtest.ClusterName+": 2 shards") {
		t.Fatalf("migrate --cluster printed %q", out)
	}
	return map[string]string{"one server": single, "cluster": cluster}
}

func TestMigrateIsIdempotent(t *testing.T) {
	dsn := chtest.DSN(t)
	for range 2 {
		if out := mustRun(t, "migrate", "--dsn", dsn); !strings.Contains(out, "schema ready") {
			t.Fatalf("migrate printed %q", out)
		}
	}
	if err := teststore.Opened(t, dsn).CheckTables(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Export gives back exactly the folded file that was ingested, for the
// reference outputs of stackcollapse-perf.pl (real stacks, odd names).
func TestIngestExportRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../testdata/perf-script/*.folded")
	if err != nil || len(files) == 0 {
		t.Fatalf("no folded test files: %v", err)
	}
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) { ingestExport(t, dsn, files) })
	}
}

func ingestExport(t *testing.T, dsn string, files []string) {
	for _, file := range files {
		run := filepath.Base(file)
		mustRun(t, "ingest", "--dsn", dsn, "--app", "perf", "--build", "1", "--run", run, "--format", "folded", file)
		got := mustRun(t, "export", "--dsn", dsn, "--app", "perf", "--build", "1", "--run", run, "--output", "folded")
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: export differs from the ingested file:\n%s\nwant:\n%s", run, got, want)
		}
	}
}

// Names full of quotes, SQL and unicode are values, never SQL: they come
// back unchanged, and so do the labels.
func TestNamesRoundTrip(t *testing.T) {
	dsn := chtest.DSN(t)
	app, build, run := `it's "app"; DROP TABLE runs;--`, `1.0\' OR 1=1 -- ✓`, "ラン `1` %_*"
	labels := map[string]string{`ké'y"`: `v"al;ue\n`, "x": "=y=", "日本": "語"}
	args := []string{"ingest", "--dsn", dsn, "--app", app, "--build", build, "--run", run,
		"--time", "2026-09-01T10:00:00+02:00", "--commit", "abc'123", "--branch", `feat/"x"`}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	folded := filepath.Join(t.TempDir(), "p.folded")
	if err := os.WriteFile(folded, []byte("main;ö'\"x;SELECT 1 3\nmain;y 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "migrate", "--dsn", dsn)
	mustRun(t, append(args, folded)...)

	runs, err := teststore.Opened(t, dsn).Runs(context.Background(), app, []string{build}, []string{run})
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.App != app || r.Build != build || r.Run != run || r.Commit != "abc'123" || r.Branch != `feat/"x"` ||
		!reflect.DeepEqual(r.Labels, labels) || r.Start.UTC().Hour() != 8 || r.Total != 5 {
		t.Errorf("stored run %+v", r)
	}
	var p profile.Profile
	if err := json.Unmarshal([]byte(mustRun(t, "export", "--dsn", dsn, "--app", app, "--build", build, "--output", "json")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Total() != 5 || len(p.Samples) != 2 || p.Names(p.Samples[0].Stack)[1] != `ö'"x` {
		t.Errorf("exported profile %+v", p)
	}
}

// Bad input is reported with its file and line, exits non-zero and
// leaves the database without any run.
func TestBadInputStoresNothing(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.folded")
	if err := os.WriteFile(bad, []byte("a;b 1\na;c 12x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "cut.pb.gz")
	pb := testkit.ReadTestdata(t, "pprof", "head-run1.pb.gz")
	if err := os.WriteFile(truncated, pb[:len(pb)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{bad, bad + ":2: "},
		{truncated, truncated + ": "},
		{filepath.Join(dir, "missing.pb"), "open " + filepath.Join(dir, "missing.pb") + ": "},
	} {
		stderr, code := runBinary(t, "ingest", "--dsn", dsn, "--app", "a", "--build", "b", "--run", "r", tc.file)
		if code != 1 || !strings.HasPrefix(stderr, "flamediff: "+tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("ingest %s: exit %d, stderr %q; want exit 1 and one line starting %q", tc.file, code, stderr, tc.want)
		}
	}
	if apps, err := teststore.Opened(t, dsn).Apps(context.Background()); err != nil || len(apps) != 0 {
		t.Errorf("after bad input the store has apps %v (%v)", apps, err)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nosuch"},
		{"migrate"},
		{"ingest", "--app", "a", "--build", "b", "--run", "r", "no-such-file.folded"},
		{"ingest", "--dsn", "clickhouse://127.0.0.1:1/x", "--app", "a", "--build", "b", "f"},
		{"ingest", "--dsn", "clickhouse://127.0.0.1:1/x", "--app", "a", "--build", "b", "--run", "r", "--label", "novalue", "f"},
		{"ingest", "--dsn", "clickhouse://127.0.0.1:1/x", "--app", "a", "--build", "b", "--run", "r", "--time", "yesterday", "f"},
		{"export", "--dsn", "clickhouse://127.0.0.1:1/x", "--app", "a", "--build", "b", "--output", "xml"},
		{"changes", "--git-diff", "main"},
		{"seed", "--dsn", "clickhouse://127.0.0.1:1/x", "extra"},
	} {
		if stderr, code := runBinary(t, args...); code != 2 || stderr == "" {
			t.Errorf("flamediff %q: exit %d, stderr %q; want exit 2 with a message", args, code, stderr)
		}
	}
}

// Seeding stores the whole demo with its changes, and seeding again
// changes nothing.
func TestSeed(t *testing.T) {
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) { seed(t, dsn) })
	}
}

func seed(t *testing.T, dsn string) {
	mustRun(t, "seed", "--dsn", dsn)
	second := mustRun(t, "seed", "--dsn", dsn)
	if strings.Count(second, " 0 runs ingested, 120 already stored, 0 builds' changes") != 2 {
		t.Errorf("second seed printed %q", second)
	}
	store := teststore.Opened(t, dsn)
	ctx := context.Background()
	for _, app := range demo.Generate(1) {
		builds, err := store.Builds(ctx, app.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(builds) != demo.Builds {
			t.Fatalf("%s has %d builds, want %d", app.Name, len(builds), demo.Builds)
		}
		for i, b := range builds {
			if b.Name != app.Builds[i].Name || b.Runs != demo.RunsPerBuild {
				t.Errorf("%s build %d: %+v, want %s with %d runs", app.Name, i, b, app.Builds[i].Name, demo.RunsPerBuild)
			}
		}
		recorded, err := store.Changes(ctx, app.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range app.Builds {
			if got := recorded[b.Name]; len(got.Modified) != len(b.Modified) || len(got.Added) != len(b.Added) {
				t.Errorf("%s %s: recorded changes %+v, generated %v %v", app.Name, b.Name, got, b.Modified, b.Added)
			}
		}
	}
}

func TestChangesFile(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	file := filepath.Join(dir, "changes.json")
	if err := os.WriteFile(file, []byte(`{"modified": ["pkg.B", "pkg.A"], "added": ["pkg.(*T).M"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "changes", "--dsn", dsn, "--app", "a'pp", "--build", "1.0", file)
	got, err := teststore.Opened(t, dsn).Changes(context.Background(), "a'pp", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := changes.Changes{Modified: []string{"pkg.A", "pkg.B"}, Added: []string{"pkg.(*T).M"}, Removed: []string{}}
	if !reflect.DeepEqual(got["1.0"], want) {
		t.Errorf("recorded %+v, want %+v", got["1.0"], want)
	}

	if err := os.WriteFile(file, []byte(`{"modified": ["pkg.A", "pkg.A"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := flamediff(t, "changes", "--dsn", dsn, "--app", "a", "--build", "1.0", file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a name listed twice gave %v, want an error naming %s", err, file)
	}
}

// --git-diff maps the changed lines of a real git history to functions.
func TestChangesGitDiff(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "m.go"), []byte("package m\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	write("func Keep() int { return 1 }\n\nfunc Edit() int {\n\treturn 1\n}\n")
	git("add", ".")
	git("commit", "-q", "-m", "a")
	write("func Keep() int { return 1 }\n\nfunc Edit() int {\n\treturn 2\n}\n\nfunc New() {}\n")
	git("commit", "-q", "-am", "b")

	var c changes.Changes
	out := mustRun(t, "changes", "--git-diff", "HEAD~1..HEAD", "--repo", dir)
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	want := changes.Changes{Modified: []string{"example.com/m.Edit"}, Added: []string{"example.com/m.New"}, Removed: []string{}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("git diff gave %+v, want %+v", c, want)
	}
}

// The progress bar is drawn on a terminal (here util-linux's script(1)
// gives the command one) and nowhere else.
func TestProgressOnlyOnTerminal(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	file := "../../testdata/perf-script/perf-java-stacks-01.folded"
	args := []string{"ingest", "--dsn", dsn, "--app", "a", "--build", "b", "--run", "r", file}
	if stderr, code := runBinary(t, args...); code != 0 || stderr != "" {
		t.Errorf("ingest into a pipe: exit %d, stderr %q; want no output", code, stderr)
	}
	line := "'" + flamediffBinary(t) + "' '" + strings.Join(args, "' '") + "'"
	out, err := exec.Command("script", "-qefc", line, "/dev/null").Output()
	if err != nil {
		t.Fatalf("script %s: %v", line, err)
	}
	if !strings.Contains(string(out), "storing "+file) || !strings.Contains(string(out), "%") {
		t.Errorf("on a terminal ingest printed %q, want a progress bar", out)
	}
}
