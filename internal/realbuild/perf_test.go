package realbuild

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// A C program of ours: parse and checksum passes over a buffer, each its
// own function (noipa: gcc would otherwise see that they are pure and
// call them once), frame pointers kept for perf's call graphs.
const cProgram = `#include <stdio.h>
#include <stdlib.h>

#define SIZE (32 << 10)

__attribute__((noipa)) static unsigned long fnv(const unsigned char *b, int passes, unsigned long h) {
	for (int j = 0; j < passes; j++)
		for (int i = 0; i < SIZE; i++) {
			h ^= b[i];
			h *= 1099511628211UL;
		}
	return h;
}

__attribute__((noipa)) static unsigned long parse(const unsigned char *b, unsigned long seed) { return fnv(b, 2, seed); }

__attribute__((noipa)) static unsigned long checksum(const unsigned char *b, unsigned long seed) {
	unsigned long h = seed;
	for (int i = 0; i < SIZE; i++)
		h = h * 31 + b[i];
	return h;
}

int main(void) {
	unsigned char *b = malloc(SIZE);
	for (int i = 0; i < SIZE; i++)
		b[i] = (unsigned char)(i * 7);
	unsigned long h = 0;
	for (int r = 0; r < 2500; r++)
		h += parse(b, h) + checksum(b, h);
	printf("%lu\n", h);
	free(b);
	return 0;
}
`

// (a) for perf: one C program built with gcc, installed at two paths under
// two names and run under perf record; the perf script texts compare with
// the same tree on both sides, no culprit and no FAIL.
func TestSameCBinaryTwoPathsUnderPerf(t *testing.T) {
	src := filepath.Join(Write(t, map[string]string{"app.c": cProgram}), "app.c")
	bin := filepath.Join(filepath.Dir(src), "app")
	run(t, gcc(src, bin))
	root := t.TempDir()
	bins := map[string]string{
		"base": filepath.Join(root, "opt", "app-2.4.0", "bin", "app-base"),
		"head": filepath.Join(root, "home", "ci", "build-7", "app-head"),
	}
	for _, dst := range bins {
		Install(t, bin, dst)
	}
	files := RunInterleaved(t, t.TempDir(), runsPerSide(), bins, PerfProfile, ".perf")
	base, head := files["base"], files["head"]
	folded, _ := Flamediff(t, DiffArgs(base, head, "--format", "perf", "--output", "folded")...)
	if share := oneSided(t, folded); share > 0.02 {
		t.Errorf("%.1f%% of the samples are in stacks of one side only; the same binary has the same stacks:\n%s", 100*share, alone(folded))
	}
	v := DiffVerdict(t, base, head, "--format", "perf", "--alpha", "0.01")
	if v.Result == verdict.Fail || len(Culprits(v)) > 0 {
		t.Errorf("the same C binary under two paths and names:\n%s", Describe(v))
	}
}

func gcc(src, out string) *exec.Cmd {
	return exec.Command("gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", out, src)
}
