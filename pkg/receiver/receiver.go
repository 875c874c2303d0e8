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
	"sync"
	"time"
	"unicode/utf8"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/flamediff/flamediff/pkg/otlp"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

// Store is where runs go: *storage.Store.
type Store interface {
	IngestRuns(ctx context.Context, runs []storage.Ingestion, progress func(done, total int)) error
}

// Options configure a Receiver; zero fields take the defaults.
type Options struct {
	// Wait is how long a run's spans must stop coming, once a root span
	// has arrived, before the run is stored (default 10 s, the Collector's
	// tail sampling wait).
	Wait time.Duration
	// RootWait is how long a run without a root span waits (default 10 x
	// Wait); it is then stored, its spans under otlp.MissingParent.
	RootWait time.Duration
	// MaxPendingSpans bounds the spans held for runs not yet stored
	// (default 1,000,000); a request that would pass it gets 429.
	MaxPendingSpans int
	// MaxBodyBytes bounds a request body, and what it inflates to
	// (default 16 MiB); over it the answer is 413.
	MaxBodyBytes int64
	// RunAttribute groups spans into runs (otlp.TraceOptions); "" makes
	// each trace a run. Profiles name their runs by
	// otlp.DefaultRunAttribute.
	RunAttribute string
	// Logf logs what the receiver does in the background (runs stored,
	// late spans, store failures); nil logs nothing.
	Logf func(format string, args ...any)
}

// Stats counts what a receiver did.
type Stats struct {
	// Spans accepted, and runs stored from them.
	Spans, TraceRuns int
	// LateSpans came for a run already stored: counted, not stored.
	LateSpans int
	// PendingSpans wait in memory for their run.
	PendingSpans int
	// Profiles are the profile runs stored.
	ProfileRuns int
	// Summary adds up the span runs' build summaries.
	Summary otlp.TraceSummary
	// Failing says that the last attempt to store runs failed: spans are
	// refused (503) until one succeeds.
	Failing bool
}

// Receiver receives OTLP over HTTP.
type Receiver struct {
	store Store
	o     Options

	mu        sync.Mutex
	pending   map[string]*pendingRun
	committed map[string]bool // runs stored, for late spans; bounded
	order     []string        // committed in commit order
	stats     Stats
	failing   bool // the last store attempt failed
	ingest    sync.Mutex
}

type pendingRun struct {
	spans         []otlp.Span
	root          bool
	first, latest time.Time
}

// maxCommitted bounds the runs remembered as stored, to tell late spans.
const maxCommitted = 100_000

// New returns a receiver storing into store. Call Run to store the
// runs of spans.
func New(store Store, o Options) *Receiver {
	if o.Wait <= 0 {
		o.Wait = 10 * time.Second
	}
	if o.RootWait <= 0 {
		o.RootWait = 10 * o.Wait
	}
	if o.MaxPendingSpans <= 0 {
		o.MaxPendingSpans = 1_000_000
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Receiver{store: store, o: o, pending: map[string]*pendingRun{}, committed: map[string]bool{}}
}

// Stats returns the counts so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Failing = r.failing
	return s
}

// The content types of OTLP/HTTP.
const (
	protobufType = "application/x-protobuf"
	jsonType     = "application/json"
)

// Handler serves POST /v1/traces and /v1/profiles behind g: its Host
// check (421), token (401) and refusal of other origins (403) and of
// other content types (415). Make g with Refuse as its refusal, so that
// these answers are OTLP's too.
func (r *Receiver) Handler(g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.traces)
	mux.HandleFunc("/v1/profiles", r.profiles)
	return g.Site(g.Data(mux, protobufType, jsonType))
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

// Run stores runs whose spans stopped coming, until ctx is done; it then
// stores every pending run and returns.
func (r *Receiver) Run(ctx context.Context) {
	tick := time.NewTicker(max(10*time.Millisecond, r.o.Wait/4))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			r.commitReady(flush, time.Time{})
			return
		case now := <-tick.C:
			r.commitReady(ctx, now)
		}
	}
}

// commitReady stores the runs ready at now (every pending run when now is
// zero), all in one commit. Runs the store refuses stay pending, to be
// tried again.
func (r *Receiver) commitReady(ctx context.Context, now time.Time) {
	r.ingest.Lock() // one commit pass at a time: a run is stored once
	defer r.ingest.Unlock()
	r.mu.Lock()
	ready := map[string][]otlp.Span{}
	for id, p := range r.pending {
		if now.IsZero() || p.root && now.Sub(p.latest) >= r.o.Wait || now.Sub(p.first) >= r.o.RootWait {
			ready[id] = p.spans
		}
	}
	r.mu.Unlock()
	if len(ready) == 0 {
		return
	}
	var runs []storage.Ingestion
	stored := map[string]otlp.TraceSummary{}
	for id, spans := range ready {
		run, sum, err := otlp.SpanRun(spans, id, otlp.TraceOptions{RunAttribute: r.o.RunAttribute}, "traces")
		if err == nil && run.Profile == nil {
			continue
		}
		var in storage.Ingestion
		if err == nil {
			// A run the store refuses would fail every commit it is in,
			// for ever: like spans that make no run, keeping it would not
			// help.
			in = otlp.Ingestions([]otlp.Run{run}, storage.RunMeta{})[0]
			err = in.Check()
		}
		if err != nil {
			r.o.Logf("run %s of %d spans not stored: %v", id, len(spans), err)
			continue
		}
		runs = append(runs, in)
		stored[id] = sum
	}
	var err error
	if len(runs) > 0 {
		err = r.store.IngestRuns(ctx, runs, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing = err != nil && !now.IsZero()
	for id, spans := range ready {
		sum, ok := stored[id]
		if ok && r.failing {
			continue // kept to retry
		}
		p := r.pending[id]
		if len(p.spans) > len(spans) {
			// Spans came while the run was stored: it stays pending and is
			// stored again with them, replacing this version.
			continue
		}
		delete(r.pending, id)
		r.stats.PendingSpans -= len(p.spans)
		r.remember(id)
		if ok && err == nil {
			r.stats.TraceRuns++
			r.stats.Summary.Add(sum)
		}
	}
	switch {
	case r.failing:
		r.o.Logf("storing %d runs failed, kept to retry: %v", len(runs), err)
	case err != nil:
		r.o.Logf("%d runs lost at shutdown: %v", len(runs), err)
	case len(runs) > 0:
		r.o.Logf("stored %d runs", len(runs))
	}
}

// remember notes run id as stored; the oldest are forgotten past
// maxCommitted. Called with mu held.
func (r *Receiver) remember(id string) {
	if r.committed[id] {
		return
	}
	r.committed[id] = true
	r.order = append(r.order, id)
	if len(r.order) > maxCommitted {
		delete(r.committed, r.order[0])
		r.order = r.order[1:]
	}
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
		if body, err = otlp.Gunzip(body, r.o.MaxBodyBytes); errors.Is(err, otlp.ErrTooLarge) {
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

// message is an OTLP request or response, in either encoding.
type message interface {
	UnmarshalJSON([]byte) error
	UnmarshalProto([]byte) error
	MarshalJSON() ([]byte, error)
	MarshalProto() ([]byte, error)
}

// decode reads a request into msg, or answers its refusal and reports
// false.
func (r *Receiver) decode(w http.ResponseWriter, req *http.Request, msg message, what string) (isJSON, ok bool) {
	in, herr := r.read(w, req)
	if herr == nil {
		// Before pdata, whose recursion a deep request would overflow.
		err := otlp.CheckNesting(in.body, in.isJSON)
		switch {
		case err != nil:
		case in.isJSON:
			err = msg.UnmarshalJSON(in.body)
		default:
			err = msg.UnmarshalProto(in.body)
		}
		if err != nil {
			herr = refuse(http.StatusBadRequest, "not an OTLP %s request: %v", what, err)
		}
	}
	if herr != nil {
		fail(w, in.isJSON, herr)
		return in.isJSON, false
	}
	return in.isJSON, true
}

// succeed answers 200 with resp in the request's encoding.
func succeed(w http.ResponseWriter, isJSON bool, resp message) {
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
	er := ptraceotlp.NewExportRequest()
	isJSON, ok := r.decode(w, req, er, "traces")
	if !ok {
		return
	}
	spans, err := otlp.SpansOf(er.Traces(), r.o.RunAttribute)
	if err == nil {
		err = storable(spans)
	}
	if err != nil {
		fail(w, isJSON, refuse(http.StatusBadRequest, "%v", err))
		return
	}
	late, herr := r.accept(spans)
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
func storable(spans []otlp.Span) error {
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

// accept adds spans to their pending runs, all or none: over the
// pending bound, or while the store fails, nothing is taken. Spans of a
// run already stored are counted as late and not kept.
func (r *Receiver) accept(spans []otlp.Span) (late int, herr *httpError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := 0
	for i := range spans {
		if !r.committed[spans[i].RunID()] {
			fresh++
		}
	}
	if r.failing {
		return 0, &httpError{status: http.StatusServiceUnavailable, reason: "the store is failing; spans are kept for a retry", retry: r.retryAfter()}
	}
	if r.stats.PendingSpans+fresh > r.o.MaxPendingSpans {
		return 0, &httpError{status: http.StatusTooManyRequests, retry: r.retryAfter(),
			reason: fmt.Sprintf("%d spans wait for their runs to end; %d more would pass the bound of %d", r.stats.PendingSpans, fresh, r.o.MaxPendingSpans)}
	}
	now := time.Now()
	for _, s := range spans {
		id := s.RunID()
		if r.committed[id] {
			late++
			continue
		}
		p := r.pending[id]
		if p == nil {
			p = &pendingRun{first: now}
			r.pending[id] = p
		}
		p.spans = append(p.spans, s)
		p.latest = now
		p.root = p.root || s.Parent == [8]byte{}
	}
	r.stats.Spans += len(spans) - late
	r.stats.PendingSpans += len(spans) - late
	if late > 0 {
		r.stats.LateSpans += late
		r.o.Logf("%d spans came after their run was stored: not stored", late)
	}
	return late, nil
}

func (r *Receiver) profiles(w http.ResponseWriter, req *http.Request) {
	runs, isJSON, ok := r.profileRuns(w, req)
	if !ok {
		return
	}
	if err := r.store.IngestRuns(req.Context(), runs, nil); err != nil {
		r.o.Logf("storing %d profile runs failed: %v", len(runs), err)
		fail(w, isJSON, &httpError{status: http.StatusServiceUnavailable, reason: "storing the runs failed: " + err.Error(), retry: r.retryAfter()})
		return
	}
	r.mu.Lock()
	r.stats.ProfileRuns += len(runs)
	r.mu.Unlock()
	succeed(w, isJSON, pprofileotlp.NewExportResponse())
}

// profileRuns reads a profiles request into runs the store takes, or
// answers its refusal and reports false.
func (r *Receiver) profileRuns(w http.ResponseWriter, req *http.Request) (ingestions []storage.Ingestion, isJSON, ok bool) {
	er := pprofileotlp.NewExportRequest()
	if isJSON, ok = r.decode(w, req, er, "profiles"); !ok {
		return nil, isJSON, false
	}
	runs, err := otlp.ProfileRuns(otlp.ProfileOptions{}, "request", er.Profiles())
	if err == nil {
		ingestions = otlp.Ingestions(runs, storage.RunMeta{})
		for _, in := range ingestions {
			if err = in.Check(); err != nil { // the store would refuse it: bad input, not a failing store
				err = fmt.Errorf("run %s/%s/%s: %w", in.Meta.App, in.Meta.Build, in.Meta.Run, err)
				break
			}
		}
	}
	if err != nil {
		fail(w, isJSON, refuse(http.StatusBadRequest, "%v", err))
		return nil, isJSON, false
	}
	return ingestions, isJSON, true
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
