package otlp

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
)

// pprofFiles are every pprof file the tests hold.
func pprofFiles(t testing.TB) []string {
	files := testkit.PprofFiles(t)
	if len(files) < 10 {
		t.Fatalf("found only %d pprof files", len(files))
	}
	return files
}

type flatSample struct {
	Stack []profile.Frame
	Value int64
	Time  int64
}

func flatten(p *profile.Profile) []flatSample {
	out := make([]flatSample, len(p.Samples))
	for i, s := range p.Samples {
		out[i] = flatSample{Value: s.Value, Time: s.Time}
		for _, id := range s.Stack {
			out[i].Stack = append(out[i].Stack, p.Frames[id])
		}
	}
	return out
}

// TestProfilesMatchPprof reads each pprof file, and its OTLP conversion
// (protobuf and JSON), for every sample type: the same samples, stacks
// and values in the same order, with the same sample type and unit.
func TestProfilesMatchPprof(t *testing.T) {
	for _, file := range pprofFiles(t) {
		src, data := otlptest.ReadPprof(t, file)
		pd := otlptest.FromPprof(src, "app", "b1", "r1")
		for enc, body := range otlptest.Encodings(t, pd) {
			batches, err := DecodeProfiles(body, file)
			if err != nil {
				t.Fatalf("%s %s: %v", file, enc, err)
			}
			for _, st := range src.SampleType {
				want, err := ingest.Options{Format: ingest.Pprof, SampleType: st.Type}.Parse(bytes.NewReader(data), file)
				if err != nil {
					t.Fatal(err)
				}
				runs, err := ProfileRuns(ProfileOptions{SampleType: st.Type}, file, batches...)
				if err != nil {
					t.Fatalf("%s %s %s: %v", file, enc, st.Type, err)
				}
				if len(runs) != 1 || runs[0].App != "app" || runs[0].Build != "b1" || runs[0].Run != "r1" {
					t.Fatalf("%s: runs %+v", file, runs)
				}
				got := runs[0].Profile
				if got.SampleType != want.SampleType || got.Unit != want.Unit {
					t.Errorf("%s %s: type %s/%s, want %s/%s", file, enc, got.SampleType, got.Unit, want.SampleType, want.Unit)
				}
				if g, w := flatten(got), flatten(want); !reflect.DeepEqual(g, w) {
					t.Errorf("%s %s %s: %d samples (total %d), want %d (total %d)", file, enc, st.Type,
						len(g), got.Total(), len(w), want.Total())
				}
			}
		}
	}
}

// TestProfilesDefaultSampleType: without --sample-type a run reads its
// last sample type, as pprof does for a profile without a default.
func TestProfilesDefaultSampleType(t *testing.T) {
	src := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		Function:   []*pprof.Function{{ID: 1, Name: "main"}},
	}
	src.Location = []*pprof.Location{{ID: 1, Line: []pprof.Line{{Function: src.Function[0]}}}}
	src.Sample = []*pprof.Sample{{Location: src.Location, Value: []int64{3, 4096}}}
	runs, err := ProfileRuns(ProfileOptions{}, "t", otlptest.FromPprof(src, "a", "b", "r"))
	if err != nil {
		t.Fatal(err)
	}
	if p := runs[0].Profile; p.SampleType != "alloc_space" || p.Total() != 4096 {
		t.Fatalf("read %s total %d, want alloc_space 4096", p.SampleType, p.Total())
	}
	_, err = ProfileRuns(ProfileOptions{SampleType: "cpu"}, "t", otlptest.FromPprof(src, "a", "b", "r"))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(`no sample type "cpu"`)) {
		t.Fatalf("missing sample type: %v", err)
	}
}

// TestProfileTimestampsAndMerge: a sample's timestamps are events (value
// 1 each without values) whose offsets from the run's start are their
// first-seen; two profiles of one run, as a profiler sends every few
// seconds, make one run.
func TestProfileTimestampsAndMerge(t *testing.T) {
	src := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*pprof.Function{{ID: 1, Name: "main"}, {ID: 2, Name: "work"}},
		TimeNanos:  1_000,
	}
	src.Location = []*pprof.Location{{ID: 1, Line: []pprof.Line{{Function: src.Function[0]}}},
		{ID: 2, Line: []pprof.Line{{Function: src.Function[1]}}}}
	src.Sample = []*pprof.Sample{{Location: []*pprof.Location{src.Location[1], src.Location[0]}, Value: []int64{0}}}
	first := otlptest.FromPprof(src, "a", "b", "r")
	s := first.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().At(0)
	s.Values().FromRaw(nil)
	s.TimestampsUnixNano().FromRaw([]uint64{1_500, 1_200})
	src.TimeNanos = 3_000
	second := otlptest.FromPprof(src, "a", "b", "r")
	s = second.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().At(0)
	s.Values().FromRaw([]int64{7})
	s.TimestampsUnixNano().FromRaw([]uint64{3_100})
	runs, err := ProfileRuns(ProfileOptions{}, "t", first, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	p := runs[0].Profile
	if got, want := samples(p), []string{"main;work 1 @500", "main;work 1 @200", "main;work 7 @2100"}; !slices.Equal(got, want) {
		t.Errorf("samples %q, want %q", got, want)
	}
	if p.Start.UnixNano() != 1_000 {
		t.Errorf("start %v, want 1000 ns", p.Start.UnixNano())
	}
}
