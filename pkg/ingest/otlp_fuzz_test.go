package ingest

import (
	"math/rand/v2"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/flamediff/flamediff/internal/otlptest"
)

// FuzzOTLPProfiles reads mutated OTLP profiles files (protobuf and JSON):
// never a panic, and runs only when valid.
func FuzzOTLPProfiles(f *testing.F) {
	for _, body := range otlptest.Encodings(f, otlptest.FromPprof(otlptest.SmallPprof(), "a", "b", "r")) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		batches, err := DecodeOTLPProfiles(data, "fuzz", 0)
		if err != nil {
			return
		}
		runs, err := ProfileRuns(RunOptions{App: "a", Build: "b"}, "fuzz", batches...)
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

// FuzzOTLPTraces reads mutated OTLP traces files as span runs.
func FuzzOTLPTraces(f *testing.F) {
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
		batches, err := DecodeOTLPTraces(data, "fuzz", 0)
		if err != nil {
			return
		}
		runs, _, err := TraceRuns(RunOptions{}, "fuzz", batches...)
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
