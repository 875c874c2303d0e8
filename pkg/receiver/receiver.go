// Package receiver is an OTLP/HTTP receiver: POST /v1/traces and
// /v1/profiles, protobuf or JSON, gzipped or not, answered as the OTLP
// specification says, so that a Collector's otlphttp exporter or an SDK
// exporter can send to Flamediff. Profiles are stored as they come, each
// request's runs in one commit; spans wait until their run is complete
// (docs/OTLP.md). Who may ask is pkg/web/guard's business, as for every
// listener of ours. It reads no file and no environment: the CLI gives it
// its options, its guard and the listener.
package receiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

// The content types of OTLP/HTTP.
const (
	protobufType = "application/x-protobuf"
	jsonType     = "application/json"
)

// Handler serves POST /v1/traces and /v1/profiles, and GET /health, behind g: its Host
// check (421), token (401) and refusal of other origins (403) and of
// other content types (415). Make g with Refuse as its refusal, so that
// these answers are OTLP's too.
func (r *Receiver) Handler(g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.traces)
	mux.HandleFunc("/v1/profiles", r.profiles)
	site := http.NewServeMux()
	site.HandleFunc("GET /health", r.health)
	site.Handle("/", g.Data(mux, protobufType, jsonType))
	return g.Site(site)
}

// Refuse answers a refusal as OTLP/HTTP asks: a google.rpc.Status in the
// request's encoding. It is the receiver's guard.Options.Refuse.
func Refuse(w http.ResponseWriter, req *http.Request, status int, msg string) {
	fail(w, wantsJSON(req), refuse(status, "%s", msg))
}

// wantsJSON says whether a request is OTLP/JSON (else protobuf).
func wantsJSON(req *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return mt == jsonType
}

// request is a decoded request body and how to answer it.
type request struct {
	body   []byte
	isJSON bool
}

// httpError is a refusal: its status, reason and, for 429 and 503, when
// to retry.
type httpError struct {
	status int
	reason string
	retry  time.Duration
}

func (e *httpError) Error() string { return e.reason }

func refuse(status int, format string, args ...any) *httpError {
	return &httpError{status: status, reason: fmt.Sprintf(format, args...)}
}

// read checks a request as OTLP/HTTP asks (the guard has checked its
// content type) and returns its body, decompressed.
func (r *Receiver) read(w http.ResponseWriter, req *http.Request) (request, *httpError) {
	out := request{isJSON: wantsJSON(req)}
	if req.Method != http.MethodPost {
		return out, refuse(http.StatusMethodNotAllowed, "%s: only POST", req.Method)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.o.MaxBodyBytes))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			return out, refuse(http.StatusRequestEntityTooLarge, "body over %d bytes", r.o.MaxBodyBytes)
		}
		return out, refuse(http.StatusBadRequest, "reading the body: %v", err)
	}
	switch enc := strings.ToLower(req.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		if body, err = ingest.Gunzip(body, r.o.MaxBodyBytes); errors.Is(err, ingest.ErrTooLarge) {
			return out, refuse(http.StatusRequestEntityTooLarge, "body inflates past %d bytes", r.o.MaxBodyBytes)
		} else if err != nil {
			return out, refuse(http.StatusBadRequest, "%v", err)
		}
	default:
		return out, refuse(http.StatusUnsupportedMediaType, "Content-Encoding %q: want gzip or none", enc)
	}
	out.body = body
	return out, nil
}

// retryAfter is the wait a refused sender is told.
func (r *Receiver) retryAfter() time.Duration { return max(time.Second, r.o.Wait/2) }

// runOptions are how the receiver reads spans into runs.
func (r *Receiver) runOptions() ingest.RunOptions {
	return ingest.RunOptions{RunAttribute: r.o.RunAttribute, MaxSize: r.o.MaxBodyBytes}
}

// response is an OTLP response, in either encoding.
type response interface {
	MarshalJSON() ([]byte, error)
	MarshalProto() ([]byte, error)
}

// body reads a request's body, or answers its refusal and reports false.
func (r *Receiver) body(w http.ResponseWriter, req *http.Request) (request, bool) {
	in, herr := r.read(w, req)
	if herr != nil {
		fail(w, in.isJSON, herr)
		return in, false
	}
	return in, true
}

// succeed answers 200 with resp in the request's encoding.
func succeed(w http.ResponseWriter, isJSON bool, resp response) {
	var body []byte
	var err error
	if isJSON {
		body, err = resp.MarshalJSON()
	} else {
		body, err = resp.MarshalProto()
	}
	answer(w, isJSON, http.StatusOK, body, err)
}

func (r *Receiver) traces(w http.ResponseWriter, req *http.Request) {
	in, ok := r.body(w, req)
	if !ok {
		return
	}
	isJSON := in.isJSON
	// The otlp-traces row of the format table reads files and requests alike.
	spans, err := ingest.OTLPSpans(in.body, "request", r.runOptions())
	if err == nil {
		err = storable(spans)
	}
	if err != nil {
		fail(w, isJSON, refuse(http.StatusBadRequest, "%v", err))
		return
	}
	fresh, late, herr := r.admit(spans)
	if herr == nil {
		var more int
		more, herr = r.accept(fresh)
		late += more
	}
	if herr != nil {
		fail(w, isJSON, herr)
		return
	}
	resp := ptraceotlp.NewExportResponse()
	if late > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedSpans(int64(late))
		ps.SetErrorMessage(fmt.Sprintf("%d spans came after their run was stored (raise the receiver's --wait)", late))
	}
	succeed(w, isJSON, resp)
}

// storable checks that the store will take the runs of spans: every
// span's resource names its app and build, its texts are UTF-8 and it
// starts when a run may. So a run never waits to be refused.
func storable(spans []ingest.OTLPSpan) error {
	for _, s := range spans {
		if s.Service == "" || s.Version == "" {
			return fmt.Errorf("span %q: its resource needs service.name (the app) and service.version (the build)", s.Name)
		}
		for _, text := range []string{s.Service, s.Version, s.Name, s.Group, s.File} {
			if !utf8.ValidString(text) {
				return fmt.Errorf("span %q: %q is not valid UTF-8", s.Name, text)
			}
		}
		start := time.Unix(0, int64(min(s.Start, math.MaxInt64))) // #nosec G115 -- bounded by MaxInt64
		if err := storage.CheckStart(start); err != nil {
			return fmt.Errorf("span %q: %w", s.Name, err)
		}
	}
	return nil
}

func (r *Receiver) profiles(w http.ResponseWriter, req *http.Request) {
	runs, in, ok := r.profileRuns(w, req)
	if !ok {
		return
	}
	// Stored before the answer: a 200 means stored (or set aside).
	ctx, cancel := context.WithTimeout(req.Context(), r.o.CommitTimeout)
	err := r.store.WriteRuns(ctx, runs, nil)
	late := ctx.Err() != nil
	cancel()
	if err != nil {
		if why := r.storeDown(req.Context(), late); why != "" {
			r.o.Logf("storing %d profile runs failed: %v", len(runs), err)
			fail(w, in.isJSON, &httpError{status: http.StatusServiceUnavailable, reason: why + ": the profiles are not stored", retry: r.retryAfter()})
			return
		}
		// The store answers and refuses these runs: retrying would not
		// help, so the request is kept aside and acknowledged.
		kept := r.keep("profiles", in.body)
		r.o.Logf("a profiles request of %d runs set aside (the store refuses it: %v); kept: %s", len(runs), err, errOr(kept, "yes"))
		r.countSetAside()
		if kept != nil {
			fail(w, in.isJSON, &httpError{status: http.StatusServiceUnavailable, reason: "the store refuses the runs and the receiver cannot keep them", retry: r.retryAfter()})
			return
		}
	} else {
		r.mu.Lock()
		r.stats.ProfileRuns += len(runs)
		r.mu.Unlock()
	}
	succeed(w, in.isJSON, pprofileotlp.NewExportResponse())
}

// profileRuns reads a profiles request into runs the store takes, or
// answers its refusal and reports false.
func (r *Receiver) profileRuns(w http.ResponseWriter, req *http.Request) (ingestions []storage.RunProfile, in request, ok bool) {
	if in, ok = r.body(w, req); !ok {
		return nil, in, false
	}
	// The otlp row of the format table reads files and requests alike.
	runs, _, err := ingest.ParseRuns(in.body, "request", ingest.OTLP, ingest.RunOptions{MaxSize: r.o.MaxBodyBytes})
	if err == nil {
		ingestions = Stored(runs, storage.RunMeta{})
		for _, in := range ingestions {
			if err = in.Check(); err != nil { // the store would refuse it: bad input, not a failing store
				err = fmt.Errorf("run %s/%s/%s: %w", in.Meta.App, in.Meta.Build, in.Meta.Run, err)
				break
			}
		}
	}
	if err != nil {
		fail(w, in.isJSON, refuse(http.StatusBadRequest, "%v", err))
		return nil, in, false
	}
	return ingestions, in, true
}

// fail answers a refusal with a google.rpc.Status body, as OTLP/HTTP
// asks, and Retry-After for the retryable statuses.
func fail(w http.ResponseWriter, isJSON bool, e *httpError) {
	if e.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.retry.Seconds()))))
	}
	// Reasons may quote the bad input; a Status message must be UTF-8.
	st := &spb.Status{Code: grpcCode(e.status), Message: strings.ToValidUTF8(e.reason, "\uFFFD")}
	var body []byte
	var err error
	if isJSON {
		body, err = protojson.Marshal(st)
	} else {
		body, err = proto.Marshal(st)
	}
	answer(w, isJSON, e.status, body, err)
}

func answer(w http.ResponseWriter, isJSON bool, status int, body []byte, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ct := protobufType
	if isJSON {
		ct = jsonType
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away has its answer lost, nothing else
}

// grpcCode is the google.rpc code of an HTTP status.
func grpcCode(status int) int32 {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return 3 // INVALID_ARGUMENT
	case http.StatusUnauthorized:
		return 16 // UNAUTHENTICATED
	case http.StatusForbidden, http.StatusMisdirectedRequest:
		return 7 // PERMISSION_DENIED
	case http.StatusTooManyRequests:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	case http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		return 12 // UNIMPLEMENTED
	}
	return 2 // UNKNOWN
}

// Stored makes the runs a file or a request names (the format table's
// OTLP rows) what storage.WriteRuns takes, each with meta (commit, branch,
// labels, time) and its own app, build and run.
func Stored(runs []ingest.Run, meta storage.RunMeta) []storage.RunProfile {
	out := make([]storage.RunProfile, len(runs))
	for i, r := range runs {
		m := meta
		m.App, m.Build, m.Run = r.App, r.Build, r.Run
		out[i] = storage.RunProfile{Meta: m, Profile: r.Profile}
	}
	return out
}
