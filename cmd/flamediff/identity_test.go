package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
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

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/cespare/xxhash/v2"
	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/storage"
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

// oldTables are the tables the old database has rows in, in the order an
// ingest writes them.
var oldTables = []string{"frames", "stacks", "samples", "run_stacks", "function_timelines", "run_functions", "runs"}

// dumpOldDatabase, with -olddb-dump DSN, writes the rows of the database
// of DSN, filled by `flamediff ingest` of an older version, into
// testdata/olddb (README.md there says how it was made): one JSON object
// per table, its columns by name. The stacks' frame_bytes and frame_tops
// are left out (their DEFAULT recomputes them from frame_hashes, as the
// old version computed them): JSON holds no bytes that are not UTF-8.
var dumpOldDatabase = flag.String("olddb-dump", "", "write testdata/olddb from the database of this `DSN`")

// oldTable is one table's rows, column by column.
type oldTable struct {
	Table   string
	Columns []string
	Values  []json.RawMessage // a JSON array per column
}

// loadOldDatabase fills the database of dsn with what `flamediff ingest`
// of commit f7053c9, the last version that keyed frames by their full
// module path, stored (testdata/olddb/README.md): base and head runs of
// one binary at /opt/app/1.2/app-base and /opt/app/1.3/app-head.
func loadOldDatabase(t *testing.T, dsn string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "olddb", "f7053c9.json.gz")
	ctx := clickhouse.Context(context.Background(), clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	if *dumpOldDatabase != "" {
		writeOldDatabase(t, ctx, chtest.Conn(t, *dumpOldDatabase), path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	conn := chtest.Conn(t, dsn)
	dec := json.NewDecoder(z)
	for _, name := range oldTables {
		var tb oldTable
		if err := dec.Decode(&tb); err != nil || tb.Table != name {
			t.Fatalf("old database: table %q, want %s: %v", tb.Table, name, err)
		}
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+name+" ("+strings.Join(tb.Columns, ", ")+")")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "SELECT "+strings.Join(tb.Columns, ", ")+" FROM "+name+" LIMIT 0")
		if err != nil {
			t.Fatal(err)
		}
		types := rows.ColumnTypes()
		rows.Close()
		for i, typ := range types {
			col := reflect.New(reflect.SliceOf(typ.ScanType()))
			if err := json.Unmarshal(tb.Values[i], col.Interface()); err != nil {
				t.Fatalf("%s.%s: %v", name, tb.Columns[i], err)
			}
			if err := batch.Column(i).Append(col.Elem().Interface()); err != nil {
				t.Fatalf("%s.%s: %v", name, tb.Columns[i], err)
			}
		}
		if err := batch.Send(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// It is old data: the executable's frames are keyed by their full path.
	var hash uint64
	var name string
	if err := conn.QueryRow(ctx, "SELECT frame_hash, name FROM frames WHERE module = '/opt/app/1.2/app-base' AND name = 'runtime.main' LIMIT 1").Scan(&hash, &name); err != nil {
		t.Fatal(err)
	}
	if hash != xxhash.Sum64String(name+"\x00/opt/app/1.2/app-base") || hash == storage.FrameHash(name, "/opt/app/1.2/app-base", false) {
		t.Fatalf("frame %s of the old database has hash %x: not the old key", name, hash)
	}
}

// writeOldDatabase writes the tables of conn's database to path.
func writeOldDatabase(t *testing.T, ctx context.Context, conn driver.Conn, path string) {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(z)
	for _, name := range oldTables {
		cols := "*"
		if name == "stacks" {
			cols = "app, stack_hash, frame_hashes"
		}
		rows, err := conn.Query(ctx, "SELECT "+cols+" FROM "+name+" ORDER BY tuple(*)")
		if err != nil {
			t.Fatal(err)
		}
		tb := oldTable{Table: name, Columns: rows.Columns()}
		values := make([]reflect.Value, len(tb.Columns))
		for i, ct := range rows.ColumnTypes() {
			values[i] = reflect.New(reflect.SliceOf(ct.ScanType())).Elem()
		}
		for rows.Next() {
			dest := make([]any, len(values))
			for i, c := range values {
				dest[i] = reflect.New(c.Type().Elem()).Interface()
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			for i := range values {
				values[i] = reflect.Append(values[i], reflect.ValueOf(dest[i]).Elem())
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for _, c := range values {
			b, err := json.Marshal(c.Interface())
			if err != nil {
				t.Fatal(err)
			}
			tb.Values = append(tb.Values, b)
		}
		if err := enc.Encode(tb); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Runs stored before frames were keyed by identity compare with each
// other and with runs stored now, before and after `flamediff migrate`:
// readers meet frames by the name and module stored with them.
func TestDataStoredBeforeIdentity(t *testing.T) {
	now := atPaths(t, "/srv/app/2.0/app")
	diff := func(head, base string) string {
		return `{"queryType":"diff","app":"app","head":{"builds":["` + head + `"]},"base":{"builds":["` + base + `"]}}`
	}
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			if name == "one server" {
				// The schema f7053c9 made: frames had no inline mark, which
				// migrate adds as it adds any column.
				if err := chtest.Conn(t, dsn).Exec(context.Background(), "ALTER TABLE frames DROP COLUMN inlined"); err != nil {
					t.Fatal(err)
				}
				loadOldDatabase(t, dsn)
				mustRun(t, "migrate", "--dsn", dsn)
			} else {
				loadOldDatabase(t, dsn)
			}
			old := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", diff("head", "base")))
			unchanged(t, "old runs", old)
			for i, f := range now {
				mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", "now", "--run", strconv.Itoa(i+1), f)
			}
			for _, migrated := range []bool{false, true} {
				if migrated && name == "cluster" {
					mustRun(t, "migrate", "--dsn", dsn, "--cluster", chtest.ClusterName)
				} else if migrated {
					mustRun(t, "migrate", "--dsn", dsn)
				}
				mixed := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", diff("now", "base")))
				unchanged(t, "a new build against an old one", mixed)
				if !reflect.DeepEqual(mixed.Base, old.Base) {
					t.Errorf("migrated %v: new runs against old give %d nodes, old against old %d", migrated, len(mixed.Base), len(old.Base))
				}
				if out, err := flamediff(t, "query", "--dsn", dsn, "--model", diff("now", "head"), "--output", "markdown", "--fail-on-regression"); err != nil || strings.Contains(out, "FAIL") {
					t.Errorf("migrated %v: gate of the new build against the old head: %v\n%s", migrated, err, out)
				}
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
