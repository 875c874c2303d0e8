package ingest

import (
	"cmp"
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
	// of the trace being built
	spans    []Span
	children map[[8]byte][]int
	done     []bool
	start    uint64
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
	slices.SortStableFunc(spans, func(x, y Span) int { return cmp.Compare(x.Start, y.Start) })
	ids := make(map[[8]byte]int, len(spans))
	b.spans = spans[:0]
	for _, s := range spans {
		if _, dup := ids[s.ID]; dup {
			b.Counts.Duplicates++
			continue
		}
		ids[s.ID] = len(b.spans)
		b.spans = append(b.spans, s)
	}
	b.Counts.Spans += len(b.spans)
	b.children = make(map[[8]byte][]int, len(b.spans))
	b.done = make([]bool, len(b.spans))
	ext := TraceExtent{Start: b.spans[0].Start}
	var roots, orphans []int
	for i, s := range b.spans {
		ext.End = max(ext.End, s.End)
		switch _, known := ids[s.Parent]; {
		case s.Parent == [8]byte{}:
			roots = append(roots, i)
		case known && s.Parent != s.ID:
			b.children[s.Parent] = append(b.children[s.Parent], i)
		default:
			orphans = append(orphans, i)
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
	kids := b.children[s.ID]
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
		b.P.Samples = append(b.P.Samples, profile.Sample{Stack: slices.Clone(b.stack),
			Value: int64(self), Time: int64(start - b.start)}) // #nosec G115 -- durations and offsets of one trace, far below 2^63 ns
	}
	for _, k := range kids {
		b.visit(k, start, end, true)
		b.stack = b.stack[:depth]
	}
}
