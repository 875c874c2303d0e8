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

	"github.com/flamediff/flamediff/internal/toolprofiles"
)

// toolRuns is what the real profilers wrote for a format: a directory of
// base runs and one of head runs with the planted slowdown of slow().
type toolRuns struct {
	base, head string
	// reference returns each function's self total of a run's file by the
	// tool's own account, keyed by function name.
	reference func(file string) (map[string]int64, error)
	first     string // the first run's file name
	slow      string // slow()'s frame name
	slowAt    string // slow()'s source position as the culprit table prints it
}

var (
	toolsDir   string // removed by TestMain
	recordOnce sync.Once
	recorded   map[string]toolRuns
	recordErr  error
)

// runsPerSide is the runs of each build the real tools record: enough for
// the statistics of a planted 2x slowdown, few for a lean test.
const runsPerSide = 5

// recordTools runs each profiler runsPerSide times per build, once per
// test binary.
func recordTools(t *testing.T) map[string]toolRuns {
	t.Helper()
	recordOnce.Do(func() {
		dir, err := os.MkdirTemp("", "flamediff-tools")
		if recordErr = err; err != nil {
			return
		}
		toolsDir = dir
		mk := func(parts ...string) string {
			d := filepath.Join(append([]string{dir}, parts...)...)
			if recordErr == nil {
				recordErr = os.MkdirAll(d, 0o755)
			}
			return d
		}
		bin, err := toolprofiles.BuildC(mk("c"))
		if recordErr = err; err != nil {
			return
		}
		classes := mk("java")
		if recordErr = toolprofiles.BuildJava(classes); recordErr != nil {
			return
		}
		recorded = map[string]toolRuns{
			"callgrind": {base: mk("callgrind", "base"), head: mk("callgrind", "head"), first: "run0.callgrind", slow: "slow", slowAt: fmt.Sprintf("prog.c:%d", toolprofiles.SlowLineC),
				reference: func(file string) (map[string]int64, error) { return toolprofiles.Annotate(file) }},
			"cpuprofile": {base: mk("cpuprofile", "base"), head: mk("cpuprofile", "head"), first: "run0.cpuprofile", slow: "slow", slowAt: fmt.Sprintf("app.js:%d", toolprofiles.SlowLineJS),
				reference: func(file string) (map[string]int64, error) {
					counts, _, _, err := toolprofiles.V8Counts(file)
					byName := map[string]int64{}
					for k, v := range counts {
						byName[k[:strings.LastIndexByte(k, ' ')]] += v
					}
					return byName, err
				}},
			"jfr": {base: mk("jfr", "base"), head: mk("jfr", "head"), first: "run0.jfr", slow: "App.slow",
				slowAt: fmt.Sprintf("App:%d", toolprofiles.SlowLinesJava[0]+1), // slow's first line with samples
				reference: func(file string) (map[string]int64, error) {
					sums, _, err := toolprofiles.JFRTopFrames(file, "jdk.ExecutionSample", "")
					return sums, err
				}},
		}
		// Two at a time (the machine's cores): the JVM records its runs
		// alone, callgrind and node take turns.
		slow := map[string][3]int{"base": {40000, 2e6, 1e6}, "head": {160000, 8e6, 4e6}}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for _, side := range []string{"base", "head"} {
				ns := make([]int, runsPerSide)
				for i := range ns {
					ns[i] = slow[side][2]
				}
				if err := toolprofiles.JFRRuns(classes, filepath.Join(dir, "jfr", side), "run", ns...); err != nil {
					errs[0] = err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range runsPerSide {
				for _, side := range []string{"base", "head"} {
					name := fmt.Sprintf("run%d", i)
					_, err := toolprofiles.Callgrind(filepath.Join(dir, "callgrind", side), bin, name+".callgrind", slow[side][0])
					if err == nil {
						_, err = toolprofiles.CPUProfile(filepath.Join(dir, "cpuprofile", side), name+".cpuprofile", slow[side][1])
					}
					if err != nil {
						errs[1] = err
						return
					}
				}
			}
		}()
		wg.Wait()
		if recordErr = errors.Join(errs...); recordErr != nil {
			return
		}
		// node writes app.js beside its profiles: only profiles are runs.
		for _, tr := range recorded {
			for _, d := range []string{tr.base, tr.head} {
				os.Remove(filepath.Join(d, "app.js"))
			}
		}
	})
	if recordErr != nil {
		t.Fatal(recordErr)
	}
	return recorded
}

var (
	referenceMu sync.Mutex
	referenced  = map[string]map[string]int64{}
)

// references returns the tool's self totals of a file, read once.
func references(t *testing.T, tr toolRuns, file string) map[string]int64 {
	t.Helper()
	referenceMu.Lock()
	defer referenceMu.Unlock()
	if want, ok := referenced[file]; ok {
		return want
	}
	want, err := tr.reference(file)
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
			for format, tr := range runs {
				t.Run(format, func(t *testing.T) {
					for build, dir := range map[string]string{"base": tr.base, "head": tr.head} {
						out := mustRun(t, "ingest", "--dsn", dsn, "--app", format, "--build", build, dir)
						if n := strings.Count(out, "stored "); n != runsPerSide {
							t.Fatalf("ingest of %s stored %d runs:\n%s", dir, n, out)
						}
						// The first run of each build against the tool's own
						// account (the JDK's takes a JVM a file).
						file := filepath.Join(dir, tr.first)
						want := references(t, tr, file)
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
					if m == nil || m[1] != tr.slow || m[2] != "`"+tr.slowAt+"`" {
						t.Errorf("first regression %q, want %s at %s:\n%s", m, tr.slow, tr.slowAt, verdict)
					}
				})
			}
		})
	}
}
