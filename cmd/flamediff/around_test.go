package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// The options around a culprit answer alike on files and on the same runs
// stored (--dsn --model), on one server and on the cluster, as JSON and as
// the table; bad input is an error that names the field.
func TestAroundStoredEqualsFiles(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	cases := []struct {
		flags []string
		model map[string]any
	}{
		{[]string{"--sandwich", "runtime.mallocgc", "--variants"}, map[string]any{"sandwich": "runtime.mallocgc", "variants": true}},
		{[]string{"--keep", `^encoding/json\.`, "--hide", `^reflect\.`}, map[string]any{"keep": `^encoding/json\.`, "hideFrames": `^reflect\.`}},
		{[]string{"--drop", `^runtime\.gc`, "--show-from", `^main\.`}, map[string]any{"drop": `^runtime\.gc`, "showFrom": `^main\.`}},
		{[]string{"--only", "removed"}, map[string]any{"only": "removed"}},
	}
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			for side, files := range map[string][]string{"head": head, "base": base} {
				for _, file := range files {
					mustRun(t, "ingest", "--dsn", dsn, "--app", "go", "--build", side, "--run", filepath.Base(file), file)
				}
			}
			for _, c := range cases {
				for _, output := range []string{"json", "table"} {
					if output == "table" && c.model["sandwich"] != nil {
						continue // a sandwich is two trees: JSON only
					}
					files := append(append(append([]string{"query", "--type", "diff", "--output", output, "--head"}, head...), "--base"), base...)
					want := mustRun(t, append(files, c.flags...)...)
					m := map[string]any{"queryType": "diff", "app": "go", "head": map[string]any{"builds": []string{"head"}}, "base": map[string]any{"builds": []string{"base"}}}
					for k, v := range c.model {
						m[k] = v
					}
					raw, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					got := mustRun(t, "query", "--dsn", dsn, "--model", string(raw), "--output", output)
					if got != want || len(want) < 500 {
						t.Errorf("%v, %s: stored\n%.500s\nfiles\n%.500s", c.flags, output, got, want)
					}
				}
			}
			model := `{"queryType":"diff","app":"go","head":{"builds":["head"]},"base":{"builds":["base"]},"keep":"(x"}`
			if _, err := flamediff(t, "query", "--dsn", dsn, "--model", model); err == nil || !strings.Contains(err.Error(), "keep: missing closing )") {
				t.Errorf("a bad keep: %v", err)
			}
		})
	}
	if _, err := flamediff(t, append(append([]string{"query", "--type", "diff", "--sandwich", "main.nope", "--output", "json", "--head"}, head...), "--base", base[0], base[1])...); err == nil || !strings.Contains(err.Error(), `"main.nope"`) {
		t.Errorf("an unknown sandwich function: %v", err)
	}
	if _, err := flamediff(t, append([]string{"query", "--type", "diff", "--sandwich", "main.main", "--head"}, head...)...); err == nil {
		t.Error("a sandwich as a table: no error")
	}
}

// A report takes the filters and only: its trees and functions are
// query's under the same flags.
func TestReportAround(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	out := filepath.Join(t.TempDir(), "r.html")
	args := append(append(append([]string{"--head"}, head...), "--base"), base...)
	args = append(args, "--hide", `^runtime\.`, "--only", "new")
	mustRun(t, append([]string{"report", "--type", "diff", "-o", out}, args...)...)
	_, data := reportData(t, out)
	var want []json.RawMessage
	for _, typ := range []string{"diff", "functions"} {
		var frames []json.RawMessage
		if err := json.Unmarshal([]byte(mustRun(t, append([]string{"query", "--type", typ, "--variants", "--output", "json"}, args...)...)), &frames); err != nil {
			t.Fatal(err)
		}
		want = append(want, frames...)
	}
	if len(data.Frames) < len(want) {
		t.Fatalf("report has %d frames, want %d and the runs", len(data.Frames), len(want))
	}
	for i := range want {
		if string(data.Frames[i]) != string(want[i]) {
			t.Errorf("frame %d differs from query's: %.200s", i, data.Frames[i])
		}
	}
	if _, err := flamediff(t, append([]string{"report", "--type", "diff", "-o", out, "--sandwich", "main.main"}, args...)...); err == nil || !isUsage(err) {
		t.Errorf("a report of a sandwich: %v, want a usage error", err)
	}
}

// The local web UI takes the same options: a sandwich as the CLI answers
// it, bad input as a 400 that says what is wrong.
func TestServeAround(t *testing.T) {
	url, dsn := serveTest(t)
	model := `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"sandwich":"runtime.mallocgc","hideFrames":"^runtime\\.mallocgcSmall"}`
	code, frames := call(t, url+"/api/query", model)
	if want := mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", model); code != http.StatusOK || frames != want || !strings.Contains(frames, `"sandwich":"callees"`) {
		t.Errorf("POST /api/query: %d\n got  %.300s\n want %.300s", code, frames, want)
	}
	for body, says := range map[string]string{
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"showFrom":"(x"}`:        "showFrom: missing closing )",
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"sandwich":"main.nope"}`: `no frame is named \"main.nope\"`,
	} {
		if code, answer := call(t, url+"/api/query", body); code != http.StatusBadRequest || !strings.Contains(answer, says) {
			t.Errorf("POST %s: %d %s, want 400 saying %s", body, code, answer, says)
		}
	}
}
