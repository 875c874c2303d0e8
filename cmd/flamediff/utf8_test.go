package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
)

// badNames are function names with invalid UTF-8 that one U+FFFD per run
// of bad bytes would make the same name; one per byte keeps them apart.
var badNames = []string{"bad.Name\xff", "bad.Name\xff\xfe", "bad.Name\xc3(", "bad.Name\xe2\x82\xff"}

// invalidUTF8Profile writes testdata's head-run1 with the names of four
// of its functions replaced by badNames, as a real profiler could write them.
func invalidUTF8Profile(t *testing.T) string {
	t.Helper()
	p := testkit.ParsePprof(t, testkit.PprofRuns(t, "head")[0])
	// Functions that are leaves somewhere, so each has a flat value.
	leaves := map[*profile.Function]bool{}
	for _, s := range p.Sample {
		if ln := s.Location[0].Line; len(ln) > 0 {
			leaves[ln[0].Function] = true
		}
	}
	var renamed int
	for _, fn := range p.Function {
		if leaves[fn] && renamed < len(badNames) {
			fn.Name, fn.SystemName = badNames[renamed], badNames[renamed]
			renamed++
		}
	}
	if renamed < len(badNames) {
		t.Fatalf("only %d leaf functions to rename", renamed)
	}
	file := filepath.Join(t.TempDir(), "invalid-utf8.pb.gz")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := p.Write(out); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestInvalidUTF8MatchesPprof: a real profile whose names hold invalid
// UTF-8 ingests, exports and queries (stored and from the file) with
// pprof's functions and totals, names repaired byte by byte: four
// functions stay four.
func TestInvalidUTF8MatchesPprof(t *testing.T) {
	file := invalidUTF8Profile(t)
	top, err := pproftop.Top([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pproftop.Entry{}
	for name, e := range top {
		want[ingest.RepairUTF8(name)] = e
	}
	for _, bad := range badNames {
		if e := want[ingest.RepairUTF8(bad)]; e.Flat == 0 {
			t.Fatalf("pprof shows no flat value for %q", bad)
		}
	}

	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	mustRun(t, "ingest", "--dsn", dsn, "--app", "utf8", "--build", "b", "--run", "1", file)
	model := `{"queryType":"functions","app":"utf8","head":{"builds":["b"]},"variants":false}`
	for how, args := range map[string][]string{
		"stored": {"query", "--dsn", dsn, "--model", model, "--output", "json"},
		"file":   {"query", "--type", "functions", "--head", file, "--output", "json"},
	} {
		t.Run("query "+how, func(t *testing.T) {
			var frames data.Frames
			if err := json.Unmarshal([]byte(mustRun(t, args...)), &frames); err != nil {
				t.Fatal(err)
			}
			fields := frames[0].Fields
			if len(fields) != 3 || fields[1].Name != "self" || fields[2].Name != "total" {
				t.Fatalf("functions frame fields %v, want function, self, total", fields)
			}
			fn, self, total := fields[0], fields[1], fields[2]
			got := map[string]pproftop.Entry{}
			for i := 0; i < fn.Len(); i++ {
				got[fn.At(i).(string)] = pproftop.Entry{Flat: int64(math.Round(self.At(i).(float64))), Cum: int64(math.Round(total.At(i).(float64)))}
			}
			compareTop(t, got, want)
		})
	}
	t.Run("export", func(t *testing.T) {
		got := map[string]pproftop.Entry{}
		for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "export", "--dsn", dsn, "--app", "utf8", "--build", "b", "--run", "1")), "\n") {
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseInt(line[i+1:], 10, 64)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			stack := strings.Split(line[:i], ";")
			leaf := got[stack[len(stack)-1]]
			leaf.Flat += v
			got[stack[len(stack)-1]] = leaf
			slices.Sort(stack)
			for _, name := range slices.Compact(stack) { // once per stack, as pprof's cum
				e := got[name]
				e.Cum += v
				got[name] = e
			}
		}
		compareTop(t, got, want)
	})
}

// compareTop compares per-function totals with pprof's, which lists only
// functions with a value.
func compareTop(t *testing.T, got, want map[string]pproftop.Entry) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%q: %+v, pprof says %+v", name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok && g != (pproftop.Entry{}) {
			t.Errorf("%q: %+v, absent from pprof", name, g)
		}
	}
}
