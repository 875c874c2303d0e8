package ingest

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/profile"
)

func parseFile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	p, err := Options{Format: Auto}.Parse(file, path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flatCum computes pprof -top's per-function totals from runs, each
// added with the given sign: flat is the leaf's value, cum counts a value
// once per function per stack.
func flatCum(top map[string]pproftop.Entry, p *profile.Profile, sign int64) {
	seen := make(map[uint32]bool)
	for _, s := range p.Samples {
		clear(seen)
		leaf := p.Frames[s.Stack[len(s.Stack)-1]].Name
		e := top[leaf]
		e.Flat += sign * s.Value
		top[leaf] = e
		names := make(map[string]bool)
		for _, id := range s.Stack {
			if n := p.Frames[id].Name; !names[n] {
				names[n] = true
				e := top[n]
				e.Cum += sign * s.Value
				top[n] = e
			}
		}
	}
	for k, e := range top {
		if e == (pproftop.Entry{}) {
			delete(top, k)
		}
	}
}

func TestPprofMatchesPprofTop(t *testing.T) {
	files := func(side string) []string {
		m := testkit.PprofRuns(t, side)
		if len(m) != 3 {
			t.Fatalf("want 3 %s runs in testdata/pprof, found %d", side, len(m))
		}
		return m
	}
	base, head := files("base"), files("head")
	tests := []struct {
		name       string
		head, base []string
	}{
		{"one base run", base[:1], nil},
		{"one head run", head[:1], nil},
		{"head minus base, 3 runs each", head, base},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := pproftop.Top(tc.head, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]pproftop.Entry)
			for _, f := range tc.head {
				flatCum(got, parseFile(t, f), 1)
			}
			for _, f := range tc.base {
				flatCum(got, parseFile(t, f), -1)
			}
			if len(got) < 10 {
				t.Fatalf("only %d functions", len(got))
			}
			if !reflect.DeepEqual(got, want) {
				for k := range want {
					if got[k] != want[k] {
						t.Errorf("%s: got %+v, pprof says %+v", k, got[k], want[k])
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: got %+v, pprof does not list it", k, got[k])
					}
				}
			}
		})
	}
}

func TestPprofRunMetadata(t *testing.T) {
	p := parseFile(t, testkit.Testdata("pprof", "base-run1.pb.gz"))
	if p.SampleType != "cpu" || p.Unit != "nanoseconds" {
		t.Errorf("sample type %s/%s, want cpu/nanoseconds", p.SampleType, p.Unit)
	}
	if p.Start.IsZero() || p.Duration <= 0 {
		t.Errorf("start %v duration %v, want both set", p.Start, p.Duration)
	}
	if p.Timed() {
		t.Error("pprof samples must have no time")
	}
	for _, f := range p.Frames {
		if f.Module == "" {
			t.Errorf("frame %q has no module (mapping file)", f.Name)
		}
	}
}

// TestPprofConversion checks the rules on small profiles built in code.
func TestPprofConversion(t *testing.T) {
	bin := &pprof.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, Offset: 0x1000, File: "/usr/bin/app"}
	fn := func(id uint64, name string) *pprof.Function {
		return &pprof.Function{ID: id, Name: name, Filename: "/src/" + name + ".go", StartLine: int64(10 * id)}
	}
	mainF, runF, inlF, leafF := fn(1, "main.main"), fn(2, "main.run"), fn(3, "main.inlined"), fn(4, "main.leaf")
	// One location holding an inlined call: Line[0] is the innermost.
	inl := &pprof.Location{ID: 1, Mapping: bin, Address: 0x401000,
		Line: []pprof.Line{{Function: inlF}, {Function: runF}}}
	mainL := &pprof.Location{ID: 2, Mapping: bin, Address: 0x402000, Line: []pprof.Line{{Function: mainF}}}
	leafL := &pprof.Location{ID: 3, Mapping: bin, Address: 0x403000, Line: []pprof.Line{{Function: leafF}}}
	noLines := &pprof.Location{ID: 4, Mapping: bin, Address: 0x404010}
	bare := &pprof.Location{ID: 5, Address: 0x1234}
	build := func(defaultType string, samples ...*pprof.Sample) *pprof.Profile {
		return &pprof.Profile{
			SampleType:        []*pprof.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
			DefaultSampleType: defaultType,
			Sample:            samples,
			Mapping:           []*pprof.Mapping{bin},
			Location:          []*pprof.Location{inl, mainL, leafL, noLines, bare},
			Function:          []*pprof.Function{mainF, runF, inlF, leafF},
		}
	}
	sample := func(a, b int64, locs ...*pprof.Location) *pprof.Sample {
		return &pprof.Sample{Value: []int64{a, b}, Location: locs}
	}
	tests := []struct {
		name     string
		src      *pprof.Profile
		wantType string
		want     map[string]int64
	}{
		{"inlined frames expanded, last type by default", build("", sample(1, 100, leafL, inl, mainL)),
			"alloc_space", map[string]int64{"main.main;main.run;main.inlined;main.leaf": 100}},
		{"default sample type wins", build("alloc_objects", sample(1, 100, leafL, inl, mainL)),
			"alloc_objects", map[string]int64{"main.main;main.run;main.inlined;main.leaf": 1}},
		{"zero values dropped", build("", sample(1, 0, leafL, mainL), sample(2, 5, leafL, mainL), sample(0, 7, leafL, mainL)),
			"alloc_space", map[string]int64{"main.main;main.leaf": 12}},
		{"unsymbolized locations named by offset or address", build("", sample(1, 3, bare, noLines, mainL)),
			"alloc_space", map[string]int64{"main.main;app+0x5010;0x1234": 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.src.Write(&buf); err != nil {
				t.Fatal(err)
			}
			p, err := Parse(&buf, "x.pb.gz", Auto)
			if err != nil {
				t.Fatal(err)
			}
			if p.SampleType != tc.wantType {
				t.Errorf("sample type %q, want %q", p.SampleType, tc.wantType)
			}
			if got := foldedCounts(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stacks %v, want %v", got, tc.want)
			}
			for _, f := range p.Frames {
				if wantMod := map[bool]string{true: "/usr/bin/app", false: ""}[!strings.HasPrefix(f.Name, "0x")]; f.Module != wantMod {
					t.Errorf("frame %q module %q, want %q", f.Name, f.Module, wantMod)
				}
				// Functions carry their file and start line; addresses none.
				// main.inlined is Line[0] of its location: inlined into main.run.
				want := profile.Frame{Name: f.Name, Module: f.Module, Inlined: f.Name == "main.inlined"}
				for _, g := range tc.src.Function {
					if g.Name == f.Name {
						want.File, want.Line = g.Filename, g.StartLine
					}
				}
				if f != want {
					t.Errorf("frame %+v, want %+v", f, want)
				}
			}
		})
	}
}
