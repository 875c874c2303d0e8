package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// reportData reads back the frames and title a report page carries.
func reportData(t *testing.T, file string) (page string, data struct {
	Title  string
	Frames []json.RawMessage
}) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	page = string(b)
	m := regexp.MustCompile(`id="flamediff-data" data-gzip="json">([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no data in the page: %.300s", page)
	}
	z, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(testkit.Gunzip(t, z), &data); err != nil {
		t.Fatal(err)
	}
	return page, data
}

// frameNames lists the frames of a `query --output json` answer.
func frameNames(t *testing.T, frames []json.RawMessage) []string {
	t.Helper()
	var names []string
	for _, f := range frames {
		var v struct{ Schema struct{ Name string } }
		if err := json.Unmarshal(f, &v); err != nil {
			t.Fatal(err)
		}
		names = append(names, v.Schema.Name)
	}
	return names
}

// A report of files carries the four variants and the functions `query`
// computes and the run details of one run per file; it references nothing
// outside itself.
func TestReportFromFiles(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	out := filepath.Join(t.TempDir(), "r.html")
	args := append(append([]string{"--head"}, head...), append([]string{"--base"}, base...)...)
	mustRun(t, append([]string{"report", "--type", "diff", "-o", out}, args...)...)
	page, data := reportData(t, out)

	var want []json.RawMessage
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"query", "--type", "diff", "--variants", "--output", "json"}, args...)...)), &want); err != nil {
		t.Fatal(err)
	}
	var functions []json.RawMessage
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"query", "--type", "functions", "--output", "json"}, args...)...)), &functions); err != nil {
		t.Fatal(err)
	}
	want = append(want, functions...)
	if len(data.Frames) != len(want)+2 {
		t.Fatalf("report has frames %v, want the %d variants and functions, runs and runs_summary", frameNames(t, data.Frames), len(want))
	}
	for i := range want {
		if !bytes.Equal(data.Frames[i], want[i]) {
			t.Errorf("frame %d differs from query's: %.200s", i, data.Frames[i])
		}
	}
	if got := frameNames(t, data.Frames[len(want):]); strings.Join(got, ",") != "runs,runs_summary" {
		t.Errorf("run details frames %v", got)
	}
	if !strings.Contains(string(data.Frames[len(want)]), "head-run2.pb.gz") {
		t.Errorf("runs frame does not name the files: %.300s", data.Frames[len(want)])
	}
	if !strings.Contains(data.Title, "head-run1.pb.gz") || !strings.Contains(data.Title, " vs ") {
		t.Errorf("title %q", data.Title)
	}
	// Base64 has no ':' or '/'-led paths; what is left is the page's own
	// markup, where an inline data: URL (the empty icon) fetches nothing.
	outside := regexp.MustCompile(`>[A-Za-z0-9+/=]{100,}<`).ReplaceAllString(page, "><")
	outside = strings.ReplaceAll(outside, ` href="data:`, ` data-url="`)
	for _, ref := range []string{"http:", "https:", " src=", " href=", "@import"} {
		if strings.Contains(outside, ref) {
			t.Errorf("the page references %q outside its inline parts:\n%s", ref, outside)
		}
	}

	for _, bad := range [][]string{
		{"report", "--type", "functions", "--head", head[0]},
		{"report", "--type", "diff", "--head", head[0]},
		{"report", "--dsn", "clickhouse://127.0.0.1:1/x"},
		{"report", "--model", "{}", "--head", head[0]},
	} {
		if _, err := flamediff(t, bad...); err == nil || !isUsage(err) {
			t.Errorf("%v: error %v, want a usage error", bad, err)
		}
	}
}

// A report of stored runs shows the model's diff and the runs of its builds.
func TestReportFromStore(t *testing.T) {
	dsn := ingestPprof(t)
	out := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "report", "--dsn", dsn, "-o", out, "--title", "PR 42", "--model",
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`)
	_, data := reportData(t, out)
	if got := strings.Join(frameNames(t, data.Frames), ","); got != "flamegraph,culprits,flamegraph,culprits,flamegraph,culprits,flamegraph,culprits,functions,culprits,runs,runs_summary" {
		t.Errorf("frames %s", got)
	}
	if data.Title != "PR 42" {
		t.Errorf("title %q", data.Title)
	}
}

// reportVerdicts lists the verdict results of a report's culprits frames.
func reportVerdicts(t *testing.T, file string) []string {
	t.Helper()
	_, data := reportData(t, file)
	var results []string
	for _, raw := range data.Frames {
		var f struct {
			Schema struct {
				Name string
				Meta struct {
					Custom struct{ Verdict struct{ Result string } }
				}
			}
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if f.Schema.Name == "culprits" {
			results = append(results, f.Schema.Meta.Custom.Verdict.Result)
		}
	}
	return results
}

// One look writes every output from one verdict: a 3% regression between
// the default threshold (1%) and the gate's (5%) passes the gate, and the
// report, the comment and the verdict written by the same call say PASS
// with it, where a report at the default threshold says FAIL.
func TestOneLookEveryOutput(t *testing.T) {
	stacks := []string{"main;parse", "main;price", "main;render"}
	jitter := []int{0, 4, -3, 2, -4, 3, -2, 1}
	base := foldedRuns(t, "base", 8, stacks, func(_ string, run int) int { return 1000 + jitter[run] })
	head := foldedRuns(t, "head", 8, stacks, func(s string, run int) int {
		return map[bool]int{true: 1090, false: 1000}[s == "main;price"] + jitter[(run+3)%8]
	})
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	args := append(append(append([]string{"query", "--type", "diff", "--min-base-share", "0.05", "--fail-on-regression",
		"--write", "report=" + file("look.html"), "--write", "markdown=" + file("comment.md"), "--write", "verdict=" + file("verdict.json"),
		"--write", "result=" + file("result"), "--output", "result", "--head"}, head...), "--base"), base...)
	if out := mustRun(t, args...); out != "PASS\n" {
		t.Fatalf("the look's result is %q, want PASS", out)
	}
	for name, want := range map[string]string{"result": "PASS\n", "comment.md": "### Flamediff: PASS", "verdict.json": `{"result":"PASS"`} {
		if b, err := os.ReadFile(file(name)); err != nil || !strings.HasPrefix(string(b), want) {
			t.Errorf("%s: %v %.80q, want it to start with %q", name, err, b, want)
		}
	}
	if got := reportVerdicts(t, file("look.html")); len(got) == 0 || slices.ContainsFunc(got, func(r string) bool { return r != "PASS" }) {
		t.Errorf("the look's report says %v, its gate PASS", got)
	}
	mustRun(t, append(append(append([]string{"report", "--type", "diff", "-o", file("default.html"), "--head"}, head...), "--base"), base...)...)
	if got := reportVerdicts(t, file("default.html")); len(got) == 0 || got[0] != "FAIL" {
		t.Errorf("a report at the default threshold says %v: the 3%% regression no longer lies between the thresholds", got)
	}
	var usage usageError
	if _, err := flamediff(t, "query", "--type", "flamegraph", "--write", "verdict="+file("x"), "--head", head[0]); !errors.As(err, &usage) {
		t.Errorf("--write verdict of a flame graph: %v, want a usage error", err)
	}
}
