package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Store is where runs go: *storage.Store.
type Store interface {
	WriteRuns(ctx context.Context, runs []storage.RunProfile, progress func(done, total int)) error
	// Ping tells a store that is down or frozen (an error) from one that
	// answers, whose refusal of a commit is then the runs' fault.
	Ping(ctx context.Context) error
}

// Options configure a Receiver; zero fields take the defaults.
type Options struct {
	// Wait is how long a run's spans must stop coming, once a root span
	// has arrived, before the run is stored (default 10 s, the Collector's
	// tail sampling wait).
	Wait time.Duration
	// RootWait is how long a run without a root span waits (default 10 x
	// Wait); it is then stored, its spans under ingest.MissingParent.
	RootWait time.Duration
	// MaxPendingSpans bounds the spans held for runs not yet stored
	// (default 1,000,000); a request that would pass it gets 429, or 503
	// while the store is down or frozen.
	MaxPendingSpans int
	// MaxBodyBytes bounds a request body, and what it inflates to
	// (default 16 MiB); over it the answer is 413.
	MaxBodyBytes int64
	// RunAttribute groups spans into runs (ingest.RunOptions); "" makes
	// each trace a run. Profiles name their runs by
	// ingest.DefaultRunAttribute.
	RunAttribute string
	// Dir holds the write-ahead log of accepted spans and what is set
	// aside (runs the store keeps refusing). "" keeps spans in memory
	// only: a crash loses what was acknowledged (tests and benchmarks).
	Dir string
	// CommitTimeout bounds one commit (default 2 minutes): a frozen
	// store is then found down.
	CommitTimeout time.Duration
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
	// PendingSpans wait for their run; PendingRuns are their runs.
	PendingSpans, PendingRuns int
	// Profiles are the profile runs stored.
	ProfileRuns int
	// Summary adds up the span runs' build summaries.
	Summary ingest.TraceSummary
	// SetAside counts the runs, and profile requests, that the store
	// refused while it answered: kept in Dir's set-aside folder.
	SetAside int
	// Failing says why the store is not taking commits ("": it is):
	// down, or frozen in a commit.
	Failing string
	// Replayed are the spans read back from the write-ahead log at start.
	Replayed int
}

// Receiver receives OTLP over HTTP.
type Receiver struct {
	store Store
	o     Options
	wal   *wal // nil: in memory

	mu        sync.Mutex
	pending   map[string]*pendingRun // by ingest.OTLPSpan.RunKey
	committed map[string]bool        // runs stored, for late spans; bounded
	order     []string               // committed in commit order
	stats     Stats
	down      string    // why the last commit failed with the store down
	downAt    time.Time // when
	since     time.Time // when the running commit started (zero: none)
	ingest    sync.Mutex
}

type pendingRun struct {
	spans         []ingest.OTLPSpan
	root          bool
	first, latest time.Time
	segs          map[uint64]bool // the log segments holding its spans
}

// maxCommitted bounds the runs remembered as stored, to tell late spans.
const maxCommitted = 100_000

// stallAfter is how long a commit may run before the store counts as
// frozen for back-pressure.
const stallAfter = 10 * time.Second

// New returns a receiver storing into store, its spans in memory only
// (Open keeps them in a write-ahead log). Call Run to store the runs of
// spans.
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
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = 2 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Receiver{store: store, o: o, pending: map[string]*pendingRun{}, committed: map[string]bool{}}
}

// Open returns a receiver whose accepted spans are in a write-ahead log
// in o.Dir before it answers, replaying the spans the log holds: those a
// previous receiver acknowledged and did not store.
func Open(store Store, o Options) (*Receiver, error) {
	if o.Dir == "" {
		return nil, errors.New("receiver: no directory for the write-ahead log")
	}
	r := New(store, o)
	w, err := openWAL(filepath.Join(o.Dir, "wal"), func(seg uint64, rec walRecord) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.take(rec.Spans, seg)
		r.stats.Replayed += len(rec.Spans)
		for _, key := range rec.Stored {
			if p := r.pending[key]; p != nil {
				delete(r.pending, key)
				r.stats.PendingSpans -= len(p.spans)
			}
			r.remember(key)
		}
	})
	if err != nil {
		return nil, err
	}
	r.wal = w
	r.mu.Lock()
	for _, p := range r.pending {
		for seg := range p.segs {
			w.hold(seg)
		}
	}
	r.stats.Spans = r.stats.PendingSpans
	r.mu.Unlock()
	w.mu.Lock()
	w.trim()
	w.mu.Unlock()
	return r, nil
}

// Close closes the write-ahead log.
func (r *Receiver) Close() error {
	if r.wal == nil {
		return nil
	}
	return r.wal.close()
}

// Stats returns the counts so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.PendingRuns = len(r.pending)
	s.Failing = r.failingLocked()
	return s
}

// failingLocked says why the store takes no commits, "" if it does.
func (r *Receiver) failingLocked() string {
	switch {
	case r.down != "":
		return r.down
	case !r.since.IsZero() && time.Since(r.since) > stallAfter:
		return fmt.Sprintf("a commit has been running for %s (ClickHouse frozen or overloaded)", time.Since(r.since).Round(time.Second))
	}
	return ""
}

// Run stores runs whose spans stopped coming, until ctx is done; it then
// stores every pending run (what it cannot store stays in the log for
// the next start) and returns.
func (r *Receiver) Run(ctx context.Context) {
	tick := time.NewTicker(max(10*time.Millisecond, r.o.Wait/4))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// A store that does not answer in this time leaves the runs
			// in the log (or, without one, loses them).
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			r.commitReady(flush, time.Time{})
			return
		case now := <-tick.C:
			r.commitReady(ctx, now)
		}
	}
}

// commitBatch bounds the spans of one WriteRuns call, so that a backlog
// (a burst, a store back after an outage) is stored in steps.
const commitBatch = 200_000

// readyRun is a run taken for a commit: its key, what the store is
// given, and its build summary.
type readyRun struct {
	key string
	in  storage.RunProfile
	sum ingest.TraceSummary
}

// commitReady stores the runs ready at now (every pending run when now is
// zero). Runs stay pending while the store is down; a batch the store
// refuses while it answers is split until the runs it refuses are alone,
// and those are set aside.
func (r *Receiver) commitReady(ctx context.Context, now time.Time) {
	r.ingest.Lock() // one commit pass at a time: a run is stored once
	defer r.ingest.Unlock()
	r.mu.Lock()
	if r.down != "" && !now.IsZero() && now.Sub(r.downAt) < max(time.Second, r.o.Wait) {
		r.mu.Unlock() // the store is down: building every pending run again each tick would only burn CPU
		return
	}
	ready := map[string][]ingest.OTLPSpan{}
	for key, p := range r.pending {
		if now.IsZero() || p.root && now.Sub(p.latest) >= r.o.Wait || now.Sub(p.first) >= r.o.RootWait {
			ready[key] = p.spans[:len(p.spans):len(p.spans)]
		}
	}
	r.mu.Unlock()
	if len(ready) == 0 {
		return
	}
	var batch []readyRun
	var dropped []string
	size := 0
	for key, spans := range ready {
		run, sum, err := ingest.SpanRun(spans, spans[0].RunID(), r.runOptions(), "traces")
		if err == nil && run.Profile == nil {
			dropped = append(dropped, key) // no span with a duration: nothing to store
			continue
		}
		var in storage.RunProfile
		if err == nil {
			in = Stored([]ingest.Run{run}, storage.RunMeta{})[0]
			err = in.Check()
		}
		if err != nil { // storable() refused what the store refuses: not expected
			r.setAside(spans, err)
			dropped = append(dropped, key)
			continue
		}
		batch = append(batch, readyRun{key: key, in: in, sum: sum})
		if size += len(spans); size >= commitBatch {
			r.finish(r.storeRuns(ctx, batch, ready), ready)
			batch, size = nil, 0
		}
	}
	r.finish(append(r.storeRuns(ctx, batch, ready), dropped...), ready)
	if now.IsZero() {
		r.mu.Lock()
		if n := len(r.pending); n > 0 && r.wal != nil {
			r.o.Logf("%d runs of %d spans not stored at shutdown (%s): kept in the write-ahead log for the next start", n, r.stats.PendingSpans, r.down)
		} else if n > 0 {
			r.o.Logf("%d runs of %d spans lost at shutdown (%s): no write-ahead log", n, r.stats.PendingSpans, r.down)
		}
		r.mu.Unlock()
	}
}

// storeRuns stores batch and returns the keys of the runs done with:
// stored, or set aside.
func (r *Receiver) storeRuns(ctx context.Context, batch []readyRun, ready map[string][]ingest.OTLPSpan) []string {
	if len(batch) == 0 {
		return nil
	}
	r.mu.Lock()
	r.since = time.Now()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.since = time.Time{}
		r.mu.Unlock()
	}()
	ins := make([]storage.RunProfile, len(batch))
	for i, b := range batch {
		ins[i] = b.in
	}
	cctx, cancel := context.WithTimeout(ctx, r.o.CommitTimeout)
	err := r.store.WriteRuns(cctx, ins, nil)
	late := cctx.Err() != nil
	cancel()
	if err == nil {
		r.mu.Lock()
		r.down = ""
		for _, b := range batch {
			r.stats.TraceRuns++
			r.stats.Summary.Add(b.sum)
		}
		r.mu.Unlock()
		keys := make([]string, len(batch))
		for i, b := range batch {
			keys[i] = b.key
		}
		r.o.Logf("stored %d runs", len(batch))
		return keys
	}
	if why := r.storeDown(ctx, late); why != "" {
		r.mu.Lock()
		r.down, r.downAt = why, time.Now()
		r.mu.Unlock()
		r.o.Logf("storing %d runs failed, kept to retry: %v", len(batch), err)
		return nil
	}
	if len(batch) == 1 { // the store answers and refuses this run alone
		r.setAside(ready[batch[0].key], err)
		return []string{batch[0].key}
	}
	half := len(batch) / 2
	return append(r.storeRuns(ctx, batch[:half], ready), r.storeRuns(ctx, batch[half:], ready)...)
}

// storeDown says why the store is down, frozen or too slow, "" if it
// answers: late says the write ran out of its time (or was cancelled, the
// receiver stopping), which is no refusal of the runs, whatever a ping
// says then: they are tried again, never set aside.
func (r *Receiver) storeDown(ctx context.Context, late bool) string {
	if late {
		return "ClickHouse did not store the runs in time (frozen or overloaded)"
	}
	pctx, cancel := context.WithTimeout(ctx, min(5*time.Second, r.o.CommitTimeout))
	defer cancel()
	if err := r.store.Ping(pctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "ClickHouse does not answer (frozen or overloaded)"
		}
		return "ClickHouse is unavailable"
	}
	return ""
}

// finish takes the runs of keys out of pending (a run whose spans came
// during its commit stays, to be stored again with them, replacing this
// version), marks them stored in the log, then lets the log drop their
// spans.
func (r *Receiver) finish(keys []string, ready map[string][]ingest.OTLPSpan) {
	if len(keys) == 0 {
		return
	}
	var done []string
	var segs []uint64
	r.mu.Lock()
	for _, key := range keys {
		p := r.pending[key]
		if p == nil || len(p.spans) > len(ready[key]) {
			continue
		}
		delete(r.pending, key)
		r.stats.PendingSpans -= len(p.spans)
		r.remember(key)
		done = append(done, key)
		for seg := range p.segs {
			segs = append(segs, seg)
		}
	}
	r.mu.Unlock()
	if r.wal == nil || len(done) == 0 {
		return
	}
	seg, err := r.wal.append(walRecord{Stored: done})
	if err != nil {
		// Without the mark the spans stay: a restart stores the runs again,
		// whole, replacing what this commit stored.
		r.o.Logf("write-ahead log: %v", err)
		return
	}
	segs = append(segs, seg)
	for _, s := range segs {
		r.wal.release(s)
	}
}

// setAside keeps a run the store refuses in Dir's set-aside folder as an
// OTLP traces file (`flamediff ingest --format otlp-traces` reads it once
// the cause is fixed), and reports it.
func (r *Receiver) setAside(spans []ingest.OTLPSpan, cause error) {
	defer r.countSetAside() // once logged
	if r.o.Dir == "" {
		r.o.Logf("run %q of %d spans not stored: %v", spans[0].RunID(), len(spans), cause)
		return
	}
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(ingest.TracesOf(spans, r.o.RunAttribute))
	if err == nil {
		err = r.keep("traces", body)
	}
	r.o.Logf("run %q of %d spans set aside (the store refuses it: %v); kept: %v", spans[0].RunID(), len(spans), cause, errOr(err, "yes"))
}

func (r *Receiver) countSetAside() {
	r.mu.Lock()
	r.stats.SetAside++
	r.mu.Unlock()
}

// keep writes body into the set-aside folder, fsync'd.
func (r *Receiver) keep(kind string, body []byte) error {
	dir := filepath.Join(r.o.Dir, "set-aside")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, kind+"-"+time.Now().UTC().Format("20060102T150405")+"-*.pb")
	if err != nil {
		return err
	}
	if _, err = f.Write(body); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// health answers GET /health: 200 when the store takes commits, 503 and
// why when not, with what waits and what was set aside, as JSON.
func (r *Receiver) health(w http.ResponseWriter, _ *http.Request) {
	s := r.Stats()
	status, code := "ok", http.StatusOK
	if s.Failing != "" {
		status, code = s.Failing, http.StatusServiceUnavailable
	}
	var walBytes int64
	if r.wal != nil {
		walBytes = r.wal.bytes()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(struct {
		Status       string `json:"status"`
		PendingSpans int    `json:"pendingSpans"`
		PendingRuns  int    `json:"pendingRuns"`
		LogBytes     int64  `json:"logBytes"`
		SetAside     int    `json:"setAside"`
		StoredRuns   int    `json:"storedRuns"`
		ProfileRuns  int    `json:"profileRuns"`
	}{status, s.PendingSpans, s.PendingRuns, walBytes, s.SetAside, s.TraceRuns, s.ProfileRuns}) // a client gone loses its answer only
}
