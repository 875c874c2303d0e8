package main

import (
	"os"
	"path/filepath"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/pproftop"
)

// A build exported as pprof reads in pprof as pprof's own merge of its
// runs' files (`go tool pprof -proto FILES`), on one server and on the
// cluster.
func TestExportPprofMatchesPprofMerge(t *testing.T) {
	files, err := filepath.Glob("../../testdata/pprof/head-run*.pb.gz")
	if err != nil || len(files) < 2 {
		t.Fatalf("no pprof test files: %v", err)
	}
	var ps []*pprof.Profile
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := pprof.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	merged, err := pprof.Merge(ps)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mergedFile := filepath.Join(dir, "merged.pb.gz")
	out, err := os.Create(mergedFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Write(out); err != nil {
		t.Fatal(err)
	}
	out.Close()
	want, err := pproftop.Top([]string{mergedFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
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
			got, err := pproftop.Top([]string{exported}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 10 || len(got) != len(want) {
				t.Errorf("pprof lists %d functions of the export, %d of its own merge", len(got), len(want))
			}
			for fn, w := range want {
				if got[fn] != w {
					t.Errorf("%s: exported %+v, pprof's merge %+v", fn, got[fn], w)
				}
			}
		})
	}
}
