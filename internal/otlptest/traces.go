package otlptest

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span is one span of a generated trace: ids are small numbers (0: none),
// times nanoseconds from Base.
type Span struct {
	Trace, ID, Parent uint64
	Name              string
	Start, End        uint64
	Attrs             map[string]string
	IntAttrs          map[string]int64
}

// Resource is a service's spans.
type Resource struct {
	Attrs map[string]string // service.name, service.version, ...
	Spans []Span
}

// Base is the time generated spans count from.
const Base = uint64(1_780_000_000_000_000_000)

// TraceID and SpanID make ids from numbers.
func TraceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	for i := range 8 {
		id[15-i] = byte(n >> (8 * i))
	}
	id[0] = 0x7a
	return id
}

func SpanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	if n == 0 {
		return id
	}
	for i := range 8 {
		id[7-i] = byte(n >> (8 * i))
	}
	return id
}

// Traces builds OTLP traces with pdata.
func Traces(resources ...Resource) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		for k, v := range r.Attrs {
			rs.Resource().Attributes().PutStr(k, v)
		}
		ss := rs.ScopeSpans().AppendEmpty()
		for _, s := range r.Spans {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(TraceID(s.Trace))
			sp.SetSpanID(SpanID(s.ID))
			sp.SetParentSpanID(SpanID(s.Parent))
			sp.SetName(s.Name)
			sp.SetStartTimestamp(pcommon.Timestamp(Base + s.Start))
			sp.SetEndTimestamp(pcommon.Timestamp(Base + s.End))
			for k, v := range s.Attrs {
				sp.Attributes().PutStr(k, v)
			}
			for k, v := range s.IntAttrs {
				sp.Attributes().PutInt(k, v)
			}
		}
	}
	return td
}

// Service is the attributes of a service's resource.
func Service(name, version string) map[string]string {
	return map[string]string{"service.name": name, "service.version": version}
}
