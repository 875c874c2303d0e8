package pproftop

import (
	"os"
	"path/filepath"
	"testing"
)

const dir = "../../testdata/pprof"

// sampleTotal sums the default sample value of files with the pprof library.
func sampleTotal(t *testing.T, files ...string) int64 {
	t.Helper()
	var total int64
	for _, file := range files {
		p, err := read(file)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := p.SampleIndexByName("")
		for _, s := range p.Sample {
			total += s.Value[i]
		}
	}
	return total
}

func TestTop(t *testing.T) {
	base := []string{filepath.Join(dir, "base-run1.pb.gz"), filepath.Join(dir, "base-run2.pb.gz")}
	head := []string{filepath.Join(dir, "head-run1.pb.gz")}
	tops := map[string]map[string]Entry{}
	for name, args := range map[string][2][]string{
		"base": {base, nil}, "head": {head, nil}, "diff": {head, base},
	} {
		top, err := Top(args[0], args[1])
		if err != nil {
			t.Fatal(err)
		}
		tops[name] = top
	}
	tests := []struct {
		name  string
		top   map[string]Entry
		total int64
	}{
		{"merged runs", tops["base"], sampleTotal(t, base...)},
		{"one run", tops["head"], sampleTotal(t, head...)},
		{"diff", tops["diff"], sampleTotal(t, head...) - sampleTotal(t, base...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var flat int64
			for name, e := range tc.top {
				flat += e.Flat
				if tc.name != "diff" && (e.Cum < e.Flat || e.Flat < 0) {
					t.Errorf("%s: %+v: cum below flat", name, e)
				}
			}
			if flat != tc.total || tc.total == 0 {
				t.Errorf("flat sums to %d, samples to %d", flat, tc.total)
			}
		})
	}
	// A diff is head minus base, function by function.
	for name, d := range tops["diff"] {
		h, b := tops["head"][name], tops["base"][name]
		if d.Flat != h.Flat-b.Flat || d.Cum != h.Cum-b.Cum {
			t.Errorf("%s: diff %+v, head %+v, base %+v", name, d, h, b)
		}
	}
	if _, ok := tops["head"]["runtime.nextFreeFast"]; !ok {
		t.Error(`the "(inline)" mark must not be part of the name`)
	}
}

func TestTopErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.pb")
	if err := os.WriteFile(bad, []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		files, base []string
	}{
		{"no files", nil, nil},
		{"missing file", []string{filepath.Join(dir, "nope.pb.gz")}, nil},
		{"bad file", []string{bad}, nil},
		{"bad base", []string{filepath.Join(dir, "head-run1.pb.gz")}, []string{bad}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Top(tc.files, tc.base); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestParseTop(t *testing.T) {
	out := []byte(`Type: cpu
      flat  flat%   sum%        cum   cum%
130000000ns  8.61%  8.61% 160000000ns 10.60%  a.(*T).f
-20000000ns  1.32%  9.93%         0     0%  b.g (inline)
      13  1.00% 10.93%         20  2.00%  c.h (partial-inline)
      7  1.00% 10.93%         9  2.00%  c.h
`)
	got, err := parseTop(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Entry{"a.(*T).f": {130000000, 160000000}, "b.g": {-20000000, 0}, "c.h": {20, 29}}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %+v, want %+v", k, got[k], w)
		}
	}
	if _, err := parseTop([]byte("no table")); err == nil {
		t.Error("output without a table: no error")
	}
}

// A function that is not recursive gets its total from its callers and
// passes it to its callees, but for its own flat value.
func TestPeekAt(t *testing.T) {
	files := []string{filepath.Join(dir, "head-run1.pb.gz")}
	peeks, err := PeekAt(files, `^runtime\.mallocgc$`)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := peeks["runtime.mallocgc"]
	if len(peeks) != 1 || !ok {
		t.Fatalf("peek of runtime.mallocgc: %v", peeks)
	}
	top, err := Top(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Entry != top["runtime.mallocgc"] || p.Cum == 0 {
		t.Errorf("peek row %+v, top row %+v", p.Entry, top["runtime.mallocgc"])
	}
	var in, out int64
	for _, v := range p.Callers {
		in += v
	}
	for _, v := range p.Callees {
		out += v
	}
	if in != p.Cum || p.Flat+out != p.Cum || len(p.Callers) < 2 || len(p.Callees) < 2 {
		t.Errorf("callers %v (sum %d), callees %v (sum %d), row %+v", p.Callers, in, p.Callees, out, p.Entry)
	}
	if _, err := parsePeek([]byte("no table")); err == nil {
		t.Error("output without a table: no error")
	}
}

// Flags reach pprof: -focus keeps the samples through a function.
func TestTopFlags(t *testing.T) {
	files := []string{filepath.Join(dir, "head-run1.pb.gz")}
	all, err := Top(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	focused, err := Top(files, nil, `-focus=^runtime\.mallocgc$`)
	if err != nil {
		t.Fatal(err)
	}
	var flat int64
	for _, e := range focused {
		flat += e.Flat
	}
	if m := all["runtime.mallocgc"]; flat != m.Cum || focused["runtime.mallocgc"] != m {
		t.Errorf("under -focus: flat sums to %d, mallocgc %+v; unfiltered %+v", flat, focused["runtime.mallocgc"], m)
	}
}
