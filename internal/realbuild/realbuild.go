// Package realbuild makes real builds for tests, as a CI job would: it
// writes Go programs into a directory, builds them with the go command
// (with -trimpath or -gcflags where a test asks), installs the binaries at
// paths and names of their own, runs them interleaved so that each writes a
// runtime/pprof CPU profile, and asks the flamediff command (built from
// this module) for its verdict on the profiles. The references the tests
// hold Flamediff's answers against come from elsewhere: pprof's flat
// profile (internal/pproftop) and the programs' own sources.
package realbuild

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// ProfileHz is the CPU profiling rate of Main's programs: 2.5 times
// runtime/pprof's default. Linux delivers a thread's CPU timer signals at
// most about 280 times a second here (asked for 500 or 1000 a second, a
// run has no more samples, and each would count for too little time).
const ProfileHz = 250

// Main is the source of a main package that profiles call (a Go
// expression of the imports) into the file named by its first argument,
// at ProfileHz, and prints the expression's value so the work is kept.
func Main(imports []string, call string) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"runtime\"\n\t\"runtime/pprof\"\n")
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t%q\n", imp)
	}
	fmt.Fprintf(&b, `)

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	// Set before StartCPUProfile, the rate stays (runtime/pprof then
	// warns that it cannot set its own).
	runtime.SetCPUProfileRate(%d)
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	v := %s
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		panic(err)
	}
	fmt.Println(v)
}
`, ProfileHz, call)
	return b.String()
}

// Write writes files (slash paths relative to the directory, contents)
// into a new directory under t.TempDir() and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Build runs `go build -o out flags... .` in dir (a module's main
// package), with GOFLAGS=-mod=mod so that a go.mod naming a released
// module fetches it through the module proxy into the shared cache.
func Build(t testing.TB, dir, out string, flags ...string) {
	t.Helper()
	args := append(append([]string{"build", "-o", out}, flags...), ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, b)
	}
}

// Install copies the binary src to dst (creating its directory), as a
// deployment puts a build at a path and a name of its own.
func Install(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if err := errors.Join(err, out.Close()); err != nil {
		t.Fatal(err)
	}
}

// A Runner runs a binary once so that a profile of the run is written to
// file.
type Runner func(t testing.TB, bin, file string)

// GoProfile runs a binary of Main, which profiles itself into the file
// named by its argument. Asynchronous preemption is off
// (GODEBUG=asyncpreemptoff=1): the signal that preempts a long loop every
// 10 ms makes the loop's profiling signal land in runtime.asyncPreempt,
// which then took a fifth of the samples of a tight loop from the function
// that ran it, at random.
func GoProfile(t testing.TB, bin, file string) {
	t.Helper()
	cmd := exec.Command(bin, file)
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
	run(t, cmd)
}

// PerfProfile runs a binary under `perf record -g` (frame pointers) and
// writes what `perf script` prints of the recording to file.
func PerfProfile(t testing.TB, bin, file string) {
	t.Helper()
	data := file + ".data"
	run(t, exec.Command("perf", "record", "-q", "-g", "-o", data, "--", bin))
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	script := exec.Command("perf", "script", "-i", data)
	script.Stdout = out
	var stderr bytes.Buffer
	script.Stderr = &stderr
	err = script.Run()
	if err := errors.Join(err, out.Close(), os.Remove(data)); err != nil {
		t.Fatalf("perf script -i %s: %v\n%s", data, err, stderr.Bytes())
	}
}

func run(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running %s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
}

// RunInterleaved runs each binary n times with run, round by round (one
// run of every binary per round, in turn), so that a machine's drift falls
// on all of them alike. Run i of the binary named name writes its profile
// to dir/<name>-<i><ext>; the files are returned by name, oldest first.
func RunInterleaved(t testing.TB, dir string, n int, bins map[string]string, run Runner, ext string) map[string][]string {
	t.Helper()
	names := slices.Sorted(maps.Keys(bins))
	files := make(map[string][]string, len(bins))
	for i := range n {
		for _, name := range names {
			file := filepath.Join(dir, fmt.Sprintf("%s-%02d%s", name, i, ext))
			run(t, bins[name], file)
			files[name] = append(files[name], file)
		}
	}
	return files
}

var (
	cliOnce sync.Once
	cliDir  string
	cliPath string
	cliErr  error
)

// CLI builds the flamediff command of this module once per test binary and
// returns its path; Cleanup removes it.
func CLI(t testing.TB) string {
	t.Helper()
	cliOnce.Do(func() {
		if cliDir, cliErr = os.MkdirTemp("", "realbuild-flamediff"); cliErr != nil {
			return
		}
		cliPath = filepath.Join(cliDir, "flamediff")
		if out, err := exec.Command("go", "build", "-o", cliPath, "github.com/flamediff/flamediff/cmd/flamediff").CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("building flamediff: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// Cleanup removes the command CLI built; call it after the tests.
func Cleanup() {
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
}

// Flamediff runs the flamediff command and returns its standard output
// and exit code; an error to start it or an exit code of 1 or 2 (an
// error, a usage mistake) fails the test.
func Flamediff(t testing.TB, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(CLI(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("flamediff %s: %v", strings.Join(args, " "), err)
	}
	if code := cmd.ProcessState.ExitCode(); code == 1 || code == 2 {
		t.Fatalf("flamediff %s: exit %d: %s", strings.Join(args, " "), code, stderr.Bytes())
	}
	return stdout.String(), cmd.ProcessState.ExitCode()
}

// DiffArgs are the arguments of `flamediff query --type diff` on files.
func DiffArgs(base, head []string, extra ...string) []string {
	args := append([]string{"query", "--type", "diff", "--head"}, head...)
	return append(append(append(args, "--base"), base...), extra...)
}

// Verdict reads the verdict of a comparison from `flamediff query ...
// --output json`: the "verdict" of the first culprits frame's custom meta
// (docs/QUERIES.md, pkg/frames.Culprits).
func Verdict(t testing.TB, out string) *verdict.Verdict {
	t.Helper()
	var frames []struct {
		Schema struct {
			Name string `json:"name"`
			Meta struct {
				Custom struct {
					Verdict *verdict.Verdict `json:"verdict"`
				} `json:"custom"`
			} `json:"meta"`
		} `json:"schema"`
	}
	if err := json.Unmarshal([]byte(out), &frames); err != nil {
		t.Fatalf("reading the frames of --output json: %v: %.300s", err, out)
	}
	for _, f := range frames {
		if f.Schema.Name == "culprits" && f.Schema.Meta.Custom.Verdict != nil {
			return f.Schema.Meta.Custom.Verdict
		}
	}
	t.Fatalf("no culprits frame with a verdict in: %.300s", out)
	return nil
}

// Rows reads the frame named name of `flamediff query ... --output json`
// as rows of its fields by name (the first frame of that name).
func Rows(t testing.TB, out, name string) []map[string]any {
	t.Helper()
	var frames []struct {
		Schema struct {
			Name   string `json:"name"`
			Fields []struct {
				Name string `json:"name"`
			} `json:"fields"`
		} `json:"schema"`
		Data struct {
			Values [][]any `json:"values"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &frames); err != nil {
		t.Fatalf("reading the frames of --output json: %v: %.300s", err, out)
	}
	for _, f := range frames {
		if f.Schema.Name != name {
			continue
		}
		var rows []map[string]any
		for i, field := range f.Schema.Fields {
			for r, v := range f.Data.Values[i] {
				if r == len(rows) {
					rows = append(rows, map[string]any{})
				}
				rows[r][field.Name] = v
			}
		}
		return rows
	}
	t.Fatalf("no frame %q in: %.300s", name, out)
	return nil
}

// DiffVerdict is the verdict of `flamediff query --type diff` on the files
// (--output json), with extra flags.
func DiffVerdict(t testing.TB, base, head []string, extra ...string) *verdict.Verdict {
	t.Helper()
	out, _ := Flamediff(t, DiffArgs(base, head, append(extra, "--output", "json")...)...)
	return Verdict(t, out)
}

// Culprits lists a verdict's culprits, regressions first.
func Culprits(v *verdict.Verdict) []verdict.Culprit {
	return append(slices.Clone(v.Regressions), v.Improvements...)
}

// Describe prints a verdict's result and culprits for a failure message.
func Describe(v *verdict.Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", v.Result, v.Headline)
	for _, c := range Culprits(v) {
		fmt.Fprintf(&b, "  %s %s %+.2f%% [%+.2f%%, %+.2f%%] at %s (callee %q)\n", c.Kind, c.Function,
			100*float64(c.Delta), 100*float64(c.DeltaLow), 100*float64(c.DeltaHigh), strings.Join(c.Path, ";"), c.Callee)
	}
	for _, m := range v.Moved {
		fmt.Fprintf(&b, "  moved %.2f%% into %s under %q, net %+.2f%% [%+.2f%%, %+.2f%%]\n", 100*float64(m.Moved), m.Function,
			m.Caller, 100*float64(m.Net), 100*float64(m.NetLow), 100*float64(m.NetHigh))
	}
	return b.String()
}

// Flat is pprof's flat profile of a comparison: each function's change of
// flat (self) value, summed over the head runs less the base runs, and the
// base runs' summed total (pprof -top -diff_base).
type Flat struct {
	Change    map[string]int64
	BaseTotal int64
	base      []string
	head      []string
}

// FlatDiff reads pprof's flat profile of head against base.
func FlatDiff(t testing.TB, base, head []string) *Flat {
	t.Helper()
	diff, err := pproftop.Top(head, base)
	if err != nil {
		t.Fatal(err)
	}
	top, err := pproftop.Top(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &Flat{Change: map[string]int64{}, base: base, head: head}
	for name, e := range diff {
		f.Change[name] = e.Flat
	}
	for _, e := range top {
		f.BaseTotal += e.Flat
	}
	return f
}

// Share is the summed flat change of functions as a share of the base
// total: with as many runs a side, the change of the mean run over the
// mean base run, as Flamediff's absolute deltas are.
func (f *Flat) Share(functions ...string) float64 {
	var sum int64
	for _, fn := range functions {
		sum += f.Change[fn]
	}
	return float64(sum) / float64(f.BaseTotal)
}

// Subtree lists the functions pprof shows at or below function (pprof's
// -show_from, anchored) in the head or the base runs: the functions whose
// flat change a culprit at function can explain.
func (f *Flat) Subtree(t testing.TB, function string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, files := range [][]string{f.head, f.base} {
		// A function of one side only shows nothing on the other.
		top, err := pproftop.Top(files, nil, "-show_from=^"+regexp.QuoteMeta(function)+"$")
		if err != nil {
			t.Fatal(err)
		}
		for name, e := range top {
			if e.Cum != 0 {
				set[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
