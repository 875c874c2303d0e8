package ingest

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/testkit"
)

// legacyCPUProfile builds a legacy binary CPU profile (gperftools' format, as
// pprof's legacy_profile.go reads it): 64-bit little-endian words, the
// header 0, 3, 0, period in µs, 0, then per sample its count, depth and
// addresses, then the trailer 0, 1, 0 and a text memory map.
func legacyCPUProfile() []byte {
	var b bytes.Buffer
	words := []uint64{0, 3, 0, 10000, 0,
		5, 3, 0x401000, 0x402000, 0x403000,
		3, 2, 0x401100, 0x403000,
		2, 3, 0x401000, 0x402000, 0x403000,
		0, 1, 0}
	for _, w := range words {
		_ = binary.Write(&b, binary.LittleEndian, w)
	}
	b.WriteString("00400000-00500000 r-xp 00000000 00:00 0          /usr/bin/server\n")
	return b.Bytes()
}

// legacyProfiles are the legacy inputs: the hand-written text profiles of
// testdata/pprof/legacy and a generated binary CPU profile.
func legacyProfiles(t testing.TB) map[string][]byte {
	files := testkit.Glob(t, "pprof", "legacy", "*.txt")
	if len(files) < 5 {
		t.Fatalf("legacy fixtures: %d files", len(files))
	}
	in := map[string][]byte{"cpu.bin": legacyCPUProfile()}
	for _, f := range files {
		in[filepath.Base(f)] = testkit.ReadTestdata(t, "pprof/legacy/"+filepath.Base(f))
	}
	return in
}

// Every legacy format pprof reads is detected as pprof and converted like
// the protobuf pprof makes of it.
func TestLegacyPprof(t *testing.T) {
	for name, data := range legacyProfiles(t) {
		t.Run(name, func(t *testing.T) {
			if f, err := detect(data, name); err != nil || f.Name != Pprof {
				t.Fatalf("detected as %s (%v)", f.Name, err)
			}
			got, err := Parse(bytes.NewReader(data), name, Auto)
			if err != nil {
				t.Fatal(err)
			}
			src, err := pprof.ParseData(data)
			if err != nil {
				t.Fatalf("pprof itself: %v", err)
			}
			var proto bytes.Buffer
			if err := src.Write(&proto); err != nil {
				t.Fatal(err)
			}
			want, err := Parse(&proto, name+".pb.gz", Pprof)
			if err != nil {
				t.Fatal(err)
			}
			if got.SampleType != want.SampleType || got.Unit != want.Unit {
				t.Errorf("sample type %s/%s, want %s/%s", got.SampleType, got.Unit, want.SampleType, want.Unit)
			}
			g, w := foldedCounts(got), foldedCounts(want)
			if len(g) == 0 || !reflect.DeepEqual(g, w) {
				t.Errorf("stacks %v\nwant %v", g, w)
			}
		})
	}
}

// --sample-type picks a pprof sample type; other formats have one.
func TestSampleType(t *testing.T) {
	data := testkit.ReadTestdata(t, "pprof/legacy/contention.txt")
	for _, tc := range []struct {
		format     Format
		data       []byte
		sampleType string
		want       string // sample type, or the error
	}{
		{Auto, data, "", "delay"}, // pprof's default: the last type
		{Auto, data, "contentions", "contentions"},
		{Auto, data, "delay", "delay"},
		{Auto, data, "cpu", `contention.txt: sample_index "cpu" must be one of: [contentions delay]`},
		{Folded, []byte("a;b 1\n"), "samples", "samples"},
		{Folded, []byte("a;b 1\n"), "cpu", `contention.txt: no sample type "cpu": this folded profile has only "samples"`},
	} {
		p, err := Options{Format: tc.format, SampleType: tc.sampleType}.Parse(bytes.NewReader(tc.data), "contention.txt")
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = p.SampleType
		}
		if got != tc.want {
			t.Errorf("%s --sample-type %q: %q, want %q", tc.format, tc.sampleType, got, tc.want)
		}
	}
}

// The legacy headers are recognized and nothing else is.
func TestLegacyHeader(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"heap profile: 1: 2 [3: 4] @ heap/1048576\n", true},
		{"# comment\n\nheap profile: 1: 2 [3: 4] @ growthz\n", true},
		{"--- contentionz 1 ---\n", true},
		{"--- heapz 1 ---\n", true},
		{"threadcreate profile: total 12\n", true},
		{"a;heap profile: 1 2\n", false},
		{"main;run 12\n", false},
		{"--- something else ---\n", false},
	} {
		if got := legacyText([]byte(tc.head)); got != tc.want {
			t.Errorf("legacyText(%q) = %v", tc.head, got)
		}
	}
	if !strings.HasPrefix(string(legacyCPUProfile()[8:9]), "\x03") {
		t.Fatal("legacyCPU header")
	}
}
