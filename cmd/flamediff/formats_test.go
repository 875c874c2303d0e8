package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/toolprofiles"
)

var (
	toolsDir   string // removed by TestMain
	recordOnce sync.Once
	recorded   []toolprofiles.Recording
	recordErr  error
)

// runsPerSide is the runs of each build the real tools record: enough for
// the statistics of a planted slowdown, few for a lean test.
const runsPerSide = 5

// recordTools records the real tools' runs once per test binary.
func recordTools(t *testing.T) []toolprofiles.Recording {
	t.Helper()
	recordOnce.Do(func() {
		if toolsDir, recordErr = os.MkdirTemp("", "flamediff-tools"); recordErr == nil {
			recorded, recordErr = toolprofiles.Record(toolsDir, runsPerSide)
		}
	})
	if recordErr != nil {
		t.Fatal(recordErr)
	}
	return recorded
}

// toolReference returns each function's self total of a run's file by
// the tool's own account, keyed by function name.
func toolReference(format, file string) (map[string]int64, error) {
	switch format {
	case "callgrind":
		return toolprofiles.Annotate(file)
	case "cpuprofile":
		counts, _, _, err := toolprofiles.V8Counts(file)
		return byFunction(counts), err
	case "cprofile":
		return toolprofiles.PstatsSelf(file)
	case "jfr":
		sums, _, err := toolprofiles.JFRTopFrames(file, "jdk.ExecutionSample", "")
		return sums, err
	case "trace-events":
		counts, err := toolprofiles.TraceSamples(file)
		return byFunction(counts), err
	case "gecko":
		self, err := toolprofiles.GeckoSelf(file)
		// Gecko's labels hold ';' and line breaks, which a folded export
		// writes as ':' and ' ' (docs/FORMATS.md).
		folded := map[string]int64{}
		for k, v := range self {
			folded[foldedName.Replace(k)] += v
		}
		return folded, err
	}
	return nil, fmt.Errorf("no reference for %s", format)
}

var foldedName = strings.NewReplacer(";", ":", "\n", " ", "\r", " ")

// byFunction sums V8's counts keyed "function url" by function.
func byFunction(counts map[string]int64) map[string]int64 {
	byName := map[string]int64{}
	for k, v := range counts {
		byName[k[:strings.LastIndexByte(k, ' ')]] += v
	}
	return byName
}

var (
	referenceMu sync.Mutex
	referenced  = map[string]map[string]int64{}
)

// references returns the tool's self totals of a file, read once.
func references(t *testing.T, format, file string) map[string]int64 {
	t.Helper()
	referenceMu.Lock()
	defer referenceMu.Unlock()
	if want, ok := referenced[file]; ok {
		return want
	}
	want, err := toolReference(format, file)
	if err != nil {
		t.Fatal(err)
	}
	referenced[file] = want
	return want
}

// leafTotals sums a folded export's values by its stacks' leaves.
func leafTotals(folded string) map[string]int64 {
	totals := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		sp := strings.LastIndexByte(line, ' ')
		v, _ := strconv.ParseInt(line[sp+1:], 10, 64)
		stack := line[:sp]
		totals[stack[strings.LastIndexByte(stack, ';')+1:]] += v
	}
	return totals
}

// culpritRow is a regression's row of the markdown verdict: function and
// source.
var culpritRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|.*\\| (`[^`]+`|-)(?: \\(modified\\))? \\|$")

// Files the real tools wrote, ingested a directory at a time with --format
// auto through the CLI into ClickHouse (one server and the two-shard
// cluster), give back each function's self total as the tool counts it,
// and a diff of the builds names slow() at its file and line as the
// regression's first culprit.
func TestToolFormatsThroughCLI(t *testing.T) {
	runs := recordTools(t)
	for target, dsn := range targets(t) {
		t.Run(target, func(t *testing.T) {
			for _, tr := range runs {
				format := tr.Format
				t.Run(format, func(t *testing.T) {
					for build, dir := range map[string]string{"base": tr.Base, "head": tr.Head} {
						ingest := []string{"ingest", "--dsn", dsn, "--app", format, "--build", build}
						if tr.SampleType != "" {
							ingest = append(ingest, "--sample-type", tr.SampleType)
						}
						out := mustRun(t, append(ingest, dir)...)
						if n := strings.Count(out, "stored "); n != runsPerSide {
							t.Fatalf("ingest of %s stored %d runs:\n%s", dir, n, out)
						}
						// The first run of each build against the tool's own
						// account (the JDK's takes a JVM a file).
						file := filepath.Join(dir, tr.First)
						want := references(t, format, file)
						got := leafTotals(mustRun(t, "export", "--dsn", dsn, "--app", format, "--build", build,
							"--run", runName(file), "--output", "folded"))
						for fn, v := range want {
							if got[fn] != v {
								t.Errorf("%s: %s: stored self %d, the tool's %d", file, fn, got[fn], v)
							}
						}
						if len(got) != len(want) {
							t.Errorf("%s: %d functions stored, the tool has %d", file, len(got), len(want))
						}
					}
					verdict, _ := flamediff(t, "query", "--dsn", dsn, "--output", "markdown", "--fail-on-regression", "--model",
						fmt.Sprintf(`{"queryType":"diff","app":%q,"head":{"builds":["head"]},"base":{"builds":["base"]}}`, format))
					regressions := verdict[strings.Index(verdict, "#### Regressions"):strings.Index(verdict, "#### Improvements")]
					m := culpritRow.FindStringSubmatch(regressions)
					if m == nil || m[1] != tr.Slow || m[2] != "`"+tr.SlowAt+"`" {
						t.Errorf("first regression %q, want %s at %s:\n%s", m, tr.Slow, tr.SlowAt, verdict)
					}
				})
			}
		})
	}
}

// Many files are runs named by their files: a bad one among them stores
// none, two files of one run name and --run with many files are usage
// errors.
func TestIngestManyFiles(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	for name, text := range map[string]string{"run1.folded": "main;a 3\n", "run2.folded": "main;b 4\n", "run3.folded": "main;c x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ingest := []string{"ingest", "--dsn", dsn, "--app", "many", "--build", "1"}
	if _, err := flamediff(t, append(ingest, dir)...); err == nil || !strings.Contains(err.Error(), `run3.folded:1: bad count "x"`) {
		t.Fatalf("a directory with a bad file: %v", err)
	}
	if out := mustRun(t, "apps", "--dsn", dsn); out != "" {
		t.Fatalf("stored from a directory with a bad file: apps %q", out)
	}
	if err := os.Remove(filepath.Join(dir, "run3.folded")); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, append(ingest, dir)...)
	if !strings.Contains(out, "stored many/1/run1: 1 samples, total 3 count") || !strings.Contains(out, "stored many/1/run2: 1 samples, total 4 count") {
		t.Errorf("ingest of a directory printed:\n%s", out)
	}
	other := filepath.Join(t.TempDir(), "run1.folded")
	if err := os.WriteFile(other, []byte("main;z 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{append(ingest, dir, other), append(ingest, "--run", "r", dir)} {
		var u usageError
		if _, err := flamediff(t, args...); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args[len(ingest):], err)
		}
	}
}

// seed of a directory reads its files through the format table (here
// valgrind's callgrind, by --format auto): each subdirectory a build, each
// file a run whose functions' self totals are callgrind_annotate's; a bad
// file stores nothing and seeding again stores nothing more.
func TestSeedFiles(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "formats", "prog.callgrind"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "prog")
	for _, file := range []string{"1.0/run1.callgrind", "1.0/run2.callgrind", "1.1/run1.callgrind", "1.1/bad.callgrind"} {
		path := filepath.Join(dir, file)
		text := data
		if strings.HasPrefix(filepath.Base(file), "bad") {
			text = data[:len(data)/2]
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, text, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := flamediff(t, "seed", "--dsn", dsn, dir); err == nil || !strings.Contains(err.Error(), "bad.callgrind") {
		t.Fatalf("seed of a directory with a truncated file: %v", err)
	}
	if out := mustRun(t, "apps", "--dsn", dsn); out != "" {
		t.Fatalf("stored from a directory with a bad file: apps %q", out)
	}
	if err := os.Remove(filepath.Join(dir, "1.1", "bad.callgrind")); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "seed", "--dsn", dsn, dir); out != "prog: 2 builds, 3 runs ingested, 0 already stored, 0 builds' changes recorded\n" {
		t.Errorf("seed printed %q", out)
	}
	if out := mustRun(t, "seed", "--dsn", dsn, dir); !strings.Contains(out, " 0 runs ingested, 3 already stored") {
		t.Errorf("second seed printed %q", out)
	}
	want, err := toolprofiles.Annotate(filepath.Join(dir, "1.0", "run1.callgrind"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range [][2]string{{"1.0", "run2"}, {"1.1", "run1"}} {
		got := leafTotals(mustRun(t, "export", "--dsn", dsn, "--app", "prog", "--build", key[0], "--run", key[1], "--output", "folded"))
		for fn, v := range want {
			if got[fn] != v {
				t.Errorf("%s/%s: %s: stored self %d, callgrind_annotate's %d", key[0], key[1], fn, got[fn], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s/%s: %d functions stored, callgrind_annotate has %d", key[0], key[1], len(got), len(want))
		}
	}
}

// --threads separates the threads of a file in a flame graph and a diff:
// every stack of the Gecko profile starts with its thread (prog or
// worker), whose sample counts are the file's; without, none does.
func TestQueryThreads(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "formats", "prog.gecko.json")
	for _, args := range [][]string{
		{"query", "--type", "flamegraph", "--head", file, "--output", "folded"},
		{"query", "--type", "diff", "--base", file, "--head", file, "--output", "folded"},
	} {
		perThread := map[string]int64{}
		for _, line := range strings.Split(strings.TrimSpace(mustRun(t, append(args, "--threads")...)), "\n") {
			f := strings.Fields(line[strings.LastIndexByte(line, ';'):])
			v, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			perThread[line[:strings.IndexByte(line, ';')]] += v
		}
		if perThread["prog"] != 35 || perThread["worker"] != 10 || len(perThread) != 2 {
			t.Errorf("%s --threads: samples per root %v, want prog 35 and worker 10", args[2], perThread)
		}
		if out := mustRun(t, args...); strings.Contains(out, "prog;") || strings.Contains(out, "worker;__start") {
			t.Errorf("%s without --threads has thread frames:\n%s", args[2], out)
		}
	}
}
