package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
)

// busyWork is the Go source of the test programs' work: n rounds of
// xorshift64 into sink, a cost that grows with n alone.
const busyWork = `var sink uint64

func work(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}
`

// cpuClock is the Go source of the test programs' timer (the program
// imports syscall and unsafe).
const cpuClock = `// cpu is the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID): other
// processes on the machine slow it less than the wall clock.
func cpu() int64 {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return ts.Nano()
}
`

// benchProgram is a real program to benchmark: three functions of busy
// work, each timed by the thread's CPU clock, written as folded stacks to
// $FLAMEDIFF_PROFILE. slowdown (set at build time) makes price do that
// much more work: 0.125 of its 40% is a 5% slower total.
const benchProgram = `package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

var slowdown = "0"

` + busyWork + "\n" + cpuClock + `
func main() {
	runtime.LockOSThread()
	s, err := strconv.ParseFloat(slowdown, 64)
	if err != nil {
		panic(err)
	}
	const unit = 1000000
	var lines string
	for _, f := range []struct {
		name string
		n    int
	}{{"parse", 3 * unit}, {"price", int(4 * unit * (1 + s))}, {"render", 3 * unit}} {
		t0 := cpu()
		work(f.n)
		lines += fmt.Sprintf("main;%s %d\n", f.name, cpu()-t0)
	}
	if err := os.WriteFile(os.Getenv("FLAMEDIFF_PROFILE"), []byte(lines), 0o600); err != nil {
		panic(err)
	}
}
`

// buildBench builds benchProgram with a planted slowdown and returns the
// binary.
func buildBench(t *testing.T, dir, slowdown string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"main.go": benchProgram, "go.mod": "module bench\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bench-"+slowdown)
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.slowdown="+slowdown, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the benchmark: %v\n%s", err, out)
	}
	return bin
}

// The copyable CI loop (scripts/flamediff-loop.sh) on a real program: a
// build with a planted 5% slowdown is looped until FAIL, naming the slower
// function, and an unchanged build until PASS with no culprit, both within
// the maximum, through files and through stored runs in ClickHouse.
func TestLoopScript(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the loop test builds a Go program: go is not on PATH")
	}
	dir := t.TempDir()
	base, slower, same := buildBench(t, dir, "0"), buildBench(t, dir, "0.125"), buildBench(t, dir, "0")
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "flamediff-loop.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	// Looks of 20 runs a side: at 5, the total's test can decide a FAIL
	// while the culprits' share of a look's alpha is still too small to
	// place it (a FAIL with no culprit, in about one loop in five). Up to
	// 120 runs: beside a loaded CI's other tests a run's CPU time spreads
	// by about 6%, and 60 runs a side then bound an unchanged build only
	// to ±3.2%, short of ruling out the 3% regression (a CI run ended
	// INCONCLUSIVE there).
	const maxRuns, batch = 120, 20
	for _, c := range []struct {
		name, head string
		code       int
		result     string
	}{{"planted 5% slowdown", slower, 3, "FAIL"}, {"unchanged", same, 0, "PASS"}} {
		for _, stored := range []bool{false, true} {
			name := c.name + map[bool]string{false: ", files", true: ", stored"}[stored]
			t.Run(name, func(t *testing.T) {
				out := t.TempDir()
				args := []string{script, "--base-cmd", base, "--head-cmd", c.head, "--out", out, "--ext", "folded",
					"--batch", strconv.Itoa(batch), "--max-runs", strconv.Itoa(maxRuns), "--min-change", "0.03", "--alpha", "0.01", "--flamediff", flamediffBinary(t)}
				if stored {
					args = append(args, "--dsn", dsn, "--app", strings.ReplaceAll(name, " ", "-"), "--base-build", "base", "--head-build", "head")
				}
				cmd := exec.Command("bash", args...)
				log, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Fatal(err)
				}
				if code := cmd.ProcessState.ExitCode(); code != c.code {
					t.Fatalf("exit %d, want %d:\n%s", code, c.code, log)
				}
				raw, err := os.ReadFile(filepath.Join(out, "verdict.json"))
				if err != nil {
					t.Fatal(err)
				}
				var v struct {
					Result      string
					Regressions []struct{ Function string }
					Sequential  struct{ Runs, Looks int }
				}
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s after %d runs a side", v.Result, v.Sequential.Runs)
				switch {
				case v.Result != c.result || v.Sequential.Runs > maxRuns || v.Sequential.Looks != maxRuns/batch:
					t.Errorf("verdict %+v, want %s within %d runs", v, c.result, maxRuns)
				case c.result == "FAIL" && (len(v.Regressions) == 0 || v.Regressions[0].Function != "price"):
					t.Errorf("the planted slowdown is not the top culprit: %+v", v.Regressions)
				case c.result == "PASS" && len(v.Regressions) > 0:
					t.Errorf("an unchanged build has culprits: %+v", v.Regressions)
				}
				comment, err := os.ReadFile(filepath.Join(out, "comment.md"))
				if err != nil || !strings.HasPrefix(string(comment), "### Flamediff: "+c.result) {
					t.Errorf("comment: %v\n%s", err, comment)
				}
				if fi, err := os.Stat(filepath.Join(out, "report.html")); err != nil || fi.Size() == 0 {
					t.Errorf("report: %v", err)
				}
			})
		}
	}
}

// A sequential look's exit codes as a shell sees them (docs/CLI.md): 4 to
// add runs, 5 at the maximum undecided, 3 and 0 for deterministic costs
// decided in one run a side, 1 for a run count off the plan, 2 for a
// look of relative shares.
func TestSequentialExitCodes(t *testing.T) {
	stacks := []string{"main;parse", "main;price"}
	noise := []int{0, 90, -80, 60, -70, 40, -30, 85, -60, 20} // about 6% a run
	base := foldedRuns(t, "base", 10, stacks, func(_ string, run int) int { return 1000 + noise[run] })
	head := foldedRuns(t, "head", 10, stacks, func(_ string, run int) int { return 1000 + noise[(run+3)%10] })
	fixedBase := foldedRuns(t, "fixed-base", 1, stacks, func(string, int) int { return 1000 })
	fixedHead := foldedRuns(t, "fixed-head", 1, stacks, func(s string, _ int) int { return map[bool]int{true: 1100, false: 1000}[s == "main;price"] })
	look := func(head, base []string, extra ...string) []string {
		args := append([]string{"query", "--type", "diff", "--head"}, head...)
		return append(append(append(args, "--base"), base...), extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string // on stderr
	}{
		{"undecided", look(head[:5], base[:5], "--max-runs", "30"), 4, "CONTINUE: 5 runs a side"},
		{"undecided at the maximum", look(head, base, "--max-runs", "10"), 5, "INCONCLUSIVE: 10 runs a side, the plan's maximum"},
		{"deterministic regression", look(fixedHead, fixedBase, "--max-runs", "10", "--batch", "1", "--deterministic"), 3, "deterministic"},
		{"deterministic, under the threshold", look(fixedHead, fixedBase, "--max-runs", "10", "--batch", "1", "--deterministic", "--min-change", "0.1"), 0, ""},
		{"off the plan", look(head[:7], base[:7], "--max-runs", "30"), 1, "not a look of the plan"},
		{"relative", look(head[:5], base[:5], "--max-runs", "30", "--normalize", "relative"), 2, "--normalize absolute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stderr, code := runBinary(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d with %q: %s", code, c.code, c.want, stderr)
			}
		})
	}
}
