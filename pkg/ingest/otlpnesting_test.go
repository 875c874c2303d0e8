package ingest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/flamediff/flamediff/internal/otlptest"
)

// maxArrays is the deepest attribute value NestedTraces makes that
// CheckOTLPNesting takes: 6 + 2 x 29 = 64 messages.
const maxArrays = (MaxOTLPDepth - 6) / 2

// TestCheckOTLPNesting: pdata reads the nested requests CheckOTLPNesting takes, to
// the depth NestedTraces built (an independent count: pdata's own tree);
// one level more is refused, and so is the 1.6M-deep request of 13 MB that
// overflowed pdata's stack; real requests pass, in both encodings.
func TestCheckOTLPNesting(t *testing.T) {
	for _, depth := range []int{0, 1, maxArrays} {
		body := otlptest.NestedTraces(depth, nil)
		if err := CheckOTLPNesting(body, false); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		if err != nil {
			t.Fatalf("depth %d: pdata: %v", depth, err)
		}
		v, _ := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get("deep")
		n := 0
		for ; v.Type() == pcommon.ValueTypeSlice && v.Slice().Len() == 1; n++ {
			v = v.Slice().At(0)
		}
		if n != depth {
			t.Fatalf("pdata read %d levels, want %d", n, depth)
		}
		js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckOTLPNesting(js, true); err != nil {
			t.Errorf("depth %d as JSON: %v", depth, err)
		}
	}
	for _, depth := range []int{maxArrays + 1, 1_600_000} {
		body := otlptest.NestedTraces(depth, nil)
		if err := CheckOTLPNesting(body, false); !errors.Is(err, ErrTooDeep) {
			t.Errorf("depth %d (%d bytes): %v, want ErrTooDeep", depth, len(body), err)
		}
	}
	deepJSON := strings.Repeat(`{"arrayValue":{"values":[`, 100_000)
	if err := CheckOTLPNesting([]byte(`{"resourceSpans":[`+deepJSON), true); !errors.Is(err, ErrTooDeep) {
		t.Errorf("deep JSON: %v", err)
	}
	if err := CheckOTLPNesting([]byte(`{"a":"`+strings.Repeat(`[{\"`, 1000)+`"}`), true); err != nil {
		t.Errorf("brackets inside a JSON string: %v", err)
	}
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(1, 2)), 1, "v1", 0.1, nil)...)
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	js, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if CheckOTLPNesting(pb, false) != nil || CheckOTLPNesting(js, true) != nil {
		t.Error("a scenario trace refused")
	}
	for name, body := range otlptest.Encodings(t, otlptest.FromPprof(otlptest.SmallPprof(), "a", "b", "r")) {
		if err := CheckOTLPNesting(body, bytes.HasPrefix(body, []byte("{"))); err != nil {
			t.Errorf("profiles %s: %v", name, err)
		}
	}
}

// FuzzCheckOTLPNesting: whatever the body, CheckOTLPNesting returns; a request
// whose attribute nests deeper than MaxOTLPDepth is refused whatever its
// innermost value holds, and what it takes pdata decodes without
// crashing (a stack overflow would end the fuzzer).
func FuzzCheckOTLPNesting(f *testing.F) {
	f.Add(uint16(3), []byte{})
	f.Add(uint16(maxArrays), []byte{0x0a, 0x01, 'x'})
	f.Add(uint16(maxArrays+1), []byte{0x2a, 0x00})
	f.Add(uint16(0), otlptest.NestedTraces(2, nil))
	f.Fuzz(func(t *testing.T, depth uint16, inner []byte) {
		for _, body := range [][]byte{otlptest.NestedTraces(int(depth), inner), inner} {
			err := CheckOTLPNesting(body, false)
			if int(depth) > maxArrays && len(body) > len(inner) && !errors.Is(err, ErrTooDeep) {
				t.Fatalf("depth %d taken: %v", depth, err)
			}
			if err == nil {
				_, _ = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
			}
			if CheckOTLPNesting(body, true) == nil {
				_, _ = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
			}
		}
	})
}
