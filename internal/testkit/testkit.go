// Package testkit holds what the tests of several packages share, as the
// proftest package does for pprof: the paths of the test data and
// its runs, gzip, an HTTP round trip, the check of an export against
// `pprof -top`, and the seed count of the statistical tests.
//
// The kit has two layers, split by what they import, so that no package's
// own (internal) tests meet an import cycle:
//
//   - testkit imports no Flamediff package but internal/pproftop (which
//     imports none): the internal tests of any package below the store —
//     pkg/ingest, pkg/tree, pkg/profile — can use it.
//   - internal/teststore opens stores (a migrated one on a fresh database,
//     on one server or the private cluster); it imports pkg/storage, so
//     only the tests of packages above the store use it. pkg/storage's own
//     tests keep their helpers beside them: they reach the store's
//     unexported connection, and could not import teststore anyway.
package testkit

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/pproftop"
)

// Root is the repository's root: paths built from it hold whatever
// directory a package's tests run in.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Testdata is the path of elem below the repository's testdata/.
func Testdata(elem ...string) string {
	return filepath.Join(append([]string{Root(), "testdata"}, elem...)...)
}

// ReadTestdata reads the file of elem below testdata/.
func ReadTestdata(t testing.TB, elem ...string) []byte {
	t.Helper()
	return must(os.ReadFile(Testdata(elem...)))(t)
}

// PprofRuns are the runs of side ("base" or "head") of testdata/pprof:
// real Go CPU profiles of a regexp regression, three a side, in run order.
func PprofRuns(t testing.TB, side string) []string {
	t.Helper()
	return Glob(t, "pprof", side+"-run*.pb.gz")
}

// PprofFiles are every pprof file of testdata/pprof: the runs of both
// sides (protobuf) and the legacy text profiles of pprof/legacy.
func PprofFiles(t testing.TB) []string {
	t.Helper()
	return append(Glob(t, "pprof", "*.pb.gz"), Glob(t, "pprof", "legacy", "*.txt")...)
}

// Glob lists the files below testdata/ that pattern's elements match;
// none fails the test.
func Glob(t testing.TB, pattern ...string) []string {
	t.Helper()
	files, err := filepath.Glob(Testdata(pattern...))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/%s: %v", filepath.Join(pattern...), err)
	}
	return files
}

// ParsePprof parses a pprof file with google/pprof's own parser, the
// reference the tests hold Flamediff's reading against.
func ParsePprof(t testing.TB, file string) *pprof.Profile {
	t.Helper()
	data := must(os.ReadFile(file))(t) // #nosec G304 -- a test names its file
	return must(pprof.ParseData(data))(t)
}

// Merge writes pprof's own merge of files (`go tool pprof -proto`) to a
// directory of the test's and returns its path.
func Merge(t testing.TB, files []string) string {
	t.Helper()
	return must(pproftop.Merge(t.TempDir(), files))(t)
}

// Gzip compresses b.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Gunzip decompresses b.
func Gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr := must(gzip.NewReader(bytes.NewReader(b)))(t)
	return must(io.ReadAll(zr))(t)
}

// Do sends req with the default client and returns the answer with its
// whole body read (the body is closed).
func Do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp := must(http.DefaultClient.Do(req))(t)
	defer resp.Body.Close()
	return resp, must(io.ReadAll(resp.Body))(t)
}

// Top is `pprof -top` of files (with -diff_base of base when not empty),
// by function; fewer than ten functions fail the test as too few to
// compare.
func Top(t testing.TB, files, base []string) map[string]pproftop.Entry {
	t.Helper()
	got := must(pproftop.Top(files, base))(t)
	if len(got) < 10 {
		t.Fatalf("pprof lists %d functions: too few to compare", len(got))
	}
	return got
}

// SameTop checks got, `pprof -top` of what Flamediff wrote, against want,
// pprof's own top of the source files, function by function both ways.
func SameTop(t testing.TB, what string, got, want map[string]pproftop.Entry) {
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

// Seeds is how many seeds a statistical test draws: full, short under
// -short (the suite's quick run), or FLAMEDIFF_SEEDS when it is set, to
// measure the rates more closely than the suite does (the tables of
// docs/CULPRITS.md are over 10,000 and 2,000 seeds).
func Seeds(full, short int) int {
	if n, err := strconv.Atoi(os.Getenv("FLAMEDIFF_SEEDS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return short
	}
	return full
}

// must takes a call's value and error; the function it returns gives the
// value or fails the test on the error: must(os.ReadFile(name))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
