package receiver

// Admission of a request's spans: over the pending bound or while the
// store is down they are refused (429, 503); spans of runs already stored
// are late, counted, not kept; fresh ones are logged before they join
// their runs.

import (
	"fmt"
	"net/http"
	"time"

	"github.com/flamediff/flamediff/pkg/ingest"
)

// remember notes run key as stored; the oldest are forgotten past
// maxCommitted. Called with mu held.
func (r *Receiver) remember(key string) {
	if r.committed[key] {
		return
	}
	r.committed[key] = true
	r.order = append(r.order, key)
	if len(r.order) > maxCommitted {
		delete(r.committed, r.order[0])
		r.order = r.order[1:]
	}
}

// admit takes the spans of runs not yet stored, or refuses them all: over
// the pending bound it answers 429, or 503 while the store is down or
// frozen. Spans of a run already stored are late, not kept. The fresh
// spans count as pending from now on.
func (r *Receiver) admit(spans []ingest.OTLPSpan) (fresh []ingest.OTLPSpan, late int, herr *httpError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh = make([]ingest.OTLPSpan, 0, len(spans))
	for _, s := range spans {
		if !r.committed[s.RunKey()] {
			fresh = append(fresh, s)
		}
	}
	if r.stats.PendingSpans+len(fresh) > r.o.MaxPendingSpans {
		if why := r.failingLocked(); why != "" {
			return nil, 0, &httpError{status: http.StatusServiceUnavailable, retry: r.retryAfter(),
				reason: fmt.Sprintf("%s and %d spans wait to be stored, the receiver's bound: nothing of the request is kept", why, r.stats.PendingSpans)}
		}
		return nil, 0, &httpError{status: http.StatusTooManyRequests, retry: r.retryAfter(),
			reason: fmt.Sprintf("%d spans wait for their runs to end; %d more would pass the bound of %d", r.stats.PendingSpans, len(fresh), r.o.MaxPendingSpans)}
	}
	r.stats.PendingSpans += len(fresh)
	r.late(len(spans) - len(fresh))
	return fresh, len(spans) - len(fresh), nil
}

// accept logs fresh spans (admitted) durably, then adds them to their
// runs; it returns how many turned out late meanwhile.
func (r *Receiver) accept(fresh []ingest.OTLPSpan) (late int, herr *httpError) {
	var seg uint64
	if r.wal != nil && len(fresh) > 0 {
		var err error
		if seg, err = r.wal.append(walRecord{Spans: fresh}); err != nil {
			r.mu.Lock()
			r.stats.PendingSpans -= len(fresh)
			r.mu.Unlock()
			r.o.Logf("%v", err)
			return 0, &httpError{status: http.StatusServiceUnavailable, retry: r.retryAfter(),
				reason: "the receiver cannot write its log: nothing of the request is kept"}
		}
		defer r.wal.release(seg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.PendingSpans -= len(fresh) // take counts them again
	late = r.take(fresh, seg)
	r.stats.Spans += len(fresh) - late
	return late, nil
}

// take adds spans, logged in segment seg, to their pending runs; spans
// of runs stored meanwhile are late. Called with mu held.
func (r *Receiver) take(spans []ingest.OTLPSpan, seg uint64) (late int) {
	now := time.Now()
	for _, s := range spans {
		key := s.RunKey()
		if r.committed[key] {
			late++
			continue
		}
		p := r.pending[key]
		if p == nil {
			p = &pendingRun{first: now, segs: map[uint64]bool{}}
			r.pending[key] = p
		}
		p.spans = append(p.spans, s)
		p.latest = now
		p.root = p.root || s.Parent == [8]byte{}
		if !p.segs[seg] {
			p.segs[seg] = true
			if r.wal != nil {
				r.wal.hold(seg)
			}
		}
	}
	r.stats.PendingSpans += len(spans) - late
	r.late(late)
	return late
}

// late counts spans that came after their run was stored. Called with mu
// held.
func (r *Receiver) late(n int) {
	if n > 0 {
		r.stats.LateSpans += n
		r.o.Logf("%d spans came after their run was stored: not stored", n)
	}
}
