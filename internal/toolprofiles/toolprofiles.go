// Package toolprofiles records profiles with the real profilers, for the
// tests of the formats they write, and reads the profilers' own answers
// to check Flamediff's against. Each program is tiny: main calls fast()
// and slow(), both call leaf(); slow() also loops on its own for as many
// iterations as its argument says, so that a larger argument plants a
// slowdown whose culprit is slow() itself, at a known line.
package toolprofiles

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// CSource is the C program of Callgrind; SlowLineC is slow()'s line in it.
const CSource = `#include <stdio.h>
#include <stdlib.h>
static double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
double fast(void) { return leaf(20000); }
double slow(int n) {
	double s = leaf(20000);
	for (int i = 0; i < n; i++) s += i * 0.25;
	return s;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double t = 0;
	for (int k = 0; k < 5; k++) t += fast() + slow(n);
	printf("%d\n", t > 0);
	return 0;
}
`

// SlowLineC is the line of slow() in CSource.
const SlowLineC = 5

// BuildC compiles CSource with gcc in dir, with debug information.
func BuildC(dir string) (string, error) {
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(CSource), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "prog")
	return bin, run(dir, "gcc", "-g", "-O0", "-o", bin, src)
}

// Callgrind runs the program bin (from BuildC) under valgrind's callgrind
// with slow's argument slowN and returns the callgrind file, dir/name.
func Callgrind(dir, bin, name string, slowN int) (string, error) {
	out := filepath.Join(dir, name)
	return out, run(dir, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out, bin, strconv.Itoa(slowN))
}

// NodeApp is the JavaScript program of CPUProfile; SlowLineJS is slow()'s
// line in it.
const NodeApp = `function leaf(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) } return s }
function fast() { return leaf(2e6) }
function slow(n) { let s = leaf(2e6); for (let i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25 } return s }
const n = Number(process.argv[2])
let t = 0
for (let k = 0; k < 20; k++) { t += fast() + slow(n) }
if (t < 0) console.log(t)
`

// SlowLineJS is the line of slow() in NodeApp.
const SlowLineJS = 3

// CPUProfile runs NodeApp (written to dir/app.js) with `node --cpu-prof`,
// slow's argument slowN, and returns the .cpuprofile, dir/name.
func CPUProfile(dir, name string, slowN int) (string, error) {
	app := filepath.Join(dir, "app.js")
	if err := os.WriteFile(app, []byte(NodeApp), 0o600); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), run(dir, "node", "--cpu-prof", "--cpu-prof-dir="+dir, "--cpu-prof-name="+name,
		"--cpu-prof-interval=250", app, strconv.Itoa(slowN))
}

// PythonApp is the Python program of CProfile; SlowLinePy is slow()'s
// line in it (its def: cProfile knows no other).
const PythonApp = `import sys

def leaf(n):
    s = 0
    for i in range(n):
        s += i * 0.5
    return s

def fast():
    return leaf(100000)

def slow(n):
    s = leaf(100000)
    for i in range(n):
        s += i * 0.25
    return s

n = int(sys.argv[1])
t = 0
for k in range(5):
    t += fast() + slow(n)
if t < 0:
    print(t)
`

// SlowLinePy is the line of slow() in PythonApp.
const SlowLinePy = 12

// cprofileRun is `python -m cProfile -o OUT APP ARGS` with CPU time for
// its timer (cProfile's API takes one, its command line does not): the
// recordings run beside the JVM's and Chromium's, and wall time would
// count their turns on the CPU, hiding slow()'s 4x behind the noise.
const cprofileRun = `import cProfile, runpy, sys, time
out, sys.argv = sys.argv[1], sys.argv[2:]
p = cProfile.Profile(time.process_time)
p.runcall(runpy.run_path, sys.argv[0], run_name="__main__")
p.dump_stats(out)
`

// CProfile runs PythonApp (written to dir/app.py) under cProfile (CPU
// time), slow's argument slowN, and returns the stats file, dir/name.
func CProfile(dir, name string, slowN int) (string, error) {
	app := filepath.Join(dir, "app.py")
	if err := os.WriteFile(app, []byte(PythonApp), 0o600); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	return out, run(dir, "python3", "-c", cprofileRun, out, app, strconv.Itoa(slowN))
}

// pstatsSelf prints each function's own time in nanoseconds, rounded, as
// Python's pstats reads them, keyed by the name Flamediff gives it
// (built-ins, file "~", inside their <>).
const pstatsSelf = `import json, pstats, sys
self = {}
for (file, line, name), v in pstats.Stats(sys.argv[1]).stats.items():
    if file == "~" and line == 0 and name.startswith("<") and name.endswith(">"):
        name = name[1:-1]
    self[name] = self.get(name, 0) + round(v[2] * 1e9)
print(json.dumps({k: v for k, v in self.items() if v}))
`

// PstatsSelf reads each function's own time from a cProfile stats file
// with Python's pstats, in nanoseconds, summed by function name; those
// without any are left out, as a profile has no sample of them.
func PstatsSelf(file string) (map[string]int64, error) {
	out, err := exec.Command("python3", "-c", pstatsSelf, file).Output() // #nosec G204 -- the tests' own tools
	if err != nil {
		return nil, fmt.Errorf("pstats: %v", err)
	}
	self := map[string]int64{}
	return self, json.Unmarshal(out, &self)
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...) // #nosec G204 -- the tests' own tools
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// annotateLine is a function's line of callgrind_annotate's output:
// "4,400,150 (97.22%)  prog.c:leaf [/tmp/x/prog]".
var annotateLine = regexp.MustCompile(`^\s*([\d,]+) \(\s*[\d.]+%\)\s+[^:]*:(.*?)(?: \[(.*)\])?$`)

// Annotate runs callgrind_annotate on file (with args, e.g.
// --inclusive=yes) and returns each function's cost by name. (It keys a
// function by file, function and object, but names the file of inlined
// code and leaves the object out there, so only the name is a key both
// sides share.)
func Annotate(file string, args ...string) (map[string]int64, error) {
	out, err := exec.Command("callgrind_annotate", append(args, "--threshold=100", "--auto=no", file)...).Output() // #nosec G204 -- the tests' own tools
	if err != nil {
		return nil, fmt.Errorf("callgrind_annotate: %v", err)
	}
	costs := map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		m := annotateLine.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, "PROGRAM TOTALS") || strings.Contains(line, "events annotated") {
			continue
		}
		v, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		costs[m[2]] += v
	}
	if len(costs) < 10 {
		return nil, fmt.Errorf("callgrind_annotate listed %d functions:\n%s", len(costs), out)
	}
	return costs, nil
}

// V8Counts reads a V8 CPU profile's count of samples per function, keyed
// "function url" ("(anonymous)" for V8's unnamed functions), twice: as the
// format defines them (the sample ids per node, counted) and as V8 counted
// them itself (the nodes' hit counts, which miss a sample or two that V8
// records apart, such as the one it takes when profiling starts). It also
// returns the profile's duration in microseconds.
func V8Counts(file string) (samples, hits map[string]int64, duration int64, err error) {
	var raw struct {
		Nodes []struct {
			ID        int64
			CallFrame struct{ FunctionName, URL string }
			HitCount  int64
		}
		StartTime, EndTime int64
		Samples            []int64
	}
	b, err := os.ReadFile(file) // #nosec G304 -- the tests' own recording
	if err != nil {
		return nil, nil, 0, err
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Samples) == 0 {
		return nil, nil, 0, fmt.Errorf("%s: %v (%d samples)", file, err, len(raw.Samples))
	}
	perNode := map[int64]int64{}
	for _, id := range raw.Samples {
		perNode[id]++
	}
	samples, hits = map[string]int64{}, map[string]int64{}
	for _, n := range raw.Nodes {
		fn := n.CallFrame.FunctionName
		if fn == "" {
			fn = "(anonymous)"
		}
		if c := perNode[n.ID]; c > 0 {
			samples[fn+" "+n.CallFrame.URL] += c
		}
		if n.HitCount > 0 {
			hits[fn+" "+n.CallFrame.URL] += n.HitCount
		}
	}
	return samples, hits, raw.EndTime - raw.StartTime, nil
}

// JavaSource is the Java program of JFR: slow(n) loops n times on its own
// and allocate() allocates about 1.3 KiB an iteration.
const JavaSource = `public class App {
    static double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += Math.sqrt(i); return s; }
    static double fast() { return leaf(200000); }
    static double slow(int n) {
        double s = leaf(200000);
        for (int i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25; }
        return s;
    }
    static long allocate(int n) {
        long t = 0;
        for (int i = 0; i < n; i++) { byte[] b = new byte[1024 + i % 512]; t += b.length; }
        return t;
    }
    // A fixed amount of work, not a fixed time: JFR samples threads that
    // run, so a run's samples follow its CPU time however busy the machine.
    static double work(int n, int iterations) {
        double t = 0;
        for (int k = 0; k < iterations; k++) { t += fast() + slow(n) + allocate(2000); }
        return t;
    }
    // App N works; App DIR NAME N... records a run a file with jdk.jfr's
    // API, DIR/NAMEi.jfr for the i-th N, in one JVM (warmed up first).
    public static void main(String[] args) throws Exception {
        if (args.length == 1) {
            if (work(Integer.parseInt(args[0]), 100) < 0) System.out.println();
            return;
        }
        jdk.jfr.Configuration profile = jdk.jfr.Configuration.getConfiguration("profile");
        if (work(Integer.parseInt(args[2]), 20) < 0) System.out.println();
        for (int i = 2; i < args.length; i++) {
            try (jdk.jfr.Recording r = new jdk.jfr.Recording(profile)) {
                // A sample a millisecond (the profile settings' is 10): a
                // run's few hundred milliseconds give hundreds of samples.
                r.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(1));
                r.start();
                if (work(Integer.parseInt(args[i]), 60) < 0) System.out.println();
                r.stop();
                r.dump(java.nio.file.Path.of(args[0], args[1] + (i - 2) + ".jfr"));
            }
        }
    }
}
`

// JFRRuns records a run for each of slowNs in one JVM with the JDK's
// jdk.jfr API, the profile settings and an execution sample a millisecond,
// dir/NAME0.jfr, NAME1.jfr, ...: a
// JVM per run would spend most of a test's time starting JFR.
func JFRRuns(classes, dir, name string, slowNs ...int) error {
	args := []string{"-cp", classes, "App", dir, name}
	for _, n := range slowNs {
		args = append(args, strconv.Itoa(n))
	}
	return run(dir, "java", args...)
}

// SlowLinesJava are the first and last lines of slow() in JavaSource.
var SlowLinesJava = [2]int64{4, 8}

// BuildJava compiles JavaSource with javac into dir.
func BuildJava(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "App.java"), []byte(JavaSource), 0o600); err != nil {
		return err
	}
	return run(dir, "javac", "-d", dir, filepath.Join(dir, "App.java"))
}

// JFR runs App (from BuildJava in classes) with a flight recording of the
// JDK's profile settings, slow's argument slowN, and returns the
// recording, dir/name.
func JFR(classes, dir, name string, slowN int) (string, error) {
	out := filepath.Join(dir, name)
	return out, run(dir, "java", "-XX:StartFlightRecording=filename="+out+",settings=profile", "-Xlog:jfr=warning",
		"-cp", classes, "App", strconv.Itoa(slowN))
}

// JFRTopFrames reads the events of a type with the JDK's `jfr print
// --json` and sums them by the method of their top frame,
// "package.Class.method": one each, or the value of their field weight.
// It also returns the event count `jfr summary` gives.
func JFRTopFrames(file, event, weight string) (map[string]int64, int64, error) {
	out, err := exec.Command("jfr", "print", "--json", "--events", event, file).Output() // #nosec G204 -- the tests' own tools
	if err != nil {
		return nil, 0, fmt.Errorf("jfr print: %v", err)
	}
	var doc struct {
		Recording struct {
			Events []struct {
				Values map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, 0, err
	}
	sums := map[string]int64{}
	for _, e := range doc.Recording.Events {
		var st struct {
			Frames []struct {
				Method struct {
					Type struct{ Name string }
					Name string
				}
			}
		}
		if err := json.Unmarshal(e.Values["stackTrace"], &st); err != nil || len(st.Frames) == 0 {
			continue
		}
		v := int64(1)
		if weight != "" {
			if err := json.Unmarshal(e.Values[weight], &v); err != nil {
				return nil, 0, err
			}
		}
		m := st.Frames[0].Method
		sums[strings.ReplaceAll(m.Type.Name, "/", ".")+"."+m.Name] += v
	}
	summary, err := exec.Command("jfr", "summary", file).Output() // #nosec G204 -- the tests' own tools
	if err != nil {
		return nil, 0, fmt.Errorf("jfr summary: %v", err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(event) + `\s+(\d+)\s`).FindSubmatch(summary)
	if m == nil {
		return nil, 0, fmt.Errorf("jfr summary lists no %s:\n%s", event, summary)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return sums, n, nil
}
