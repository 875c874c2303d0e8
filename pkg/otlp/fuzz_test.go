package otlp

import (
	"math/rand/v2"
	"testing"

	pprof "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/flamediff/flamediff/internal/otlptest"
)

// FuzzProfiles reads mutated OTLP profiles files (protobuf and JSON):
// never a panic, and runs only when valid.
func FuzzProfiles(f *testing.F) {
	// A small profile: mutations of a large one are slow to run.
	src := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Mapping:    []*pprof.Mapping{{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/bin/app"}},
		Function:   []*pprof.Function{{ID: 1, Name: "main", Filename: "main.go"}, {ID: 2, Name: "work", Filename: "work.go"}},
	}
	src.Location = []*pprof.Location{
		{ID: 1, Mapping: src.Mapping[0], Address: 0x1010, Line: []pprof.Line{{Function: src.Function[0], Line: 3}}},
		{ID: 2, Mapping: src.Mapping[0], Address: 0x2020, Line: []pprof.Line{{Function: src.Function[1], Line: 9}}},
		{ID: 3, Mapping: src.Mapping[0], Address: 0x3030},
	}
	src.Sample = []*pprof.Sample{
		{Location: []*pprof.Location{src.Location[1], src.Location[0]}, Value: []int64{2, 20}},
		{Location: []*pprof.Location{src.Location[2], src.Location[0]}, Value: []int64{1, 10}},
	}
	for _, body := range otlptest.Encodings(f, otlptest.FromPprof(src, "a", "b", "r")) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		batches, err := DecodeProfiles(data, "fuzz")
		if err != nil {
			return
		}
		runs, err := ProfileRuns(ProfileOptions{App: "a", Build: "b"}, "fuzz", batches...)
		if err != nil {
			return
		}
		for _, r := range runs {
			if err := r.Profile.CheckValid(); err != nil || len(r.Profile.Samples) == 0 {
				t.Fatalf("run %s: %v", r.Run, err)
			}
		}
	})
}

// FuzzTraces reads mutated OTLP traces files as span runs.
func FuzzTraces(f *testing.F) {
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(1, 2)), 1, "v1", 0.1, nil)...)
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		f.Fatal(err)
	}
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pb)
	f.Add(js)
	f.Fuzz(func(t *testing.T, data []byte) {
		batches, err := DecodeTraces(data, "fuzz")
		if err != nil {
			return
		}
		runs, _, err := TraceRuns(TraceOptions{}, "fuzz", batches...)
		if err != nil {
			return
		}
		for _, r := range runs {
			if err := r.Profile.CheckValid(); err != nil || r.Profile.SampleType != "wall" {
				t.Fatalf("run %s: %v", r.Run, err)
			}
		}
	})
}
