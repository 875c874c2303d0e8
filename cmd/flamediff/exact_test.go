package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/toolprofiles"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Callgrind counts instructions, the same in every run of a build: a
// comparison of its files is exact, in one run a side and in four. Head
// runs slow()'s own loop twice as long (toolprofiles.CSource): the verdict
// FAILs with slow's own time first, its delta exactly callgrind_annotate's
// change of slow's self cost over the base program's total (a reference
// computed outside Flamediff); an unchanged head PASSes. Stored runs (four
// a side, seeded) give the same verdicts.
func TestQueryCallgrindExact(t *testing.T) {
	dir := t.TempDir()
	bin, err := toolprofiles.BuildC(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Runs of builds base, head and same (as base) of app prog, as seed
	// reads a directory.
	record := func(build string, slowN int) []string {
		out := filepath.Join(dir, "runs", "prog", build)
		if err := os.MkdirAll(out, 0o700); err != nil {
			t.Fatal(err)
		}
		var files []string
		for r := range 4 {
			file, err := toolprofiles.Callgrind(out, bin, fmt.Sprintf("run%d.callgrind", r), slowN)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file)
		}
		return files
	}
	base, head, same := record("base", 20000), record("head", 40000), record("same", 20000)
	b, err := toolprofiles.Annotate(base[0])
	if err != nil {
		t.Fatal(err)
	}
	h, err := toolprofiles.Annotate(head[0])
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, v := range b {
		total += v
	}
	want := float64(h["slow"]-b["slow"]) / float64(total)
	check := func(how string, v *verdict.Verdict, changed bool) {
		t.Helper()
		if !changed {
			if v.Result != verdict.Pass || !v.Exact || len(v.Regressions)+len(v.Improvements) > 0 {
				t.Errorf("%s, unchanged: %s %q %+v %+v", how, v.Result, v.Why, v.Regressions, v.Improvements)
			}
			return
		}
		if v.Result != verdict.Fail || !v.Exact || len(v.Regressions) == 0 {
			t.Fatalf("%s: %s %q", how, v.Result, v.Why)
		}
		c := v.Regressions[0]
		if c.Function != "slow" || c.Kind != "self" || math.Abs(float64(c.Delta)-want) > 1e-12 || c.DeltaLow != c.Delta || c.DeltaHigh != c.Delta || c.QValue != 0 {
			t.Errorf("%s: first culprit %+v, want slow's own time, %+.4f%% exactly (callgrind_annotate: %d -> %d of %d)", how, c, 100*want, b["slow"], h["slow"], total)
		}
		if !strings.Contains(v.Why, "exact") || !strings.Contains(v.Power.Sentence, "exact") {
			t.Errorf("%s: %q / %q", how, v.Why, v.Power.Sentence)
		}
	}
	for _, n := range []int{1, 4} {
		for _, c := range []struct {
			head    []string
			changed bool
		}{{head, true}, {same, false}} {
			var v verdict.Verdict
			out := mustRun(t, append(append(append([]string{"query", "--type", "diff", "--output", "verdict", "--base"}, base[:n]...), "--head"), c.head[:n]...)...)
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("%d runs a side", n), &v, c.changed)
		}
	}
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	mustRun(t, "seed", "--dsn", dsn, filepath.Join(dir, "runs", "prog"))
	for _, c := range []struct {
		head    string
		changed bool
	}{{"head", true}, {"same", false}} {
		var v verdict.Verdict
		model := fmt.Sprintf(`{"queryType":"diff","app":"prog","head":{"builds":[%q]},"base":{"builds":["base"]}}`, c.head)
		if err := json.Unmarshal([]byte(mustRun(t, "query", "--dsn", dsn, "--model", model, "--output", "verdict")), &v); err != nil {
			t.Fatal(err)
		}
		check("stored runs", &v, c.changed)
	}
}
