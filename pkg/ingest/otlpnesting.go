package ingest

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxOTLPDepth bounds how deep the messages of an OTLP request may nest. The
// Collector's pdata decodes recursively, so a request of a few megabytes
// whose AnyValue arrays nest a million deep would overflow the stack (a
// fatal error, not a panic) or take hundreds of megabytes; a real request
// nests about 10 deep (request, resource, scope, span, attribute, value)
// plus two a level of nested attribute values.
const MaxOTLPDepth = 64

// maxJSONDepth bounds the brackets of OTLP/JSON: a message is an object,
// a repeated field an array, so a nested value takes three for two
// messages.
const maxJSONDepth = 2 * MaxOTLPDepth

// ErrTooDeep is CheckOTLPNesting's error.
var ErrTooDeep = errors.New("nested too deep")

// CheckOTLPNesting refuses an OTLP request, protobuf or JSON, that nests
// deeper than MaxOTLPDepth, before anything decodes it. It reads the wire
// format with no schema: a length-delimited field counts as a nested
// message when its bytes are a valid message, so the check holds for
// traces and profiles alike and may count a string that happens to read
// as a message, never less than the real depth. Its work is at most
// MaxOTLPDepth passes over the body and its stack MaxOTLPDepth frames.
func CheckOTLPNesting(body []byte, isJSON bool) error {
	if isJSON {
		return jsonNesting(body)
	}
	if _, deepest := wireDepth(body, 1); deepest > MaxOTLPDepth {
		return fmt.Errorf("%w: messages nest more than %d deep", ErrTooDeep, MaxOTLPDepth)
	}
	return nil
}

// wireDepth reads b as a message at depth: whether it is a valid one and
// how deep its messages nest, at most MaxOTLPDepth+1 (where it stops).
func wireDepth(b []byte, depth int) (valid bool, deepest int) {
	deepest = depth
	for len(b) > 0 {
		_, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false, 0
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(0, typ, b); n < 0 {
				return false, 0
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false, 0
		}
		b = b[n:]
		if depth > MaxOTLPDepth {
			continue // too deep already: only the validity matters now
		}
		if ok, d := wireDepth(v, depth+1); ok {
			deepest = max(deepest, d)
		}
	}
	return true, deepest
}

// jsonNesting counts the brackets of JSON outside its strings.
func jsonNesting(body []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxJSONDepth {
				return fmt.Errorf("%w: JSON nests more than %d deep", ErrTooDeep, maxJSONDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
