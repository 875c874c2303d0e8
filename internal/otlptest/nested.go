package otlptest

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// NestedTraces is a protobuf traces export request of one span (service
// "deep", version "v1", trace 1) whose attribute "deep" is an AnyValue
// array nested depth times around an AnyValue holding inner (its raw
// fields; nil: empty). The innermost AnyValue is 6 + 2 x depth messages
// deep (request, resource spans, scope spans, span, key-value, value). It is written with protowire, outside in,
// so that a million levels take a few megabytes and no recursion:
// pdata could not build it.
func NestedTraces(depth int, inner []byte) []byte {
	// sizes[k] is the size of the AnyValue k levels from the innermost.
	sizes := make([]int, depth+1)
	sizes[0] = len(inner)
	for k := 1; k <= depth; k++ {
		array := protowire.SizeTag(1) + protowire.SizeBytes(sizes[k-1]) // ArrayValue.values
		sizes[k] = protowire.SizeTag(5) + protowire.SizeBytes(array)    // AnyValue.array_value
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
	}
	keyValue := func(key string, valueSize int) []byte { // the head of a KeyValue, up to its value's bytes
		b := str(nil, 1, key)
		return protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.BytesType), uint64(valueSize)) // #nosec G115 -- a size
	}
	var span []byte
	tid, sid := TraceID(1), SpanID(1)
	span = protowire.AppendBytes(protowire.AppendTag(span, 1, protowire.BytesType), tid[:])
	span = protowire.AppendBytes(protowire.AppendTag(span, 2, protowire.BytesType), sid[:])
	span = str(span, 5, "deep")
	span = protowire.AppendFixed64(protowire.AppendTag(span, 7, protowire.Fixed64Type), Base)
	span = protowire.AppendFixed64(protowire.AppendTag(span, 8, protowire.Fixed64Type), Base+1000)
	attrHead := keyValue("deep", sizes[depth])
	attrSize := len(attrHead) + sizes[depth]
	spanSize := len(span) + protowire.SizeTag(9) + protowire.SizeBytes(attrSize)
	scopeSize := protowire.SizeTag(2) + protowire.SizeBytes(spanSize)
	var resource []byte
	for _, kv := range [][2]string{{"service.name", "deep"}, {"service.version", "v1"}} {
		value := str(nil, 1, kv[1])
		attr := append(keyValue(kv[0], len(value)), value...)
		resource = protowire.AppendBytes(protowire.AppendTag(resource, 1, protowire.BytesType), attr)
	}
	rs := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), resource)
	rsSize := len(rs) + protowire.SizeTag(2) + protowire.SizeBytes(scopeSize)

	open := func(b []byte, num protowire.Number, size int) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(size)) // #nosec G115 -- a size
	}
	out := make([]byte, 0, rsSize+16)
	out = open(out, 1, rsSize) // ExportTraceServiceRequest.resource_spans
	out = append(out, rs...)
	out = open(out, 2, scopeSize) // ResourceSpans.scope_spans
	out = open(out, 2, spanSize)  // ScopeSpans.spans
	out = append(out, span...)
	out = open(out, 9, attrSize) // Span.attributes
	out = append(out, attrHead...)
	for k := depth; k >= 1; k-- {
		out = open(out, 5, protowire.SizeTag(1)+protowire.SizeBytes(sizes[k-1]))
		out = open(out, 1, sizes[k-1])
	}
	return append(out, inner...)
}
