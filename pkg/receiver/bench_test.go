package receiver

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// benchTraces are the requests of the span benchmarks: batches of
// scenario traces, as an SDK exporter sends them, numbered from first.
func benchTraces(first uint64, requests, tracesPerRequest int) []ptrace.Traces {
	rng := rand.New(rand.NewPCG(first, 7))
	out := make([]ptrace.Traces, requests)
	for i := range out {
		var res []otlptest.Resource
		for j := range tracesPerRequest {
			res = append(res, otlptest.ScenarioTrace(rng, first+uint64(i*tracesPerRequest+j), "bench", 0.1, nil)...)
		}
		out[i] = otlptest.Traces(res...)
	}
	return out
}

const (
	benchRequests = 20
	benchPerReq   = 25 // traces a request: 500 runs, 3,500 spans an iteration
)

// BenchmarkReceiveSpans posts traces to the receiver and waits until all
// their runs are stored: spans/s end to end.
func BenchmarkReceiveSpans(b *testing.B) {
	store := newStore(b)
	r, srv := start(b, store, Options{Wait: 20 * time.Millisecond}, "")
	spans := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		var bodies [][]byte
		for _, td := range benchTraces(uint64(i+1)<<20, benchRequests, benchPerReq) {
			pb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, pb)
		}
		runs := r.Stats().TraceRuns
		b.StartTimer()
		for _, body := range bodies {
			if code, _, answer := post(b, srv.URL+"/v1/traces", protobufType, body); code != 200 {
				b.Fatalf("%d %s", code, answer)
			}
		}
		waitFor(b, "the runs", func() bool { return r.Stats().TraceRuns == runs+benchRequests*benchPerReq })
		spans += benchRequests * benchPerReq * len(otlptest.Scenario)
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkIngestSpanFile stores the same traces as `flamediff ingest
// --format otlp-traces` does with a file of them: decode, build the runs,
// one commit.
func BenchmarkIngestSpanFile(b *testing.B) {
	store := newStore(b)
	spans := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		var files [][]byte
		for _, td := range benchTraces(uint64(i+1)<<20, benchRequests, benchPerReq) {
			pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, pb)
		}
		b.StartTimer()
		for _, file := range files {
			batches, err := ingest.DecodeOTLPTraces(file, "bench", 0)
			if err != nil {
				b.Fatal(err)
			}
			runs, _, err := ingest.TraceRuns(ingest.RunOptions{}, "bench", batches...)
			if err != nil {
				b.Fatal(err)
			}
			if err := store.WriteRuns(context.Background(), Stored(runs, storage.RunMeta{}), nil); err != nil {
				b.Fatal(err)
			}
		}
		spans += benchRequests * benchPerReq * len(otlptest.Scenario)
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

// benchProfile is testdata's largest pprof profile converted to OTLP.
func benchProfile(b *testing.B, run string) (pprofile.Profiles, int) {
	pd, want := pprofRequest(b, testkit.Testdata("pprof", "head-run1.pb.gz"), "bench", run)
	return pd, len(want.Samples)
}

// BenchmarkReceiveProfiles posts profiles (protobuf): samples/s stored.
func BenchmarkReceiveProfiles(b *testing.B) {
	store := newStore(b)
	_, srv := start(b, store, Options{}, "")
	samples := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		pd, n := benchProfile(b, fmt.Sprint(i))
		pb, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if code, _, answer := post(b, srv.URL+"/v1/profiles", protobufType, pb); code != 200 {
			b.Fatalf("%d %s", code, answer)
		}
		samples += n
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkIngestProfileFile stores the same profiles as `flamediff
// ingest --format otlp` does from a file.
func BenchmarkIngestProfileFile(b *testing.B) {
	store := newStore(b)
	samples := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		pd, n := benchProfile(b, fmt.Sprint(i))
		pb, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		batches, err := ingest.DecodeOTLPProfiles(pb, "bench", 0)
		if err != nil {
			b.Fatal(err)
		}
		runs, err := ingest.ProfileRuns(ingest.RunOptions{}, "bench", batches...)
		if err != nil {
			b.Fatal(err)
		}
		if err := store.WriteRuns(context.Background(), Stored(runs, storage.RunMeta{}), nil); err != nil {
			b.Fatal(err)
		}
		samples += n
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkPendingSpanMemory measures the heap a pending span holds: the
// spans of 100 requests wait (the wait is never over) and the live heap
// grows by bytes/span.
func BenchmarkPendingSpanMemory(b *testing.B) {
	bodies := make([][]byte, 0, 100)
	for _, td := range benchTraces(1, 100, benchPerReq) {
		pb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, pb)
	}
	var perSpan float64
	for b.Loop() {
		r := New(nil, Options{Wait: time.Hour}) // nothing is stored
		h := r.Handler(guardFor(b, loopback, ""))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, body := range bodies {
			req := httptest.NewRequest("POST", "http://127.0.0.1:4318/v1/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", protobufType)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := r.Stats().PendingSpans
		perSpan = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(perSpan, "bytes/span")
}
