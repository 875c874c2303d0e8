package main

import (
	"encoding/json"
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
