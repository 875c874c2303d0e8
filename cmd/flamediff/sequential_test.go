package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Every output of one sequential look carries the same verdict: the data
// frames of --output json (the culprits frame's meta) say what --output
// verdict and the table say, the look's CONTINUE rather than a single
// look's INCONCLUSIVE, at the call's --min-change.
func TestSequentialOneVerdict(t *testing.T) {
	stacks := []string{"main;parse", "main;price"}
	noise := []int{0, 90, -80, 60, -70} // about 6% a run
	base := foldedRuns(t, "base", 5, stacks, func(_ string, run int) int { return 1000 + noise[run] })
	head := foldedRuns(t, "head", 5, stacks, func(_ string, run int) int { return 1000 + noise[(run+3)%5] })
	args := append(append(append([]string{"query", "--type", "diff", "--head"}, head...), "--base"), base...)
	args = append(args, "--max-runs", "30", "--min-change", "0.03")
	look := func(output string) string {
		out, err := flamediff(t, append(args, "--output", output)...)
		if err == nil || !strings.Contains(err.Error(), "CONTINUE") {
			t.Fatalf("--output %s: %v, want CONTINUE", output, err)
		}
		return out
	}
	type verdict struct {
		Result     string  `json:"result"`
		Why        string  `json:"why"`
		MinChange  float64 `json:"minChange"`
		Sequential *struct {
			Look int `json:"look"`
		} `json:"sequential"`
	}
	var want verdict
	if err := json.Unmarshal([]byte(look("verdict")), &want); err != nil {
		t.Fatal(err)
	}
	if want.Result != "CONTINUE" || want.Sequential == nil || want.MinChange != 0.03 {
		t.Fatalf("--output verdict: %+v", want)
	}
	var frames []struct {
		Schema struct {
			Name string `json:"name"`
			Meta struct {
				Custom struct {
					Verdict *verdict `json:"verdict"`
				} `json:"custom"`
			} `json:"meta"`
		} `json:"schema"`
	}
	if err := json.Unmarshal([]byte(look("json")), &frames); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range frames {
		if v := f.Schema.Meta.Custom.Verdict; v != nil {
			seen++
			if v.Result != want.Result || v.Why != want.Why || v.MinChange != want.MinChange || v.Sequential == nil {
				t.Errorf("frame %q carries %+v, --output verdict %+v", f.Schema.Name, *v, want)
			}
		}
	}
	if seen == 0 {
		t.Errorf("no frame of --output json carries a verdict: %d frames", len(frames))
	}
	if table := look("table"); !strings.Contains(table, "CONTINUE") {
		t.Errorf("the table does not say CONTINUE:\n%s", table)
	}
}

// A culprit whose interval straddles --min-change carries the runs a side
// that would decide it, in the JSON and the markdown's detects column.
func TestCulpritRunsToDecide(t *testing.T) {
	stacks := []string{"main;parse", "main;price"}
	jitter := []int{0, 9, -8, 6, -7, 4, -3, 8}
	base := foldedRuns(t, "base", 8, stacks, func(_ string, run int) int { return 1000 + jitter[run] })
	head := foldedRuns(t, "head", 8, stacks, func(s string, run int) int {
		if s == "main;price" {
			return 1020 + jitter[(run+3)%8] // 1% of the total
		}
		return 1000 + jitter[(run+5)%8]
	})
	args := append(append(append([]string{"query", "--type", "diff", "--head"}, head...), "--base"), base...)
	var v struct {
		MinChange   float64 `json:"minChange"`
		Regressions []struct {
			Function     string  `json:"function"`
			DeltaLow     float64 `json:"deltaLow"`
			DeltaHigh    float64 `json:"deltaHigh"`
			RunsToDecide int     `json:"runsToDecide"`
		} `json:"regressions"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(args, "--output", "verdict")...)), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Regressions) == 0 {
		t.Fatalf("no culprit: %+v", v)
	}
	c := v.Regressions[0]
	if c.Function != "price" || !(c.DeltaLow < v.MinChange && v.MinChange < c.DeltaHigh) || c.RunsToDecide <= 8 {
		t.Fatalf("want price undecided about %g with more than 8 runs to decide: %+v", v.MinChange, c)
	}
	md := mustRun(t, append(args, "--output", "markdown")...)
	if want := fmt.Sprintf("(%d runs to decide)", c.RunsToDecide); !strings.Contains(md, want) {
		t.Errorf("the markdown lacks %q:\n%s", want, md)
	}
}
