package receiver

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
)

// status decodes a refusal's google.rpc.Status.
func status(t testing.TB, body []byte) string {
	t.Helper()
	var st spb.Status
	if err := proto.Unmarshal(body, &st); err != nil {
		t.Fatalf("answer %q is not a google.rpc.Status: %v", body, err)
	}
	return st.GetMessage()
}

// TestBadRequests: each kind of bad request gets its status and reason,
// and stores nothing.
func TestBadRequests(t *testing.T) {
	store := newStore(t)
	r, srv := start(t, store, Options{MaxBodyBytes: 64 << 10, Wait: 200 * time.Millisecond}, "s3cret")
	auth := []string{"Authorization", "Bearer s3cret"}
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(1, 1)), 1, "v1", 0, nil)...)
	good, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	// Accepted before the bad requests come: they must not touch it.
	if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, good, auth...); code != 200 {
		t.Fatalf("good request: %d %s", code, body)
	}
	pd, _ := pprofRequest(t, testkit.Testdata("pprof", "base-run2.pb.gz"), "bad", "r")
	profilePB, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	// What protobuf carries but the store refuses: bad input (400), not a
	// failing store (503, which an exporter retries for ever).
	badApp, _ := pprofRequest(t, testkit.Testdata("pprof", "base-run2.pb.gz"), "bad", "r")
	badApp.ResourceProfiles().At(0).Resource().Attributes().PutStr("service.name", "pr\xffof")
	badAppPB, err := pprofileotlp.NewExportRequestFromProfiles(badApp).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	unstorable := func(name string, start uint64) []byte {
		b, err := ptraceotlp.NewExportRequestFromTraces(otlptest.Traces(otlptest.Resource{Attrs: otlptest.Service("api", "v1"),
			Spans: []otlptest.Span{{Trace: 7, ID: 1, Name: name, Start: start, End: start + 5}}})).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noVersion := ptrace.NewTraces()
	td.CopyTo(noVersion)
	noVersion.ResourceSpans().At(0).Resource().Attributes().Remove("service.version")
	noVersionPB, _ := ptraceotlp.NewExportRequestFromTraces(noVersion).MarshalProto()
	bomb := testkit.Gzip(t, make([]byte, 64<<20)) // 64 MiB of zeros in about 64 KiB
	if len(bomb) > 64<<10 {
		t.Fatalf("the gzip bomb is %d bytes", len(bomb))
	}
	for _, tt := range []struct {
		name     string
		path, ct string
		body     []byte
		header   []string
		status   int
		reason   string
	}{
		{"no token", "/v1/traces", protobufType, good, nil, 401, "needs its token"},
		{"wrong token", "/v1/traces", protobufType, good, []string{"Authorization", "Bearer s3cred"}, 401, "needs its token"},
		{"foreign Host", "/v1/traces", protobufType, good, append([]string{"Host", "rebound.example:4318"}, auth...), 421, "is not a name this server answers to"},
		{"malformed", "/v1/traces", protobufType, []byte("\x0a\xff\xff\xff\xff\x0f junk"), auth, 400, "not OTLP traces"},
		{"truncated", "/v1/traces", protobufType, good[:len(good)/2], auth, 400, "not OTLP traces"},
		{"malformed JSON", "/v1/traces", jsonType, []byte(`{"resourceSpans":[{`), auth, 400, ""},
		{"no build", "/v1/traces", protobufType, noVersionPB, auth, 400, "service.version"},
		{"malformed profiles", "/v1/profiles", protobufType, []byte("\x12\x05ab"), auth, 400, "not OTLP profiles"},
		{"profiles of an app not UTF-8", "/v1/profiles", protobufType, badAppPB, auth, 400, "is not valid UTF-8"},
		{"a span name not UTF-8", "/v1/traces", protobufType, unstorable("q\xff", 0), auth, 400, "is not valid UTF-8"},
		{"a span in 2262", "/v1/traces", protobufType, unstorable("late", math.MaxInt64-otlptest.Base), auth, 400, "outside 1970-2105"},
		{"truncated profiles", "/v1/profiles", protobufType, profilePB[:len(profilePB)*2/3], auth, 400, "not OTLP profiles"},
		{"profiles gzip bomb", "/v1/profiles", protobufType, bomb, append([]string{"Content-Encoding", "gzip"}, auth...), 413, "inflates past"},
		{"oversized", "/v1/traces", protobufType, make([]byte, 65<<10), auth, 413, "body over"},
		{"gzip bomb", "/v1/traces", protobufType, bomb, append([]string{"Content-Encoding", "gzip"}, auth...), 413, "inflates past"},
		{"corrupt gzip", "/v1/traces", protobufType, []byte("\x1f\x8b\x08\x00junk"), append([]string{"Content-Encoding", "gzip"}, auth...), 400, "gzip"},
		{"unknown encoding", "/v1/traces", protobufType, good, append([]string{"Content-Encoding", "br"}, auth...), 415, "Content-Encoding"},
		{"text/plain", "/v1/traces", "text/plain", good, auth, 415, "Content-Type"},
		{"form post", "/v1/traces", "application/x-www-form-urlencoded", []byte("a=b"), auth, 415, "Content-Type"},
		{"from a web page", "/v1/traces", protobufType, good, append([]string{"Origin", "http://attacker.example"}, auth...), 403, "Origin"},
		{"cross-site fetch", "/v1/profiles", protobufType, good, append([]string{"Sec-Fetch-Site", "cross-site"}, auth...), 403, "Sec-Fetch-Site"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := post(t, srv.URL+tt.path, tt.ct, tt.body, tt.header...)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %s", code, tt.status, body)
			}
			if h.Get("Access-Control-Allow-Origin") != "" {
				t.Error("CORS header sent")
			}
			if tt.ct == protobufType {
				if msg := status(t, body); !strings.Contains(msg, tt.reason) {
					t.Errorf("reason %q, want %q", msg, tt.reason)
				}
			}
		})
	}
	if code, _, body := send(t, http.MethodGet, srv.URL+"/v1/traces", nil, auth...); code != 405 {
		t.Errorf("GET: %d %s, want 405", code, body)
	}
	if s := r.Stats(); s.Spans != len(otlptest.Scenario) || s.ProfileRuns != 0 {
		t.Errorf("bad requests changed what was accepted: %+v", s)
	}
	waitFor(t, "the good run", func() bool { return r.Stats().TraceRuns == 1 })
	want, _, err := ingest.TraceRuns(ingest.RunOptions{}, "good", td)
	if err != nil {
		t.Fatal(err)
	}
	if got := folded(t, store, "test", "v1", want[0].Run); !maps.Equal(got, stackTotals(want[0].Profile)) {
		t.Errorf("the run accepted before the bad requests: stored %v, want %v", got, stackTotals(want[0].Profile))
	}
	if apps, err := store.Apps(context.Background()); err != nil || !slices.Equal(apps, []string{"test"}) {
		t.Errorf("apps %v (%v): bad profiles requests stored runs", apps, err)
	}
}

// TestFloodAndLateSpans: past the pending bound a request gets 429 with
// Retry-After and nothing of it is taken; retried once runs are stored,
// it is. Spans of a stored run are answered with a partial success.
func TestFloodAndLateSpans(t *testing.T) {
	store := newStore(t)
	per := len(otlptest.Scenario)
	r, srv := start(t, store, Options{Wait: 200 * time.Millisecond, MaxPendingSpans: 3 * per}, "")
	rng := rand.New(rand.NewPCG(5, 6))
	request := func(trace uint64) []byte {
		b, err := ptraceotlp.NewExportRequestFromTraces(otlptest.Traces(otlptest.ScenarioTrace(rng, trace, "v1", 0.1, nil)...)).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	accepted, refused := 0, 0
	for i := range 10 {
		body := request(uint64(i + 1))
		for {
			code, h, answer := post(t, srv.URL+"/v1/traces", protobufType, body)
			if code == 200 {
				accepted++
				break
			}
			if code != 429 || h.Get("Retry-After") == "" || !strings.Contains(status(t, answer), "bound") {
				t.Fatalf("status %d, Retry-After %q: %s", code, h.Get("Retry-After"), answer)
			}
			if s := r.Stats(); s.PendingSpans > 3*per {
				t.Fatalf("%d spans pending over the bound", s.PendingSpans)
			}
			refused++
			time.Sleep(50 * time.Millisecond) // a client waits Retry-After; the test need not
		}
	}
	if refused == 0 {
		t.Fatal("the flood was never refused: the test proves nothing")
	}
	waitFor(t, "10 runs", func() bool { return r.Stats().TraceRuns == 10 })
	runs, err := store.Runs(context.Background(), "test", nil, nil)
	if err != nil || len(runs) != 10 {
		t.Fatalf("%d runs stored (%v), want all 10 accepted", len(runs), err)
	}
	// A span of trace 1, stored already.
	late := otlptest.Traces(otlptest.Resource{Attrs: otlptest.Service("api", "v1"),
		Spans: []otlptest.Span{{Trace: 1, ID: 99, Parent: 1<<8 | 1, Name: "late", Start: 1, End: 2}}})
	js, err := ptraceotlp.NewExportRequestFromTraces(late).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := post(t, srv.URL+"/v1/traces", jsonType, js)
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalJSON(body); err != nil || code != 200 {
		t.Fatalf("late span: %d %s %v", code, body, err)
	}
	if ps := resp.PartialSuccess(); ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "after their run was stored") {
		t.Errorf("partial success %d %q", ps.RejectedSpans(), ps.ErrorMessage())
	}
	if s := r.Stats(); s.LateSpans != 1 || s.Spans != 10*per {
		t.Errorf("stats %+v", s)
	}

}
