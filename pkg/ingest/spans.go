package ingest

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/flamediff/flamediff/pkg/profile"
)

// MissingParent is the root frame above a span whose parent is not in its
// trace (lost, or sent after the trace was stored): its subtree is kept,
// marked, rather than grafted anywhere.
const MissingParent = "[missing parent]"

// Span is what a span flame graph needs of one span: OpenTelemetry's
// (the OTLP rows) and a Chrome trace's duration events alike.
type Span struct {
	// ID names the span in its trace; Parent is zero for a root.
	ID, Parent [8]byte
	// Service and Name make the span's frame, "Service: Name".
	Service, Name string
	File          string
	Line          int64
	Start, End    uint64 // nanoseconds
}

// SpanCounts counts what building span flame graphs met.
type SpanCounts struct {
	Spans int
	// Orphans are spans whose parent was missing, now roots under
	// MissingParent; Clipped are spans that clock skew put partly outside
	// their parent, clipped to it; Duplicates are spans given twice (a
	// retried batch), read once.
	Orphans, Clipped, Duplicates int
}

// SpanBuilder builds one span flame graph from the spans of one or more
// traces: a span is a frame "service: name", its stack the path of frames
// from its trace's root, its value its self time — its duration less the
// union of its children's intervals, each clipped to it — and its time its
// start offset in its trace. A span whose parent is missing is a root
// under MissingParent; a child outside its parent is clipped to it. The
// sample type is wall, in nanoseconds.
type SpanBuilder struct {
	P      *profile.Profile
	Counts SpanCounts
	stack  []uint32
	// stacks is where the samples' stacks are copied: an allocation for
	// many.
	stacks []uint32
	// of the trace being built
	spans []Span
	// the children of span i are kids[first[i]:first[i+1]], in start
	// order
	first, kids []int
	done        []bool
	start       uint64
	// frames holds the frame of each span identity met: interning costs
	// a frame's identity, a span a lookup.
	frames map[spanFrame]uint32
}

// spanFrame is what a span's frame is made of.
type spanFrame struct {
	service, name, file string
	line                int64
}

// NewSpanBuilder returns a builder of an empty wall profile.
func NewSpanBuilder() *SpanBuilder {
	return &SpanBuilder{P: &profile.Profile{SampleType: "wall", Unit: "nanoseconds"}}
}

// TraceExtent is what Trace tells of one trace: its first root span (ok
// false when it has none) and its earliest start and latest end.
type TraceExtent struct {
	Root       Span
	HasRoot    bool
	Start, End uint64
}

// Trace adds the samples of one trace's spans (at least one). It sorts
// spans by start and keeps them, duplicates left out, in their own slice.
func (b *SpanBuilder) Trace(spans []Span) TraceExtent {
	// Sorted by start, so that children are visited in order; duplicates
	// (same span id) are read once. Compacted in place: a trace's spans
	// are most of what building it holds.
	byStart := func(x, y *Span) int { return cmp.Compare(x.Start, y.Start) }
	if !spansSorted(spans, byStart) { // a Chrome trace's one thread's are
		slices.SortStableFunc(spans, func(x, y Span) int { return byStart(&x, &y) })
	}
	ids := newSpanIndex(spans)
	b.spans = spans[:0]
	for _, s := range spans {
		if !ids.add(s.ID, len(b.spans)) {
			b.Counts.Duplicates++
			continue
		}
		b.spans = append(b.spans, s)
	}
	b.Counts.Spans += len(b.spans)
	b.done = make([]bool, len(b.spans))
	ext := TraceExtent{Start: b.spans[0].Start}
	var roots, orphans []int
	parents := make([]int, len(b.spans)) // the parent's index, -1 for none
	b.first = make([]int, len(b.spans)+1)
	for i, s := range b.spans {
		ext.End = max(ext.End, s.End)
		parents[i] = -1
		switch p, known := ids.find(s.Parent); {
		case s.Parent == [8]byte{}:
			roots = append(roots, i)
		case known && s.Parent != s.ID:
			parents[i] = p
			b.first[p+1]++
		default:
			orphans = append(orphans, i)
		}
	}
	// Children listed by parent, counted then placed (in start order).
	for i := range b.spans {
		b.first[i+1] += b.first[i]
	}
	b.kids = make([]int, b.first[len(b.spans)])
	next := slices.Clone(b.first[:len(b.spans)])
	for i, p := range parents {
		if p >= 0 {
			b.kids[next[p]] = i
			next[p]++
		}
	}
	b.start = ext.Start
	if len(roots) > 0 {
		ext.Root, ext.HasRoot = b.spans[roots[0]], true
	}
	for _, i := range roots {
		b.stack = b.stack[:0]
		b.visit(i, b.spans[i].Start, b.spans[i].End, false)
	}
	visitOrphan := func(i int) {
		b.Counts.Orphans++
		b.stack = append(b.stack[:0], b.P.Intern(profile.Frame{Name: MissingParent}))
		b.visit(i, b.spans[i].Start, b.spans[i].End, false)
	}
	for _, i := range orphans {
		visitOrphan(i)
	}
	// Spans in a parent cycle are reached from no root: each is an orphan.
	for i := range b.spans {
		if !b.done[i] {
			visitOrphan(i)
		}
	}
	return ext
}

// visit adds span i's sample, its interval clipped to [lo, hi] (the
// parent's), then its children's.
func (b *SpanBuilder) visit(i int, lo, hi uint64, clip bool) {
	if b.done[i] {
		return
	}
	b.done[i] = true
	s := &b.spans[i]
	start, end := s.Start, s.End
	if clip && (start < lo || end > hi) {
		b.Counts.Clipped++
		start, end = min(max(start, lo), hi), max(min(end, hi), lo)
	}
	k := spanFrame{s.Service, s.Name, s.File, s.Line}
	frame, ok := b.frames[k]
	if !ok {
		frame = b.P.Intern(profile.Frame{Name: s.Service + ": " + s.Name, Module: s.Service, File: s.File, Line: s.Line})
		if b.frames == nil {
			b.frames = map[spanFrame]uint32{}
		}
		b.frames[k] = frame
	}
	b.stack = append(b.stack, frame)
	depth := len(b.stack)
	kids := b.kids[b.first[i]:b.first[i+1]]
	// The union of the children's intervals clipped to this span: kids
	// are in start order.
	var covered, reach uint64
	reach = start
	for _, k := range kids {
		c := &b.spans[k]
		cs, ce := min(max(c.Start, start), end), max(min(c.End, end), start)
		cs = max(cs, reach)
		if ce > cs {
			covered += ce - cs
			reach = ce
		}
	}
	if self := end - start - covered; self > 0 {
		b.P.Samples = append(b.P.Samples, profile.Sample{Stack: b.stackCopy(),
			Value: int64(self), Time: int64(start - b.start)}) // #nosec G115 -- durations and offsets of one trace, far below 2^63 ns
	}
	for _, k := range kids {
		b.visit(k, start, end, true)
		b.stack = b.stack[:depth]
	}
}

// spanIndex finds the spans of a trace by id: in a slice when the ids are
// 1 to n, as traceSpans numbers a Chrome trace's, else in a map.
type spanIndex struct {
	dense []int // at id-1, the span's index + 1 (0: none)
	byID  map[[8]byte]int
}

func newSpanIndex(spans []Span) spanIndex {
	for _, s := range spans {
		if id := binary.BigEndian.Uint64(s.ID[:]); id == 0 || id > uint64(len(spans)) {
			return spanIndex{byID: make(map[[8]byte]int, len(spans))}
		}
	}
	return spanIndex{dense: make([]int, len(spans))}
}

// add indexes span i by id, false when a span has that id already.
func (x spanIndex) add(id [8]byte, i int) bool {
	if x.byID != nil {
		if _, dup := x.byID[id]; dup {
			return false
		}
		x.byID[id] = i
		return true
	}
	at := &x.dense[binary.BigEndian.Uint64(id[:])-1] // 1 to n: newSpanIndex checked
	if *at != 0 {
		return false
	}
	*at = i + 1
	return true
}

// find is the index of the span of id.
func (x spanIndex) find(id [8]byte) (int, bool) {
	if x.byID != nil {
		i, ok := x.byID[id]
		return i, ok
	}
	n := binary.BigEndian.Uint64(id[:])
	if n == 0 || n > uint64(len(x.dense)) || x.dense[n-1] == 0 {
		return 0, false
	}
	return x.dense[n-1] - 1, true
}

// stackCopy is a copy of b.stack, a sample's.
func (b *SpanBuilder) stackCopy() []uint32 {
	n := len(b.stack)
	if cap(b.stacks)-len(b.stacks) < n {
		b.stacks = make([]uint32, 0, max(4096, n))
	}
	b.stacks = append(b.stacks, b.stack...)
	return b.stacks[len(b.stacks)-n : len(b.stacks) : len(b.stacks)]
}

// spansSorted is slices.IsSortedFunc for spans, comparing them in place
// (a span is 88 bytes).
func spansSorted(spans []Span, cmp func(x, y *Span) int) bool {
	for i := 1; i < len(spans); i++ {
		if cmp(&spans[i], &spans[i-1]) < 0 {
			return false
		}
	}
	return true
}
