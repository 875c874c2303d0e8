package profilefile

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flamediff/flamediff/pkg/ingest"
)

// A script's map is found in the directory given by its URL's file name,
// else beside a file:// script: the map its sourceMappingURL comment
// names (a file, an inline data: URL), else <script>.map; else none.
func TestSourceMaps(t *testing.T) {
	dir, given := t.TempDir(), t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(given, "main-3F2A9C1B.js.map"), []byte("given"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("named.js", "f()\n//# sourceMappingURL=maps/named.map\n")
	if err := os.Mkdir(filepath.Join(dir, "maps"), 0o750); err != nil {
		t.Fatal(err)
	}
	write("maps/named.map", "named")
	write("inline.js", "f()\n//# sourceMappingURL=data:application/json;base64,"+base64.StdEncoding.EncodeToString([]byte("inline"))+"\n")
	write("beside.js", "f()\n")
	write("beside.js.map", "beside")
	write("none.js", "f()\n")
	for url, want := range map[string]string{
		"http://127.0.0.1:8001/assets/main-3F2A9C1B.js?v=1": "given",
		"http://127.0.0.1:8001/assets/other.js":             "",
		"file://" + filepath.Join(dir, "named.js"):          "named",
		"file://" + filepath.Join(dir, "inline.js"):         "inline",
		"file://" + filepath.Join(dir, "beside.js"):         "beside",
		"file://" + filepath.Join(dir, "none.js"):           "",
		"file://" + filepath.Join(dir, "gone.js"):           "",
		"node:internal/main/run_main_module":                "",
	} {
		got, err := SourceMaps(given)(url)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", url, got, err, want)
		}
	}
}

// ParseShowing tells its reader every byte it reads, in order, up to the
// file's size, and reads the same profile as Parse: a gzipped pprof file
// counts its compressed bytes, the ones a bar of the file can show.
func TestParseShowing(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "pprof", "base-run1.pb.gz")
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	var reads []int64
	p, err := ParseShowing(file, ingest.Options{}, func(read, size int64) {
		if size != info.Size() {
			t.Errorf("size %d, the file's %d", size, info.Size())
		}
		reads = append(reads, read)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reads) == 0 || reads[len(reads)-1] != info.Size() || !slices.IsSorted(reads) {
		t.Errorf("reads %v, want them rising to %d", reads, info.Size())
	}
	q, err := Parse(file, ingest.Options{})
	if err != nil || q.Total() != p.Total() || len(q.Samples) != len(p.Samples) {
		t.Errorf("Parse: %v, total %d against %d", err, q.Total(), p.Total())
	}
}
