package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// A build exported as pprof reads in pprof as pprof's own merge of its
// runs' files (`go tool pprof -proto FILES`), on one server and on the
// cluster.
func TestExportPprofMatchesPprofMerge(t *testing.T) {
	files := testkit.PprofRuns(t, "head")
	dir := t.TempDir()
	mergedFile := testkit.Merge(t, files)
	want := testkit.Top(t, []string{mergedFile}, nil)
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			for _, file := range files {
				mustRun(t, "ingest", "--dsn", dsn, "--app", "go", "--build", "1", "--run", filepath.Base(file), file)
			}
			exported := filepath.Join(dir, name+".pb.gz")
			pb := mustRun(t, "export", "--dsn", dsn, "--app", "go", "--build", "1", "--output", "pprof")
			if err := os.WriteFile(exported, []byte(pb), 0o600); err != nil {
				t.Fatal(err)
			}
			testkit.SameTop(t, "exported", testkit.Top(t, []string{exported}, nil), want)
		})
	}
}

// A diff of files written by query --output pprof is pprof's -diff_base
// of the sides' merged files.
func TestQueryPprofMatchesPprofDiff(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	dir := t.TempDir()
	want := testkit.Top(t, []string{testkit.Merge(t, head)}, []string{testkit.Merge(t, base)})
	args := append(append(append([]string{"query", "--type", "diff", "--output", "pprof", "--max-nodes", "0", "--head"}, head...), "--base"), base...)
	exported := filepath.Join(dir, "diff.pb.gz")
	if err := os.WriteFile(exported, []byte(mustRun(t, args...)), 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.SameTop(t, "exported", testkit.Top(t, []string{exported}, nil), want)
}
