package export

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

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
		files := testkit.PprofRuns(t, name)
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

// A run's profile and a query's trees exported as pprof read in pprof as
// the files they come from: a run as its file, an averaged tree as the
// head's files merged, a diff as -diff_base of the merged sides.
func TestPprofMatchesPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	p := parse(t, head[0])
	exported := writeTemp(t, "run.pb.gz", func(b *bytes.Buffer) error { return Pprof(b, p) })
	testkit.SameTop(t, "run", testkit.Top(t, []string{exported}, nil), testkit.Top(t, head[:1], nil))
	sameSources(t, "run", pprofSources(t, exported), profileSources(p))

	for name, b := range map[string]*tree.Builder{"flamegraph": testBuilder(t, false), "diff": testBuilder(t, true)} {
		tr, err := b.Build(tree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exported := writeTemp(t, name+".pb.gz", func(b *bytes.Buffer) error { return PprofTree(b, tr, p.SampleType, p.Unit) })
		want := testkit.Top(t, []string{testkit.Merge(t, head)}, nil)
		if tr.Diff {
			want = testkit.Top(t, []string{testkit.Merge(t, head)}, []string{testkit.Merge(t, base)})
		}
		testkit.SameTop(t, name, testkit.Top(t, []string{exported}, nil), want)
		sameSources(t, name, pprofSources(t, exported), treeSources(tr))
	}
}

// profileSources are p's frames' files and lines by name.
func profileSources(p *profile.Profile) map[string]tree.Source {
	src := map[string]tree.Source{}
	for _, f := range p.Frames {
		src[f.Name] = tree.Source{File: f.File, Line: f.Line}
	}
	return src
}

// treeSources are t's frames' files and lines by name.
func treeSources(t *tree.Tree) map[string]tree.Source {
	src := map[string]tree.Source{}
	for f := range t.Frames.Len() {
		src[t.Frames.Name(uint32(f))] = t.Frames.Source(uint32(f)) // #nosec G115 -- a frame id
	}
	return src
}

// pprofSources are the files and start lines of a pprof file's
// functions by name, as pprof's own parser reads them (a diff has negative
// values, which Flamediff's reader refuses).
func pprofSources(t *testing.T, file string) map[string]tree.Source {
	t.Helper()
	b, err := os.ReadFile(file) // #nosec G304 -- the test's own file
	if err != nil {
		t.Fatal(err)
	}
	p, err := pprof.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]tree.Source{}
	for _, f := range p.Function {
		src[f.Name] = tree.Source{File: f.Filename, Line: f.StartLine}
	}
	return src
}

// sameSources checks that an export read back gives every frame the file
// and line it was written with, and that some have one (the check can
// fail).
func sameSources(t *testing.T, what string, got, want map[string]tree.Source) {
	t.Helper()
	withFile := 0
	for name, src := range got {
		if src != want[name] {
			t.Errorf("%s: %s read back at %s:%d, written at %s:%d", what, name, src.File, src.Line, want[name].File, want[name].Line)
		}
		if src.File != "" {
			withFile++
		}
	}
	if withFile == 0 {
		t.Errorf("%s: no frame read back with a source file", what)
	}
}

// Three functions named stringify, of two packages and of Node, with no
// source file: pprof's functions (name and file) and speedscope's frames
// (name and file) keep them apart, by their modules; a name no other
// module has keeps its empty file.
func TestSameNamedFunctionsStayApart(t *testing.T) {
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds"}
	main := p.Intern(profile.Frame{Name: "main", Module: "/a/app.js"})
	var stack []uint32
	for _, m := range []string{"/a/node_modules/qs/lib/stringify.js", "/a/node_modules/fast-json/lib/stringify.js", "node:internal/querystring"} {
		f := p.Intern(profile.Frame{Name: "stringify", Module: m})
		p.Samples = append(p.Samples, profile.Sample{Stack: []uint32{main, f}, Value: 10})
		stack = append(stack, f)
	}
	p.Samples = append(p.Samples, profile.Sample{Stack: append([]uint32{main}, stack...), Value: 5})
	want := map[string]bool{"main\x00": true, "stringify\x00/a/node_modules/qs/lib/stringify.js": true,
		"stringify\x00/a/node_modules/fast-json/lib/stringify.js": true, "stringify\x00node:internal/querystring": true}

	var buf bytes.Buffer
	if err := Pprof(&buf, p); err != nil {
		t.Fatal(err)
	}
	out, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range out.Function {
		got[f.Name+"\x00"+f.Filename] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("pprof functions %q, want %q", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}

	buf.Reset()
	if err := Speedscope(&buf, "run", p); err != nil {
		t.Fatal(err)
	}
	var sf speedscopeFile
	if err := json.Unmarshal(buf.Bytes(), &sf); err != nil {
		t.Fatal(err)
	}
	got = map[string]bool{}
	for _, f := range sf.Shared.Frames {
		got[f.Name+"\x00"+f.File] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("speedscope frames %q, want %q", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}
