package ingest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
)

func TestParseFolded(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]int64
	}{
		{"repeated lines add up", "a;b 2\na;c 1\na;b 3\n", map[string]int64{"a;b": 5, "a;c": 1}},
		{"frames with spaces, tab before count", "main;operator new(unsigned long)\t7\n", map[string]int64{"main;operator new(unsigned long)": 7}},
		{"blank lines, CRLF, trailing spaces", "\r\na;b 1 \r\n\n  \na 0\n", map[string]int64{"a;b": 1, "a": 0}},
		{"no final newline", "x;y;z 9", map[string]int64{"x;y;z": 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "x.folded", Folded)
			if err != nil {
				t.Fatal(err)
			}
			if got := foldedCounts(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if p.Timed() || p.SampleType != "samples" || p.Unit != "count" {
				t.Errorf("timed %v, type %s/%s; want untimed samples/count", p.Timed(), p.SampleType, p.Unit)
			}
		})
	}
}

func TestWriteFolded(t *testing.T) {
	p := &profile.Profile{}
	a, b, c := p.Intern(profile.Frame{Name: "a"}), p.Intern(profile.Frame{Name: "b;x"}), p.Intern(profile.Frame{Name: "c"})
	p.Samples = []profile.Sample{
		{Stack: []uint32{a, c}, Value: 1, Time: -1},
		{Stack: []uint32{a, b}, Value: 2, Time: -1},
		{Stack: []uint32{a, c}, Value: 3, Time: -1},
	}
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p); err != nil {
		t.Fatal(err)
	}
	if want := "a;c 4\na;b:x 2\n"; buf.String() != want {
		t.Errorf("got %q, want %q (first-seen order, values summed, ';' in names made ':')", buf.String(), want)
	}
	p.Samples = append(p.Samples, profile.Sample{Stack: []uint32{7}})
	if err := WriteFolded(&buf, p); err == nil {
		t.Error("invalid profile: no error")
	}
}

// roundTrip writes p as folded stacks, parses them back and checks that
// every stack keeps its total.
func roundTrip(t *testing.T, p *profile.Profile) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(&buf, "roundtrip.folded", Folded)
	if err != nil {
		t.Fatal(err)
	}
	// WriteFolded repairs ';' and line breaks in names (foldedName), which
	// may merge stacks: the file holds the repaired stacks.
	want := map[string]int64{}
	for _, smp := range p.Samples {
		names := p.Names(smp.Stack)
		for i, n := range names {
			names[i] = foldedName.Replace(n)
		}
		want[strings.Join(names, ";")] += smp.Value
	}
	got := foldedCounts(back)
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("round trip: stack %q has %d, want %d", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("round trip: %d stacks, want %d", len(got), len(want))
	}
}

func TestFoldedRoundTrip(t *testing.T) {
	for _, file := range []string{
		"perf-script/perf-vertx-stacks-01.perf.txt",
		"perf-script/perf-java-stacks-01.folded",
		"pprof/head-run2.pb.gz",
	} {
		t.Run(file, func(t *testing.T) {
			roundTrip(t, parseFile(t, "../../testdata/"+file))
		})
	}
}
