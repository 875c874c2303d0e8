package export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

func runs(t testing.TB, side string) []string {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pprof", side+"-run*.pb.gz"))
	if err != nil || len(files) < 2 {
		t.Fatalf("no %s profiles in testdata/pprof: %v", side, err)
	}
	return files
}

func parse(t testing.TB, file string) *profile.Profile {
	p, err := profilefile.Parse(file, ingest.Options{Format: ingest.Pprof})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testBuilder holds the runs of the test profiles, head and (when base)
// base, with statistics.
func testBuilder(t testing.TB, base bool) *tree.Builder {
	b := tree.NewBuilder(tree.NewFrames())
	sides := map[tree.Side]string{tree.Head: "head"}
	if base {
		sides[tree.Base] = "base"
	}
	for side, name := range sides {
		files := runs(t, name)
		b.SetRuns(side, len(files))
		for run, file := range files {
			if err := b.AddRunProfile(side, run, parse(t, file)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// writeTemp writes what write writes to a file of the test's and returns
// its path.
func writeTemp(t *testing.T, name string, write func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mergedFile writes pprof's own merge of files (`go tool pprof -proto`).
func mergedFile(t *testing.T, files []string) string {
	merged, err := pproftop.Merge(t.TempDir(), files)
	if err != nil {
		t.Fatal(err)
	}
	return merged
}

func top(t *testing.T, files, base []string) map[string]pproftop.Entry {
	t.Helper()
	got, err := pproftop.Top(files, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 10 {
		t.Fatalf("pprof lists %d functions: too few to compare", len(got))
	}
	return got
}

func sameTop(t *testing.T, what string, got, want map[string]pproftop.Entry) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s: %+v, pprof's own %+v", what, name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s: %+v, not in pprof's own", what, name, g)
		}
	}
}

// A run's profile and a query's trees exported as pprof read in pprof as
// the files they come from: a run as its file, an averaged tree as the
// head's files merged, a diff as -diff_base of the merged sides.
func TestPprofMatchesPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	head, base := runs(t, "head"), runs(t, "base")
	p := parse(t, head[0])
	exported := writeTemp(t, "run.pb.gz", func(b *bytes.Buffer) error { return Pprof(b, p) })
	sameTop(t, "run", top(t, []string{exported}, nil), top(t, head[:1], nil))

	for name, b := range map[string]*tree.Builder{"flamegraph": testBuilder(t, false), "diff": testBuilder(t, true)} {
		tr, err := b.Build(tree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exported := writeTemp(t, name+".pb.gz", func(b *bytes.Buffer) error { return PprofTree(b, tr, p.SampleType, p.Unit) })
		want := top(t, []string{mergedFile(t, head)}, nil)
		if tr.Diff {
			want = top(t, []string{mergedFile(t, head)}, []string{mergedFile(t, base)})
		}
		sameTop(t, name, top(t, []string{exported}, nil), want)
	}
}
