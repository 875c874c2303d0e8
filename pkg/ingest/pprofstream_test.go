package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	rpprof "runtime/pprof"
	"strings"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/profile"
)

// libraryPprof reads data as github.com/google/pprof reads it whole:
// ParseData, RemoveUninteresting, then the same conversion. It is the
// reference the stream is held to.
func libraryPprof(data []byte, sampleType string) (*profile.Profile, error) {
	src, err := pprof.ParseData(data)
	if err != nil {
		return nil, err
	}
	if err := src.RemoveUninteresting(); err != nil {
		return nil, err
	}
	src.DropFrames, src.KeepFrames = "", "" // applied
	p, err := convertPprof(src, "x", sampleType, len(src.Sample), func(f pprofSampleFunc) error {
		for i, s := range src.Sample {
			if err := f(i, s.Location, s.Value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Check(p, "x")
}

// samePprof says how a run read by the stream differs from the
// library's, or "".
func samePprof(got, want *profile.Profile) string {
	switch {
	case got.SampleType != want.SampleType || got.Unit != want.Unit:
		return fmt.Sprintf("sample type %s/%s, want %s/%s", got.SampleType, got.Unit, want.SampleType, want.Unit)
	case !got.Start.Equal(want.Start) || got.Duration != want.Duration:
		return fmt.Sprintf("start %v, duration %v; want %v, %v", got.Start, got.Duration, want.Start, want.Duration)
	case !reflect.DeepEqual(got.Frames, want.Frames):
		return fmt.Sprintf("%d frames, want %d, or they differ", len(got.Frames), len(want.Frames))
	case !reflect.DeepEqual(got.Samples, want.Samples):
		return fmt.Sprintf("%d samples, want %d, or they differ", len(got.Samples), len(want.Samples))
	}
	return ""
}

// checkStreamAgainstLibrary reads data both ways, for each sample type.
func checkStreamAgainstLibrary(t *testing.T, what string, data []byte, sampleTypes ...string) {
	t.Helper()
	for _, st := range append([]string{""}, sampleTypes...) {
		want, werr := libraryPprof(data, st)
		got, gerr := Options{Format: Pprof, SampleType: st}.Parse(bytes.NewReader(data), "x")
		switch {
		case werr != nil && gerr != nil:
		case werr != nil:
			t.Errorf("%s (%q): read, pprof refuses it: %v", what, st, werr)
		case gerr != nil:
			t.Errorf("%s (%q): %v; pprof reads it", what, st, gerr)
		default:
			if d := samePprof(got, want); d != "" {
				t.Errorf("%s (%q): %s", what, st, d)
			}
		}
	}
}

// TestPprofStreamAsLibrary holds the stream equal to google/pprof on every
// pprof file in the test data, on the Go runtime's own profiles and on
// profiles that use what Go's writer does not: drop and keep frames,
// unpacked numbers, fields out of order and repeated, unknown fields.
func TestPprofStreamAsLibrary(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/pprof/*.gz", "testdata/timeboxed/*.gz"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", glob))
		files = append(files, m...)
	}
	if len(files) < 16 {
		t.Fatalf("%d pprof files in the test data", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkStreamAgainstLibrary(t, f, data)
		checkStreamAgainstLibrary(t, f+" inflated", testkit.Gunzip(t, data))
	}
	legacy, _ := filepath.Glob("../../testdata/pprof/legacy/*")
	for _, f := range legacy { // read whole by google/pprof, then pruned as the stream prunes
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkStreamAgainstLibrary(t, f, data, "contentions", "delay", "inuse_space", "alloc_objects")
	}
	for name, data := range runtimeProfiles(t) {
		checkStreamAgainstLibrary(t, name, data, "alloc_space", "inuse_objects", "contentions", "delay")
	}
	hand := handWrittenPprof(t)
	for name, data := range hand {
		checkStreamAgainstLibrary(t, name, data)
	}
	// The rules do prune: each reads otherwise than the profile without.
	whole := folded(t, hand["no rules"])
	for _, rule := range []string{"drop", "drop, keep", "simplified names"} {
		if got := folded(t, hand[rule]); got == whole {
			t.Errorf("%s: nothing pruned: %s", rule, got)
		}
	}
}

// folded is data's run as folded stacks.
func folded(t *testing.T, data []byte) string {
	p, err := Parse(bytes.NewReader(data), "x", Pprof)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteFolded(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// runtimeProfiles are the Go runtime's own profiles of this test: CPU
// (with inlined frames), heap, goroutine, mutex and block.
func runtimeProfiles(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)
	defer runtime.SetMutexProfileFraction(0)
	defer runtime.SetBlockProfileRate(0)
	var cpu bytes.Buffer
	if err := rpprof.StartCPUProfile(&cpu); err != nil {
		t.Fatal(err)
	}
	keep := 0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		keep += len(strings.Repeat("x", 1+keep%512)) // allocates, and spins
	}
	rpprof.StopCPUProfile()
	out["cpu"] = cpu.Bytes()
	for _, kind := range []string{"heap", "allocs", "goroutine", "mutex", "block"} {
		var b bytes.Buffer
		if err := rpprof.Lookup(kind).WriteTo(&b, 0); err != nil {
			t.Fatal(err)
		}
		out[kind] = b.Bytes()
	}
	return out
}

// handWrittenPprof are profiles written field by field.
func handWrittenPprof(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	fn := func(id uint64, name string) *pprof.Function {
		return &pprof.Function{ID: id, Name: name, Filename: "/src/a.cc", StartLine: int64(id)}
	}
	names := []string{"main", ".run(int)", "(anonymous namespace)::helper(int)", "Widget::operator()(int)", "drop_me", "lib::keep_me", "leaf"}
	var fns []*pprof.Function
	var locs []*pprof.Location
	bin := &pprof.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/bin/app"}
	for i, n := range names {
		fns = append(fns, fn(uint64(i+1), n))
		locs = append(locs, &pprof.Location{ID: uint64(i + 1), Mapping: bin, Address: uint64(0x1000 + 16*i), Line: []pprof.Line{{Function: fns[i], Line: int64(i)}}})
	}
	// A location of two lines: leaf inlined into drop_me.
	locs = append(locs, &pprof.Location{ID: 8, Mapping: bin, Address: 0x2000, Line: []pprof.Line{{Function: fns[6]}, {Function: fns[4]}}})
	stack := func(ids ...int) []*pprof.Location {
		var s []*pprof.Location
		for _, id := range ids {
			s = append(s, locs[id-1])
		}
		return s
	}
	for _, rule := range []struct{ name, drop, keep string }{
		{"no rules", "", ""},
		{"drop", "drop_.*|main", ""},
		{"drop, keep", "drop_.*|lib::.*", "lib::keep_me"},
		{"simplified names", `run|\(anonymous namespace\)::helper|Widget::operator\(\)`, ""},
	} {
		p := &pprof.Profile{
			SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			DropFrames: rule.drop, KeepFrames: rule.keep, Mapping: []*pprof.Mapping{bin}, Location: locs, Function: fns,
			Sample: []*pprof.Sample{
				{Location: stack(7, 5, 2, 1), Value: []int64{1, 10}},
				{Location: stack(8, 2, 1), Value: []int64{2, 20}, Label: map[string][]string{"thread": {"t1"}}},
				{Location: stack(7, 6, 3, 4, 2, 1), Value: []int64{3, 30}, NumLabel: map[string][]int64{"bytes": {64}}},
				{Location: stack(6, 5, 3, 2, 1), Value: []int64{4, 40}},
			},
			TimeNanos: 1e18, DurationNanos: 5e9, Period: 10, PeriodType: &pprof.ValueType{Type: "cpu", Unit: "nanoseconds"},
		}
		var b bytes.Buffer
		if err := p.WriteUncompressed(&b); err != nil {
			t.Fatal(err)
		}
		out[rule.name] = b.Bytes()
	}
	// Unpacked repeated numbers, fields out of order and repeated (the
	// last period type wins), unknown fields and wire types pprof skips.
	var m []byte
	msg := func(num protowire.Number, body []byte) {
		m = protowire.AppendTag(m, num, protowire.BytesType)
		m = protowire.AppendBytes(m, body)
	}
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}
	var sample []byte
	sample = varint(sample, 2, 7)   // value, unpacked, before the locations
	sample = varint(sample, 1, 2)   // location 2 (leaf)
	sample = varint(sample, 1, 1)   // location 1
	sample = varint(sample, 9, 123) // unknown
	msg(2, sample)
	msg(20, []byte("unknown message"))
	m = protowire.AppendTag(m, 21, protowire.Fixed32Type)
	m = protowire.AppendFixed32(m, 7)
	msg(4, varint(varint(varint(nil, 3, 0x10), 1, 2), 4, 0)) // address before id; a line with no fields yet
	loc := varint(nil, 1, 1)
	msg(4, protowire.AppendBytes(protowire.AppendTag(loc, 4, protowire.BytesType), varint(nil, 1, 1)))
	msg(5, varint(varint(nil, 2, 2), 1, 1))
	for _, s := range []string{"", "main", "samples", "count"} {
		msg(6, []byte(s))
	}
	msg(1, varint(varint(nil, 1, 2), 2, 3))
	msg(11, varint(nil, 1, 1))
	msg(11, varint(nil, 1, 2))
	out["hand-encoded"] = m
	return out
}

// TestPprofStreamRefuses holds the stream's errors: where the library
// refuses a protobuf the stream does too, naming the offset of the field
// that breaks when it is the wire's fault.
func TestPprofStreamRefuses(t *testing.T) {
	good := handWrittenPprof(t)["no rules"]
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"a sample as a varint", cat(good, tag(2, protowire.VarintType), []byte{1}), fmt.Sprintf("offset %d: sample: type mismatch", len(good))},
		{"a second time", cat(good, protowire.AppendVarint(tag(9, protowire.VarintType), 5)), "concatenated profiles detected"},
		{"a string index outside the table", cat(good, protowire.AppendVarint(tag(14, protowire.VarintType), 999)), "string index 999"},
		{"an unknown location", cat(good, protowire.AppendBytes(tag(2, protowire.BytesType),
			cat(protowire.AppendVarint(tag(1, protowire.VarintType), 99), protowire.AppendBytes(tag(2, protowire.BytesType), []byte{1, 1})))), "no location 99"},
		{"field number 0", cat([]byte{0, 0}, good), "offset 0: not a pprof profile (malformed protobuf)"},
		{"a length past the end", cat(good, tag(2, protowire.BytesType), protowire.AppendVarint(nil, 1<<29)), fmt.Sprintf("offset %d: truncated protobuf", len(good))},
		{"a wire type 3", cat(good, tag(5, protowire.StartGroupType)), fmt.Sprintf("offset %d: not a pprof profile", len(good))},
	}
	for _, tc := range tests {
		_, err := Parse(bytes.NewReader(tc.in), "x.pb", Pprof)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if tc.name != "field number 0" {
			if _, err := libraryPprof(tc.in, ""); err == nil {
				t.Errorf("%s: pprof reads it", tc.name)
			}
		}
	}
}

// FuzzPprofStream holds the stream to google/pprof on any protobuf: what
// the library reads the stream reads the same, and what it refuses the
// stream refuses, but for a field numbered 0, which the library skips
// and the stream refuses (protobuf has no field 0).
func FuzzPprofStream(f *testing.F) {
	for _, data := range handWrittenPprof(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		head := data[:min(len(data), detectSize)]
		if len(data) == 0 || isText(head) || legacyCPU(head) || bytes.HasPrefix(data, gzipMagic) {
			return // the legacy formats' and gzip's
		}
		want, werr := libraryPprof(data, "")
		got, gerr := Parse(bytes.NewReader(data), "x", Pprof)
		var e *Error
		switch {
		case werr != nil && gerr != nil:
		case werr != nil:
			t.Fatalf("read, pprof refuses it: %v", werr)
		case gerr != nil:
			if errors.As(gerr, &e) && e.Offset >= 0 {
				if tag, n := protowire.ConsumeVarint(data[e.Offset:]); n > 0 && tag>>3 == 0 {
					return
				}
			}
			t.Fatalf("%v; pprof reads it", gerr)
		default:
			if d := samePprof(got, want); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// TestSharedStacksRepairedOnce: samples that share a stack (recentStacks)
// keep it when invalid UTF-8 in names is repaired and frames merge.
func TestSharedStacksRepairedOnce(t *testing.T) {
	var fns []*pprof.Function
	var locs []*pprof.Location
	for i, n := range []string{"a\xff", "a\xfe", "b"} {
		fns = append(fns, &pprof.Function{ID: uint64(i + 1), Name: n})
		locs = append(locs, &pprof.Location{ID: uint64(i + 1), Line: []pprof.Line{{Function: fns[i]}}})
	}
	src := &pprof.Profile{SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}}, Function: fns, Location: locs,
		Sample: []*pprof.Sample{
			{Location: locs[0:1], Value: []int64{3}}, {Location: locs[1:2], Value: []int64{4}},
			{Location: locs[2:3], Value: []int64{1}}, {Location: locs[2:3], Value: []int64{2}},
		}}
	var b bytes.Buffer
	if err := src.Write(&b); err != nil {
		t.Fatal(err)
	}
	if got, want := folded(t, b.Bytes()), "a\uFFFD 7\nb 3\n"; got != want {
		t.Errorf("read as %q, want %q", got, want)
	}
}
