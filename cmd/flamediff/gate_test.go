package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// foldedRuns writes one folded file per run: run i gets the lines of
// stacks with the value value(stack, i). It returns the files, oldest
// first.
func foldedRuns(t *testing.T, name string, runs int, stacks []string, value func(stack string, run int) int) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range runs {
		var sb strings.Builder
		for _, s := range stacks {
			fmt.Fprintf(&sb, "%s %d\n", s, value(s, i))
		}
		f := filepath.Join(dir, fmt.Sprintf("%s-%02d.folded", name, i))
		if err := os.WriteFile(f, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// The gate's exit codes as a shell sees them, and the verdicts behind
// them: 3 for a significant regression of at least --min-change, 0
// otherwise, 2 for a usage mistake.
func TestQueryGate(t *testing.T) {
	stacks := []string{"main;parse", "main;price;regexp.compile", "main;price;sum", "main;render"}
	jitter := func(run int) int { return []int{-2, 1, 0, 2, -1, 1, -2, 0}[run] } // ±0.2% noise
	base := foldedRuns(t, "base", 8, stacks, func(s string, run int) int { return 1000 + jitter(run) })
	same := foldedRuns(t, "same", 8, stacks, func(s string, run int) int { return 1000 + jitter((run+3)%8) })
	slower := foldedRuns(t, "slower", 8, stacks, func(s string, run int) int {
		if s == "main;price;regexp.compile" {
			return 1600 + jitter(run) // 1.6x of a quarter of the total
		}
		return 1000 + jitter((run+5)%8)
	})
	twoSlower := foldedRuns(t, "two-slower", 8, stacks, func(s string, run int) int {
		switch s {
		case "main;price;regexp.compile":
			return 1600 + jitter(run)
		case "main;render":
			return 1300 + jitter(run)
		}
		return 1000 + jitter((run+5)%8)
	})
	doubled := foldedRuns(t, "doubled", 8, stacks, func(s string, run int) int { return 2000 + 2*jitter((run+1)%8) })
	// A slower machine: every function 4% slower, each with its own noise.
	slowerMachine := foldedRuns(t, "slower-machine", 8, stacks, func(s string, run int) int { return 1040 + jitter((run+len(s))%8) })
	noisy := foldedRuns(t, "noisy", 8, stacks, func(s string, run int) int { return 1000 + 60*jitter(run) }) // ±12%
	diff := func(head, base []string, extra ...string) []string {
		args := append([]string{"query", "--type", "diff", "--head"}, head...)
		return append(append(append(args, "--base"), base...), extra...)
	}
	gate := []string{"--fail-on-regression", "--output", "markdown"}
	for _, tt := range []struct {
		name    string
		args    []string
		code    int
		verdict string // in the markdown
	}{
		{"A/A", diff(same, base, gate...), 0, "PASS"},
		{"regression", diff(slower, base, gate...), 3, "FAIL"},
		{"improvement", diff(base, slower, gate...), 0, "PASS"},
		{"regression below --min-change", diff(slower, base, append(gate, "--min-change", "0.2")...), 0, "PASS"},
		{"regression below --min-base-share", diff(slower, base, append(gate, "--min-base-share", "0.2")...), 0, "PASS"},
		// One change of everything: not a list of regressions, and no
		// failure a slower machine could cause.
		{"everything doubled, absolute", diff(doubled, base, gate...), 0, "INCONCLUSIVE"},
		{"everything doubled, relative", diff(doubled, base, append(gate, "--normalize", "relative")...), 0, "PASS"},
		{"everything 4% slower, absolute", diff(slowerMachine, base, gate...), 0, "INCONCLUSIVE"},
		{"everything 4% slower, relative", diff(slowerMachine, base, append(gate, "--normalize", "relative")...), 0, "PASS"},
		{"too noisy to rule out a regression", diff(noisy, base, gate...), 0, "INCONCLUSIVE"},
		{"one run a side", diff(slower[:1], base[:1], gate...), 0, "INCONCLUSIVE"},
		{"gate without a base", []string{"query", "--type", "functions", "--fail-on-regression", "--head", base[0]}, 2, ""},
		{"unknown normalisation", diff(slower, base, "--normalize", "percent"), 2, ""},
		{"alpha out of range", diff(slower, base, "--alpha", "0.9"), 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stderr, code := runBinary(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if tt.verdict == "" {
				return
			}
			out, _ := flamediff(t, tt.args...)
			if !strings.Contains(out, "### Flamediff: "+tt.verdict+"\n") {
				t.Errorf("want verdict %s:\n%s", tt.verdict, out)
			}
		})
	}

	out, err := flamediff(t, diff(slower, base, "--output", "markdown")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**FAIL**: `regexp.compile`'s own time grew, called from `price`: +15.00% of the base total",
		"#### Regressions (1)", // regexp.compile, not its callers
		"| `regexp.compile` | self | `price` | +15.00% | +14.96% .. +15.04% |", "#### Improvements (0)",
		"| base | 8 | 4.00 K | 5.83 | 0.1% | 3.99 K .. 4.01 K |", "| head | 8 | 4.60 K |", // the panel's units

		"Mann-Whitney U p = 0.00016 (significant at 0.05)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// The slower machine is one culprit, spread at the root, and the
	// verdict says what to compare instead.
	out, _ = flamediff(t, diff(slowerMachine, base, "--output", "markdown")...)
	for _, want := range []string{"**INCONCLUSIVE**: Everything grew in proportion, +4.0", "compare with normalize=relative", "#### Regressions (1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("every function 4%% slower: markdown lacks %q:\n%s", want, out)
		}
	}
	out, err = flamediff(t, diff(twoSlower, base, "--output", "markdown", "--fail-on-regression", "--top", "1")...)
	if !isRegression(err) || !strings.Contains(out, "#### Regressions (2)") || !strings.Contains(out, "… and 1 more.") {
		t.Errorf("--top 1: error %v, output:\n%s", err, out)
	}
	if out, _ := flamediff(t, diff(slower[:1], base[:1], "--output", "markdown")...); !strings.Contains(out,
		"per-node significance needs at least 2 runs on each side; have head 1, base 1") {
		t.Errorf("one run a side does not say why it is inconclusive:\n%s", out)
	}
}

// The table ranks by the change (significant first), prints values in
// human units, and stops at --top.
func TestQueryTable(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	out := mustRun(t, append(append(append([]string{"query", "--type", "diff", "--top", "3", "--head"}, head...), "--base"), base...)...)
	verdictLines, table, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "delta") || !strings.Contains(lines[1], "1.15 s ") ||
		!strings.Contains(lines[1], "*main.iteration") ||
		!strings.HasPrefix(verdictLines, "FAIL: `main.validateHead` is new in head, called from `main.iteration`") {
		t.Errorf("diff table:\n%s", out)
	}
	out = mustRun(t, append([]string{"query", "--type", "flamegraph", "--top", "2", "--head"}, head...)...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[0], "function") ||
		!strings.Contains(lines[1], " ms ") {
		t.Errorf("flame graph table:\n%s", out)
	}
}

func isRegression(err error) bool {
	return errors.As(err, new(regressionError))
}

// Work that moved is no regression: head splits regexp.compile off into a
// new compileOnce and parses twice as fast: PASS, parse the first culprit,
// the split listed as moved work. A callee replaced by a dearer one is one
// regression at its caller.
func TestQueryGateMovedWork(t *testing.T) {
	jitter := func(run int) int { return []int{-2, 1, 0, 2, -1, 1, -2, 0}[run] }
	stacks := []string{"main;parse", "main;price;regexp.compile", "main;price;sum", "main;render"}
	base := foldedRuns(t, "base", 8, stacks, func(s string, run int) int { return 1000 + jitter(run) })
	split := foldedRuns(t, "split", 8, []string{"main;parse", "main;price;compileOnce;regexp.compile", "main;price;sum", "main;render"},
		func(s string, run int) int {
			if s == "main;parse" {
				return 500 + jitter((run+3)%8)
			}
			return 1000 + jitter((run+5)%8)
		})
	replaced := foldedRuns(t, "replaced", 8, []string{"main;parse", "main;price;strings.Index", "main;price;sum", "main;render"},
		func(s string, run int) int {
			if s == "main;price;strings.Index" {
				return 1300 + jitter(run)
			}
			return 1000 + jitter((run+5)%8)
		})
	diff := func(head []string) []string {
		args := append([]string{"query", "--type", "diff", "--fail-on-regression", "--output", "markdown", "--head"}, head...)
		return append(args, "--base", base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7])
	}
	_, code := runBinary(t, diff(split)...)
	out, _ := flamediff(t, diff(split)...)
	for _, want := range []string{"**PASS**: `parse`'s own time shrank", "#### Regressions (0)",
		"#### Moved work (1): no change of cost by itself", "- `compileOnce` is new, called from `price`; it took over `regexp.compile`: 25.00% of the base total moved, net"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("split: exit %d, markdown lacks %q:\n%s", code, want, out)
		}
	}
	_, code = runBinary(t, diff(replaced)...)
	out, _ = flamediff(t, diff(replaced)...)
	for _, want := range []string{"**FAIL**: `price` now calls `strings.Index` instead of `regexp.compile`: net +7.50% of the base total",
		"| `price` | replaced (calls `strings.Index` instead of `regexp.compile`) | `main` | +7.50% |"} {
		if code != 3 || !strings.Contains(out, want) {
			t.Errorf("replaced: exit %d, markdown lacks %q:\n%s", code, want, out)
		}
	}
}
