package receiver

import (
	"bytes"
	"context"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func newStore(t testing.TB) *storage.Store {
	t.Helper()
	return teststore.Migrated(t, chtest.DSN(t))
}

// guardFor is the guard `flamediff receive` puts before a receiver that
// listens on addr and asks for token ("": none).
func guardFor(t testing.TB, addr net.Addr, token string) *guard.Guard {
	t.Helper()
	g, err := guard.New(guard.Options{Addr: addr, Token: token, Refuse: Refuse})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// loopback is the address of receivers served without a listener.
var loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4318}

// start serves a receiver on loopback, behind its guard asking for token
// ("": none), and runs its commit loop until the test ends.
func start(t testing.TB, store Store, o Options, token string) (*Receiver, *httptest.Server) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	r, err := Open(store, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = r.Handler(guardFor(t, srv.Listener.Addr(), token))
	srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { srv.Close(); cancel(); <-done; r.Close() })
	return r, srv
}

// waitFor polls until cond holds, for at most 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// folded returns a stored run's stacks and values.
func folded(t testing.TB, s *storage.Store, app, build, run string) map[string]int64 {
	t.Helper()
	p, err := s.Export(context.Background(), app, build, run)
	if err != nil {
		t.Fatal(err)
	}
	return stackTotals(p)
}

func stackTotals(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Samples {
		out[strings.Join(p.Names(s.Stack), ";")] += s.Value
	}
	return out
}

// replay sends generated traces through the OpenTelemetry Go SDK and its
// otlptracehttp exporter (gzip), a tracer provider per service and build
// as each service would have; trace i is shifted by i seconds.
func replay(t *testing.T, endpoint string, traces [][]otlptest.Resource) {
	t.Helper()
	ctx := context.Background()
	providers := map[string]*sdktrace.TracerProvider{}
	provider := func(attrs map[string]string) trace.Tracer {
		name := attrs["service.name"] + "@" + attrs["service.version"]
		if p := providers[name]; p != nil {
			return p.Tracer("scenario")
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure(),
			otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		if err != nil {
			t.Fatal(err)
		}
		var kv []attribute.KeyValue
		for k, v := range attrs {
			kv = append(kv, attribute.String(k, v))
		}
		p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(5)),
			sdktrace.WithResource(sdkresource.NewSchemaless(kv...)))
		providers[name] = p
		return p.Tracer("scenario")
	}
	for i, resources := range traces {
		shift := otlptest.Base + uint64(i)*uint64(time.Second)
		type started struct {
			span trace.Span
			end  uint64
		}
		ctxs := map[uint64]context.Context{}
		var spans []started
		// Scenario ids grow from parent to child.
		var all []struct {
			tracer trace.Tracer
			s      otlptest.Span
		}
		for _, r := range resources {
			tr := provider(r.Attrs)
			for _, s := range r.Spans {
				all = append(all, struct {
					tracer trace.Tracer
					s      otlptest.Span
				}{tr, s})
			}
		}
		slices.SortFunc(all, func(a, b struct {
			tracer trace.Tracer
			s      otlptest.Span
		}) int {
			return int(a.s.ID) - int(b.s.ID)
		})
		for _, x := range all {
			parent := ctx
			if x.s.Parent != 0 {
				parent = ctxs[x.s.Parent]
			}
			c, span := x.tracer.Start(parent, x.s.Name, trace.WithTimestamp(time.Unix(0, int64(shift+x.s.Start))))
			ctxs[x.s.ID] = c
			spans = append(spans, started{span, shift + x.s.End})
		}
		for _, s := range slices.Backward(spans) {
			s.span.End(trace.WithTimestamp(time.Unix(0, int64(s.end))))
		}
	}
	for _, p := range providers {
		if err := p.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSDKExporterSpans: the SDK's exporter sends the spans of generated
// scenario runs in batches; each trace becomes a run with exactly the
// samples the same spans give from a file.
func TestSDKExporterSpans(t *testing.T) {
	store := newStore(t)
	r, srv := start(t, store, Options{Wait: 300 * time.Millisecond}, "")
	rng := rand.New(rand.NewPCG(3, 4))
	var traces [][]otlptest.Resource
	for i := range 5 {
		traces = append(traces, otlptest.ScenarioTrace(rng, uint64(i+1), "v1", 0.1, nil))
	}
	replay(t, strings.TrimPrefix(srv.URL, "http://"), traces)
	waitFor(t, "5 runs", func() bool { return r.Stats().TraceRuns == 5 })
	runs, err := store.Runs(context.Background(), "test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 {
		t.Fatalf("%d runs stored, want 5", len(runs))
	}
	for i, run := range runs {
		want, _, err := ingest.TraceRuns(ingest.RunOptions{}, "generated", otlptest.Traces(traces[i]...))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := folded(t, store, "test", "v1", run.Run), stackTotals(want[0].Profile); !maps.Equal(got, want) {
			t.Errorf("run %d: stored %v, want %v", i, got, want)
		}
		if run.SampleType != "wall" || run.Unit != "nanoseconds" || len(run.Run) != 32 {
			t.Errorf("run %+v", run)
		}
	}
	if s := r.Stats(); s.Spans != 5*len(otlptest.Scenario) || s.PendingSpans != 0 || s.LateSpans != 0 {
		t.Errorf("stats %+v", s)
	}
}

// post sends body to the receiver and returns the status, headers and
// body of the answer.
func post(t testing.TB, url, contentType string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	return send(t, http.MethodPost, url, body, append([]string{"Content-Type", contentType}, header...)...)
}

// send makes a request with headers (name, value, ...; "Host" sets the
// request's Host) and returns the status, headers and body of the answer.
func send(t testing.TB, method, url string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, b := testkit.Do(t, req)
	return resp.StatusCode, resp.Header, b
}

// pprofRequest converts a pprof test file to an OTLP profiles request
// for run; it returns the request and the profile pkg/ingest reads from
// the file for the sample type the receiver reads (the last).
func pprofRequest(t testing.TB, file, build, run string) (pprofile.Profiles, *profile.Profile) {
	t.Helper()
	src, data := otlptest.ReadPprof(t, file)
	want, err := ingest.Options{SampleType: src.SampleType[len(src.SampleType)-1].Type}.Parse(bytes.NewReader(data), file)
	if err != nil {
		t.Fatal(err)
	}
	return otlptest.FromPprof(src, "prof", build, run), want
}

// TestPostProfiles posts every pprof test file converted with pdata, as
// protobuf (gzipped) and as JSON, and a request of two runs: the stored
// runs hold what pprof reads.
func TestPostProfiles(t *testing.T) {
	store := newStore(t)
	_, srv := start(t, store, Options{}, "")
	files := append(testkit.PprofRuns(t, "base"), testkit.PprofRuns(t, "head")...)
	for _, file := range files {
		run := filepath.Base(file)
		pd, want := pprofRequest(t, file, "pb", run)
		req := pprofileotlp.NewExportRequestFromProfiles(pd)
		pb, err := req.MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if code, h, body := post(t, srv.URL+"/v1/profiles", protobufType, testkit.Gzip(t, pb), "Content-Encoding", "gzip"); code != 200 || h.Get("Content-Type") != protobufType {
			t.Fatalf("%s protobuf: %d %s", run, code, body)
		}
		pd, _ = pprofRequest(t, file, "json", run)
		js, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if code, h, body := post(t, srv.URL+"/v1/profiles", jsonType, js); code != 200 || h.Get("Content-Type") != jsonType {
			t.Fatalf("%s JSON: %d %s", run, code, body)
		}
		for _, build := range []string{"pb", "json"} {
			if got := folded(t, store, "prof", build, run); !maps.Equal(got, stackTotals(want)) {
				t.Errorf("%s %s: stored stacks differ from pprof's", run, build)
			}
		}
	}
	// Two runs in one request commit together.
	two, _ := pprofRequest(t, files[0], "two", "a")
	other, _ := pprofRequest(t, files[1], "two", "b")
	if err := other.MergeTo(two); err != nil {
		t.Fatal(err)
	}
	pb, err := pprofileotlp.NewExportRequestFromProfiles(two).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(t, srv.URL+"/v1/profiles", protobufType, pb); code != 200 {
		t.Fatalf("two runs: %d %s", code, body)
	}
	runs, err := store.Runs(context.Background(), "prof", []string{"two"}, nil)
	if err != nil || len(runs) != 2 || runs[0].IngestID == runs[1].IngestID {
		t.Fatalf("runs %+v, %v", runs, err)
	}
}

// FuzzTracesRequest posts mutated trace requests (protobuf and JSON) to
// the handler: every answer is 200 or 400, never a panic.
func FuzzTracesRequest(f *testing.F) {
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(1, 2)), 1, "v1", 0.1, nil)...)
	g := guardFor(f, loopback, "")
	fuzzRequests(f, "/v1/traces", ptraceotlp.NewExportRequestFromTraces(td), func(t *testing.T, req *http.Request) {
		// A receiver per input: traces are only held (no store is reached),
		// so one shared receiver would fill its pending bound on a long run.
		h := New(nil, Options{}).Handler(g)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 && w.Code != 400 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}

// FuzzProfilesRequest reads mutated profiles requests as the handler
// does before it stores them: runs the store takes, or a 400.
func FuzzProfilesRequest(f *testing.F) {
	pd := otlptest.FromPprof(otlptest.SmallPprof(), "fuzz", "b", "r")
	r := New(nil, Options{})
	fuzzRequests(f, "/v1/profiles", pprofileotlp.NewExportRequestFromProfiles(pd), func(t *testing.T, req *http.Request) {
		w := httptest.NewRecorder()
		runs, _, ok := r.profileRuns(w, req)
		if !ok && w.Code != 400 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		for _, run := range runs {
			if err := run.Profile.CheckValid(); err != nil || len(run.Profile.Samples) == 0 {
				t.Fatalf("run %+v: %v", run.Meta, err)
			}
		}
	})
}

// fuzzRequests calls check with POST requests to the receiver's path
// that carry mutations of seed, as protobuf and as JSON.
func fuzzRequests(f *testing.F, path string, seed response, check func(t *testing.T, req *http.Request)) {
	pb, err := seed.MarshalProto()
	if err != nil {
		f.Fatal(err)
	}
	js, err := seed.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pb, false)
	f.Add(js, true)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		ct := protobufType
		if isJSON {
			ct = jsonType
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4318"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		check(t, req)
	})
}

// TestRootlessRunAndStoreFailure: a run whose root span never comes is
// stored after RootWait under [missing parent]; when the store fails,
// profiles get 503 with Retry-After, spans are taken into the log up to
// the pending bound, then get 503 too, and health says why.
func TestRootlessRunAndStoreFailure(t *testing.T) {
	store := newStore(t)
	r, srv := start(t, store, Options{Wait: 50 * time.Millisecond, RootWait: 300 * time.Millisecond, MaxPendingSpans: len(otlptest.Scenario) + 1}, "")
	orphans := otlptest.Traces(otlptest.Resource{Attrs: otlptest.Service("svc", "v1"), Spans: []otlptest.Span{
		{Trace: 5, ID: 2, Parent: 1, Name: "child", Start: 0, End: 10}}})
	pb, err := ptraceotlp.NewExportRequestFromTraces(orphans).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, pb); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	waitFor(t, "the rootless run", func() bool { return r.Stats().TraceRuns == 1 })
	runs, err := store.Runs(context.Background(), "svc", nil, nil)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	if got := folded(t, store, "svc", "v1", runs[0].Run); !maps.Equal(got, map[string]int64{"[missing parent];svc: child": 10}) {
		t.Errorf("stored %v", got)
	}
	if s := r.Stats(); s.Summary.Orphans != 1 {
		t.Errorf("stats %+v", s)
	}

	store.Close() // the store fails from now on
	pd, _ := pprofRequest(t, testkit.Testdata("pprof", "base-run1.pb.gz"), "down", "r")
	body, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if code, h, answer := post(t, srv.URL+"/v1/profiles", protobufType, body); code != 503 || h.Get("Retry-After") == "" {
		t.Errorf("profiles with the store down: %d %q %s", code, h.Get("Retry-After"), answer)
	}
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(2, 2)), 6, "v1", 0, nil)...)
	if pb, err = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto(); err != nil {
		t.Fatal(err)
	}
	if code, _, answer := post(t, srv.URL+"/v1/traces", protobufType, pb); code != 200 {
		t.Fatalf("spans: %d %s", code, answer)
	}
	waitFor(t, "a failed commit", func() bool { return r.Stats().Failing != "" })
	if code, h, answer := post(t, srv.URL+"/v1/traces", protobufType, pb); code != 503 || h.Get("Retry-After") == "" ||
		!strings.Contains(status(t, answer), "ClickHouse is unavailable and 7 spans wait") {
		t.Errorf("spans over the bound with the store down: %d %q %s", code, h.Get("Retry-After"), status(t, answer))
	}
	if code, _, answer := send(t, http.MethodGet, srv.URL+"/health", nil); code != 503 || !strings.Contains(string(answer), `"status":"ClickHouse is unavailable"`) {
		t.Errorf("health with the store down: %d %s", code, answer)
	}
	if s := r.Stats(); s.PendingSpans != len(otlptest.Scenario) || s.TraceRuns != 1 {
		t.Errorf("spans of the failed commit not kept: %+v", s)
	}
}
