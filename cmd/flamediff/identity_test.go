package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/testkit"
)

// atPath returns the real Go CPU profiles of testdata/pprof's base runs
// with their executable mapping (the first, by pprof's convention) moved
// to exe, as a build installed or copied there records them.
func atPath(t *testing.T, exe string) []*pprof.Profile { return runsAt(t, "base", exe) }

// runsAt is atPath of testdata/pprof's runs of side ("base", "head").
func runsAt(t *testing.T, side, exe string) []*pprof.Profile {
	t.Helper()
	srcs := testkit.PprofRuns(t, side)
	if len(srcs) != 3 {
		t.Fatalf("testdata/pprof has %d %s runs, want 3", len(srcs), side)
	}
	var ps []*pprof.Profile
	for _, src := range srcs {
		p := testkit.ParsePprof(t, src)
		if p.Mapping[0].File != "/tmp/genprof" {
			t.Fatalf("%s: first mapping %q, not the executable", src, p.Mapping[0].File)
		}
		p.Mapping[0].File = exe
		ps = append(ps, p)
	}
	return ps
}

// atPaths writes atPath's profiles to files.
func atPaths(t *testing.T, exe string) []string { return writeRuns(t, runsAt(t, "base", exe)) }

// writeRuns writes profiles to files.
func writeRuns(t *testing.T, runs []*pprof.Profile) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, p := range runs {
		name := filepath.Join(dir, strconv.Itoa(i+1)+".pb.gz")
		out, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Write(out); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	return files
}

// diffTree is a diff answer's tree, node by node, and its culprits.
type diffTree struct {
	Base, Head, Dlt []float64
	Culprits        int
}

// answerTree reads a diff query's JSON answer (of a flame graph: Base
// only).
func answerTree(t *testing.T, out string) diffTree {
	t.Helper()
	var frames []struct {
		Schema struct {
			Name   string
			Fields []struct{ Name string }
		}
		Data struct{ Values []json.RawMessage }
	}
	if err := json.Unmarshal([]byte(out), &frames); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	var d diffTree
	for _, f := range frames {
		col := func(name string, v any) {
			for i, fl := range f.Schema.Fields {
				if fl.Name == name {
					if err := json.Unmarshal(f.Data.Values[i], v); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
		switch f.Schema.Name {
		case "flamegraph":
			col("value", &d.Base)
			col("valueRight", &d.Head)
			col("delta", &d.Dlt)
		case "culprits":
			var kinds []string
			col("kind", &kinds)
			d.Culprits = len(kinds)
		}
	}
	return d
}

// unchanged fails unless the diff is the same tree on both sides: every
// node of base meets its node of head, no delta, no culprit.
func unchanged(t *testing.T, what string, d diffTree) {
	t.Helper()
	if len(d.Base) == 0 || d.Culprits != 0 || !reflect.DeepEqual(d.Base, d.Head) {
		t.Errorf("%s: %d nodes, %d culprits, head values equal to base's: %v", what, len(d.Base), d.Culprits, reflect.DeepEqual(d.Base, d.Head))
	}
	for i, x := range d.Dlt {
		if x != 0 {
			t.Errorf("%s: node %d has delta %g", what, i, x)
			break
		}
	}
}

// One binary at two paths and under two names — the same real runs as
// app-base in /opt/app/1.2 and as app-head in a second checkout — is one
// program: the diff's trees are equal and name no culprit, as pprof's flat
// diff of the same files is zero, from files, one server and the cluster.
func TestOneBinaryAtTwoPaths(t *testing.T) {
	base, head := atPaths(t, "/opt/app/1.2/app-base"), atPaths(t, "/home/ci/checkout-2/bin/app-head")
	flat, err := pproftop.Top(head, base)
	if err != nil {
		t.Fatal(err)
	}
	for fn, e := range flat {
		if e.Flat != 0 || e.Cum != 0 {
			t.Fatalf("pprof's flat diff of %s: %+v, want 0: the reference is not an A/A", fn, e)
		}
	}
	args := append(append(append([]string{"query", "--type", "diff", "--output", "json", "--head"}, head...), "--base"), base...)
	files := answerTree(t, mustRun(t, args...))
	unchanged(t, "files", files)
	single := answerTree(t, mustRun(t, append([]string{"query", "--type", "flamegraph", "--output", "json", "--head"}, head...)...))
	if len(single.Base) != len(files.Base) {
		t.Errorf("the diff has %d nodes, head alone %d: nodes of one side met none of the other", len(files.Base), len(single.Base))
	}
	if _, err := flamediff(t, append(args[:len(args):len(args)], "--fail-on-regression", "--output", "markdown")...); err != nil {
		t.Errorf("the gate fails one binary against itself: %v", err)
	}

	model := `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			for i := range base {
				run := string(rune('1' + i))
				mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", "base", "--run", run, base[i])
				mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", "head", "--run", run, head[i])
			}
			stored := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", model))
			unchanged(t, "stored", stored)
			if !reflect.DeepEqual(stored.Base, files.Base) {
				t.Errorf("stored runs give another tree than the files: %d nodes, want %d", len(stored.Base), len(files.Base))
			}
		})
	}
}

// perf script of one program from two builds: the executable at another
// path under another name (so its process too), the C library upgraded
// from glibc 2.24's file name to libc.so.6, the kernel image of another
// version. The diff is empty: the programs' stacks meet, and the other
// process of the capture (cksum) stays itself.
func TestPerfAcrossBuilds(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "perf-script", "perf-cycles-instructions-01.perf.txt")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.NewReplacer(
		"noploop ", "noploop-v2 ", // the process name, in each event's header
		"(/root/noploop)", "(/opt/noploop/2.0/noploop-v2)",
		"(/lib/x86_64-linux-gnu/libc-2.24.so)", "(/usr/lib/x86_64-linux-gnu/libc.so.6)",
		"(/lib/modules/4.13.0-rc1/build/vmlinux)", "(/usr/lib/debug/boot/vmlinux-6.1.0-13-amd64)",
	).Replace(string(data))
	if head == string(data) || !strings.Contains(head, "noploop-v2 21796") {
		t.Fatal("the rewrite changed nothing")
	}
	dir := t.TempDir()
	h := filepath.Join(dir, "head.perf.txt")
	if err := os.WriteFile(h, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"query", "--type", "diff", "--output", "json", "--head", h, h, "--base", src, src}
	d := answerTree(t, mustRun(t, args...))
	unchanged(t, "perf", d)
	// noploop and cksum stay two processes: the tree is the base's alone.
	single := answerTree(t, mustRun(t, "query", "--type", "flamegraph", "--output", "json", "--head", src))
	if len(single.Base) != len(d.Base) {
		t.Errorf("the diff has %d nodes, base alone %d", len(d.Base), len(single.Base))
	}
}

// OTLP profiles whose mappings name the executable at two paths: one
// program, as in pprof.
func TestOTLPAcrossBuilds(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	for build, exe := range map[string]string{"base": "/opt/app/1.2/app-base", "head": "/srv/checkout-2/app-head"} {
		for i, p := range atPath(t, exe) {
			f := filepath.Join(dir, build+strconv.Itoa(i)+".otlp")
			if err := os.WriteFile(f, otlptest.Encodings(t, otlptest.FromPprof(p, "app", build, strconv.Itoa(i)))["protobuf"], 0o644); err != nil {
				t.Fatal(err)
			}
			mustRun(t, "ingest", "--dsn", dsn, "--format", "otlp", "--build", build, f)
		}
	}
	d := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model",
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`))
	unchanged(t, "OTLP", d)
}

// pprofMarks runs `go tool pprof -top` on file and returns each
// function's inline mark as pprof prints it: "(inline)",
// "(partial-inline)" or "".
func pprofMarks(t *testing.T, file string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-trim=false", "-nodefraction=0", "-edgefraction=0", file).Output()
	if err != nil {
		t.Fatalf("pprof -top %s: %v", file, err)
	}
	marks := map[string]string{}
	rows := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "flat":
			rows = true
		case rows && len(f) >= 6:
			name, mark := strings.Join(f[5:], " "), ""
			for _, m := range []string{" (inline)", " (partial-inline)"} {
				if n, ok := strings.CutSuffix(name, m); ok {
					name, mark = n, m[1:]
				}
			}
			marks[name] = mark
		}
	}
	return marks
}

// A run exported keeps what its profile said about inlining: pprof's -top
// of the export marks the same functions "(inline)" as of the file.
func TestExportKeepsInlineMarks(t *testing.T) {
	src := testkit.Testdata("pprof", "base-run1.pb.gz")
	want := pprofMarks(t, src)
	inline := 0
	for _, m := range want {
		if m != "" {
			inline++
		}
	}
	if inline < 10 {
		t.Fatalf("the reference marks %d functions inlined: not a profile with inlining", inline)
	}
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	mustRun(t, "ingest", "--dsn", dsn, "--app", "go", "--build", "1", "--run", "r", src)
	out := filepath.Join(t.TempDir(), "export.pb.gz")
	if err := os.WriteFile(out, []byte(mustRun(t, "export", "--dsn", dsn, "--app", "go", "--build", "1", "--run", "r", "--output", "pprof")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := pprofMarks(t, out); !reflect.DeepEqual(got, want) {
		for name, m := range want {
			if got[name] != m {
				t.Errorf("%s: export marked %q, file %q", name, got[name], m)
			}
		}
		t.Errorf("export has %d functions, file %d", len(got), len(want))
	}
}

// Builds installed in versioned directories (/opt/app/v0/app, ...) are one
// program over time: no change point while the runs are the same, and
// the build whose runs are testdata's head ones is a change point of the
// function whose inclusive time pprof's diff gives the largest growth.
func TestChangePointsAcrossInstallDirs(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	epoch := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	ingest := func(b int, side string) []string {
		files := writeRuns(t, runsAt(t, side, fmt.Sprintf("/opt/app/v%d/app", b)))
		for r, f := range files {
			mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", fmt.Sprintf("v%d", b), "--run", strconv.Itoa(r),
				"--time", epoch.Add(time.Duration(b)*time.Hour+time.Duration(r)*time.Minute).Format(time.RFC3339), f)
		}
		return files
	}
	var base []string
	for b := range 4 {
		base = ingest(b, "base")
	}
	model := `{"queryType":"changepoints","app":"app"}`
	if table := mustRun(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression"); !strings.Contains(table, "no change points") {
		t.Errorf("one program in four install directories: %s", table)
	}
	head := ingest(4, "head")
	before, err := pproftop.Top(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	change, err := pproftop.Top(head, base)
	if err != nil {
		t.Fatal(err)
	}
	top, most := "", int64(0)
	for fn, e := range change {
		if before[fn].Cum > 0 && e.Cum > most {
			top, most = fn, e.Cum
		}
	}
	table, _ := flamediff(t, "query", "--dsn", dsn, "--model", model)
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(top) + ` +v4 `).MatchString(table) {
		t.Errorf("pprof's largest growth of a function of both, %s (+%d), is no change point at v4:\n%s", top, most, table)
	}
}

// A script and a program the formats name by path or URL (V8's
// .cpuprofile, callgrind) keep it whole, and one build at two places is
// one: the diff of a file against itself moved elsewhere is unchanged; the
// same script renamed is another module, so the comparison can tell.
func TestToolFilesAtTwoPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(src, name string, replace ...string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "formats", src))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.NewReplacer(replace...).Replace(string(data))
		if text == string(data) {
			t.Fatalf("%s: nothing replaced", src)
		}
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	diff := func(base, head string) diffTree {
		return answerTree(t, mustRun(t, "query", "--type", "diff", "--output", "json", "--head", head, "--base", base))
	}
	for _, tc := range []struct{ src, base, head, renamed []string }{
		{[]string{"prog.callgrind"},
			[]string{"/tmp/fmt-gen/prog", "/opt/app/1.2/prog", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc-2.36.so"},
			[]string{"/tmp/fmt-gen/prog", "/home/ci/checkout-2/build/prog", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
			[]string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}},
		{[]string{"app.cpuprofile"},
			[]string{"file:///tmp/fmt-gen/app.js", "file:///opt/app/1.2/app.js"},
			[]string{"file:///tmp/fmt-gen/app.js", "https://cdn.example/assets/app.js?v=1.3#main"},
			[]string{"file:///tmp/fmt-gen/app.js", "file:///opt/app/1.2/main.js"}},
	} {
		src := tc.src[0]
		base, head := write(src, "base-"+src, tc.base...), write(src, "head-"+src, tc.head...)
		d := diff(base, head)
		unchanged(t, src, d)
		single := answerTree(t, mustRun(t, "query", "--type", "flamegraph", "--output", "json", "--head", head))
		if len(single.Base) != len(d.Base) {
			t.Errorf("%s: the diff has %d nodes, head alone %d: nodes of one side met none of the other", src, len(d.Base), len(single.Base))
		}
		if renamed := diff(base, write(src, "renamed-"+src, tc.renamed...)); len(renamed.Base) <= len(single.Base) {
			t.Errorf("%s: another module's functions met the base's: %d nodes, one side %d", src, len(renamed.Base), len(single.Base))
		}
	}
}
