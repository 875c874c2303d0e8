package realbuild

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// twoProgram is a C program whose main spins in work for rounds rounds:
// two of them, alpha and beta, each with its own main and work.
func twoProgram(rounds int) string {
	return fmt.Sprintf(`#include <stdio.h>
__attribute__((noipa)) static unsigned long work(unsigned long h) {
	for (int i = 0; i < 1000000; i++)
		h = h * 31 + (unsigned long)i;
	return h;
}
int main(void) {
	unsigned long h = 1;
	for (int r = 0; r < %d; r++)
		h = work(h);
	printf("%%lu\n", h);
	return 0;
}
`, rounds)
}

// perfMains sums, by our own reading of perf script's text, the periods
// of the samples whose stack holds main, by the executable main is in.
func perfMains(t *testing.T, file string) map[string]int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	seen := map[string]bool{}
	period := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			clear(seen)
		case line[0] != '\t' && line[0] != ' ': // comm pid time: period event:
			fields := strings.Fields(line)
			for i, f := range fields[:len(fields)-1] {
				if strings.HasSuffix(f, ":") {
					period, _ = strconv.Atoi(fields[i+1])
					break
				}
			}
		case line[0] == '\t' || line[0] == ' ':
			fields := strings.Fields(line) // address symbol+offset (dso)
			if len(fields) < 3 {
				continue
			}
			sym, _, _ := strings.Cut(fields[1], "+")
			exe := filepath.Base(strings.Trim(fields[len(fields)-1], "()"))
			if sym == "main" && !seen[exe] {
				seen[exe] = true
				counts[exe] += period
			}
		}
	}
	return counts
}

// Executables: perf record of a script that runs two programs, each with
// its own main and work. Their frames stay apart in the functions table
// (alpha's, the program under most samples, is main; beta's is titled
// with its program) and each row's total is the samples our own reading
// of the perf script text counts, from the file and through ClickHouse on
// one server and the cluster; two apps' runs of those programs stored in
// one app export under their own process names.
func TestTwoProgramsUnderPerf(t *testing.T) {
	dir := Write(t, map[string]string{"alpha.c": twoProgram(300), "beta.c": twoProgram(120)})
	for _, p := range []string{"alpha", "beta"} {
		// -O0: work keeps its frame, so that perf's frame-pointer walk
		// finds main above it (a leaf without one hides its caller).
		run(t, exec.Command("gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", filepath.Join(dir, p), filepath.Join(dir, p+".c")))
	}
	script := filepath.Join(dir, "both.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+filepath.Join(dir, "alpha")+" >/dev/null\n"+filepath.Join(dir, "beta")+" >/dev/null\n"), 0o700); err != nil { // #nosec G306 -- the test's own script, run by it
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "both.perf")
	PerfProfile(t, script, file)
	want := perfMains(t, file)
	if want["alpha"] == 0 || want["beta"] == 0 || want["alpha"] <= want["beta"] {
		t.Fatalf("perf script counts main of alpha %d, of beta %d: want both, alpha's more", want["alpha"], want["beta"])
	}
	t.Logf("perf script: main of alpha %d, of beta %d (periods summed)", want["alpha"], want["beta"])
	check := func(t *testing.T, out string) {
		t.Helper()
		got := map[string]float64{}
		for _, r := range Rows(t, out, "functions") {
			got[fmt.Sprint(r["function"])] = r["total"].(float64)
		}
		if got["main"] != float64(want["alpha"]) || got["main ([beta])"] != float64(want["beta"]) {
			t.Errorf("functions main %v and main ([beta]) %v, want alpha's %d and beta's %d apart (rows %v)",
				got["main"], got["main ([beta])"], want["alpha"], want["beta"], got)
		}
	}
	out, _ := Flamediff(t, "query", "--type", "functions", "--format", "perf", "--output", "json", "--head", file)
	check(t, out)

	// beta alone, recorded as another build: a run of another program.
	alone := filepath.Join(t.TempDir(), "beta.perf")
	PerfProfile(t, filepath.Join(dir, "beta"), alone)
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
			Flamediff(t, "ingest", "--dsn", dsn, "--app", "progs", "--build", "both", "--run", "1", "--time", at, "--format", "perf", file)
			Flamediff(t, "ingest", "--dsn", dsn, "--app", "progs", "--build", "beta", "--run", "1", "--time", at, "--format", "perf", alone)
			out, _ := Flamediff(t, "query", "--dsn", dsn, "--output", "json", "--model",
				`{"queryType":"functions","app":"progs","head":{"builds":["both"]}}`)
			check(t, out)
			for build, process := range map[string]string{"both": "alpha", "beta": "beta"} {
				folded, _ := Flamediff(t, "export", "--dsn", dsn, "--app", "progs", "--build", build, "--run", "1", "--output", "folded")
				if !strings.Contains(folded, "\n"+process+";") && !strings.HasPrefix(folded, process+";") {
					t.Errorf("build %s exported without its process %s:\n%.400s", build, process, folded)
				}
			}
		})
	}
}
