package ingest

import (
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// OTLPSpan is what a span flame graph needs of one span. Service is the
// resource's service.name; File and Line are where the span is made, from
// the code.file.path and code.line.number attributes (or the older
// code.filepath and code.lineno); Start and End are Unix nanoseconds.
type OTLPSpan struct {
	Span
	Trace [16]byte
	// Version is the resource's service.version; Group the run
	// attribute's value, if asked for.
	Version, Group string
}

// RunID is the run a span belongs to: its group, else its trace id.
func (s *OTLPSpan) RunID() string {
	if s.Group != "" {
		return s.Group
	}
	return hex.EncodeToString(s.Trace[:])
}

// RunKey identifies a span's run: its trace id when traces are runs;
// when an attribute groups spans into runs, its value with the span's app
// and build (service.name and service.version), so that run "1" of two
// apps, or of two builds, stays two runs.
func (s *OTLPSpan) RunKey() string {
	if s.Group == "" {
		return s.RunID()
	}
	return s.Service + "\x00" + s.Version + "\x00" + s.Group
}

// TraceSummary counts what building span runs met: the traces, and the
// spans as SpanCounts counts them.
type TraceSummary struct {
	Spans, Traces                int
	Orphans, Clipped, Duplicates int
}

// Add adds o's counts to s.
func (s *TraceSummary) Add(o TraceSummary) {
	s.Spans += o.Spans
	s.Traces += o.Traces
	s.Orphans += o.Orphans
	s.Clipped += o.Clipped
	s.Duplicates += o.Duplicates
}

func (s TraceSummary) String() string {
	return fmt.Sprintf("%d spans in %d traces, %d with a missing parent, %d clipped into their parent (clock skew), %d duplicates",
		s.Spans, s.Traces, s.Orphans, s.Clipped, s.Duplicates)
}

// SpansOf lists the spans of td. runAttribute, if not "", names the span
// or resource attribute whose value groups spans into runs (OTLPSpan.Group).
// A span with an empty trace or span id, or that ends before it starts,
// is an error.
func SpansOf(td ptrace.Traces, runAttribute string) ([]OTLPSpan, error) {
	out := make([]OTLPSpan, 0, td.SpanCount())
	for ri, rs := range td.ResourceSpans().All() {
		res := rs.Resource().Attributes()
		service, version := attr(res, "service.name"), attr(res, "service.version")
		group := ""
		if runAttribute != "" {
			group = attr(res, runAttribute)
		}
		for si, ss := range rs.ScopeSpans().All() {
			for i, sp := range ss.Spans().All() {
				s := OTLPSpan{Span: Span{ID: sp.SpanID(), Parent: sp.ParentSpanID(), Service: service, Name: sp.Name(),
					Start: uint64(sp.StartTimestamp()), End: uint64(sp.EndTimestamp())},
					Trace: sp.TraceID(), Version: version, Group: group}
				s.File, s.Line = codePosition(sp.Attributes())
				if runAttribute != "" {
					if g := attr(sp.Attributes(), runAttribute); g != "" {
						s.Group = g
					}
				}
				switch {
				case pcommon.TraceID(s.Trace).IsEmpty():
					return nil, fmt.Errorf("resource %d scope %d span %d: empty trace id", ri, si, i)
				case pcommon.SpanID(s.ID).IsEmpty():
					return nil, fmt.Errorf("resource %d scope %d span %d: empty span id", ri, si, i)
				case s.End < s.Start:
					return nil, fmt.Errorf("resource %d scope %d span %d (%q): ends %d ns before it starts", ri, si, i, s.Name, s.Start-s.End)
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// codePosition is a span's source file and line from the semantic
// conventions' code attributes, current or older.
func codePosition(m pcommon.Map) (string, int64) {
	file := attr(m, "code.file.path")
	if file == "" {
		file = attr(m, "code.filepath")
	}
	for _, k := range []string{"code.line.number", "code.lineno"} {
		if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeInt {
			return file, max(v.Int(), 0)
		}
	}
	return file, 0
}

// OTLPSpans reads the spans of OTLP traces data, a file or a request
// body, as the otlp-traces row does before it makes runs of them (see
// SpansOf). An empty body is a request of no spans.
func OTLPSpans(data []byte, name string, o RunOptions) ([]OTLPSpan, error) {
	if len(data) == 0 {
		return nil, nil
	}
	batches, err := DecodeOTLPTraces(data, name, o.MaxSize)
	if err != nil {
		return nil, err
	}
	return spansOf(batches, o.RunAttribute, name)
}

// spansOf lists the spans of batches, the messages of one input.
func spansOf(batches []ptrace.Traces, runAttribute, name string) ([]OTLPSpan, error) {
	var all []OTLPSpan
	for i, td := range batches {
		spans, err := SpansOf(td, runAttribute)
		if err != nil {
			return nil, fmt.Errorf("%s: message %d: %w", name, i+1, err)
		}
		all = append(all, spans...)
	}
	return all, nil
}

// TraceRuns builds the span runs of trace files (see SpanRun).
func TraceRuns(o RunOptions, name string, batches ...ptrace.Traces) ([]Run, TraceSummary, error) {
	var sum TraceSummary
	spans, err := spansOf(batches, o.RunAttribute, name)
	if err != nil {
		return nil, sum, err
	}
	byRun := map[string][]OTLPSpan{}
	var order []string
	for _, s := range spans {
		key := o.Run
		switch {
		case key != "":
		case o.App != "" || o.Build != "": // they name every run: the group alone tells runs apart
			key = s.RunID()
		default:
			key = s.RunKey()
		}
		if byRun[key] == nil {
			order = append(order, key)
		}
		byRun[key] = append(byRun[key], s)
	}
	runs := make([]Run, 0, len(order))
	for _, key := range order {
		id := o.Run
		if id == "" {
			id = byRun[key][0].RunID()
		}
		r, s, err := SpanRun(byRun[key], id, o, name)
		sum.Add(s)
		if err != nil {
			return nil, sum, err
		}
		if r.Profile != nil {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, sum, fmt.Errorf("%s: no span with a duration", name)
	}
	return runs, sum, nil
}

// SpanRun builds run id from its spans (of one or more traces): a span
// is a frame "service: name", its stack the path of frames from its
// trace's root, its value its self time — its duration less the union of
// its children's intervals, each clipped to it — and its first-seen its
// start offset in its trace. A span whose parent is missing is a root
// under MissingParent; a child outside its parent is clipped to it. The
// sample type is wall, in nanoseconds. App and build are the first root
// span's service.name and service.version unless o gives them. A run
// whose spans all have no self time has a nil Profile.
func SpanRun(spans []OTLPSpan, id string, o RunOptions, name string) (Run, TraceSummary, error) {
	r := Run{App: o.App, Build: o.Build, Run: id}
	b := NewSpanBuilder()
	traces := map[[16]byte][]OTLPSpan{}
	var order [][16]byte
	for _, s := range spans {
		if traces[s.Trace] == nil {
			order = append(order, s.Trace)
		}
		traces[s.Trace] = append(traces[s.Trace], s)
	}
	var first, last uint64
	var root *OTLPSpan
	for _, t := range order {
		ts := traces[t]
		core := make([]Span, len(ts))
		for i := range ts {
			core[i] = ts[i].Span
		}
		ext := b.Trace(core)
		if ext.HasRoot && (root == nil || ext.Root.Start < root.Start) {
			root = &ts[slices.IndexFunc(ts, func(s OTLPSpan) bool { return s.ID == ext.Root.ID })]
		}
		if first == 0 || ext.Start < first {
			first = ext.Start
		}
		last = max(last, ext.End)
	}
	c := b.Counts
	sum := TraceSummary{Spans: c.Spans, Traces: len(order), Orphans: c.Orphans, Clipped: c.Clipped, Duplicates: c.Duplicates}
	if root == nil && len(spans) > 0 {
		root = &spans[0]
	}
	if root != nil {
		if r.App == "" {
			r.App = root.Service
		}
		if r.Build == "" {
			r.Build = root.Version
		}
	}
	switch {
	case r.App == "":
		return r, sum, fmt.Errorf("%s: run %s: no app: the root span's resource has no service.name (or give the app)", name, id)
	case r.Build == "":
		return r, sum, fmt.Errorf("%s: run %s: no build: the root span's resource has no service.version (or give the build)", name, id)
	}
	if len(b.P.Samples) == 0 {
		return r, sum, nil
	}
	b.P.Start = time.Unix(0, int64(first)).UTC() // #nosec G115 -- nanoseconds since 1970 below 2^63 until 2262
	b.P.Duration = time.Duration(last - first)   // #nosec G115 -- a run's span, far below 2^63 ns
	p, err := Check(b.P, name)
	if err != nil {
		return r, sum, err
	}
	r.Profile = p
	return r, sum, nil
}

// TracesOf is the inverse of SpansOf: spans as OTLP traces, a resource
// per app and build, the group under runAttribute and the source
// position under the current code attributes, so that SpansOf reads
// them back as they were.
func TracesOf(spans []OTLPSpan, runAttribute string) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[[2]string]ptrace.SpanSlice{}
	for _, s := range spans {
		ss, ok := scopes[[2]string{s.Service, s.Version}]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.Service)
			rs.Resource().Attributes().PutStr("service.version", s.Version)
			ss = rs.ScopeSpans().AppendEmpty().Spans()
			scopes[[2]string{s.Service, s.Version}] = ss
		}
		sp := ss.AppendEmpty()
		sp.SetTraceID(s.Trace)
		sp.SetSpanID(s.ID)
		sp.SetParentSpanID(s.Parent)
		sp.SetName(s.Name)
		sp.SetStartTimestamp(pcommon.Timestamp(s.Start))
		sp.SetEndTimestamp(pcommon.Timestamp(s.End))
		if runAttribute != "" && s.Group != "" {
			sp.Attributes().PutStr(runAttribute, s.Group)
		}
		if s.File != "" {
			sp.Attributes().PutStr("code.file.path", s.File)
		}
		if s.Line != 0 {
			sp.Attributes().PutInt("code.line.number", s.Line)
		}
	}
	return td
}
