package ingest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// Values that add up past int64 are refused instead of wrapping around.
func TestSumOverflow(t *testing.T) {
	const max = "9223372036854775807"
	if _, err := Parse(strings.NewReader("a "+max+"\n"), "x.folded", Folded); err != nil {
		t.Fatalf("the int64 maximum alone: %v", err)
	}
	_, err := Parse(strings.NewReader("a "+max+"\nb;c "+max+"\n"), "x.folded", Folded)
	want := "x.folded: values add up past the int64 maximum 9223372036854775807 at sample 2"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// zeroBomb is a gzip file that inflates to 4 GiB of zeros: 4096 members of
// 1 MiB each (gzip readers read concatenated members as one stream).
func zeroBomb(t *testing.T) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(member.Bytes(), 4096)
}

// A 4 GiB zero-filled .pb.gz fails at once with a clear error, without
// inflating much of it.
func TestDecompressionBounded(t *testing.T) {
	bomb := zeroBomb(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(bytes.NewReader(bomb), "zeros.pb.gz", Auto)
	runtime.ReadMemStats(&after)
	want := "zeros.pb.gz: offset 0: not a pprof profile (malformed protobuf) (decompressed)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB to refuse it", alloc>>20)
	}
}

// Invalid UTF-8 in names becomes U+FFFD, as JSON output of a query shows
// it; names equal after that are one frame.
func TestInvalidUTF8(t *testing.T) {
	p, err := Parse(strings.NewReader("a\xff;b 1\na\xfe;b 2\n"), "x.folded", Folded)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Frames) != 2 || p.Frames[0].Name != "a\uFFFD" || !utf8.ValidString(p.Frames[1].Name) {
		t.Fatalf("frames %+v", p.Frames)
	}
	if got := foldedCounts(p); len(got) != 1 || got["a\uFFFD;b"] != 3 {
		t.Errorf("stacks %v", got)
	}
}

// A file read as a stream is bounded by what its run would hold, not by
// its bytes: past maxItems samples, nodes or events it is refused where
// it passes the bound.
func TestStreamedItemsBounded(t *testing.T) {
	maxItems = 3
	t.Cleanup(func() { maxItems = MaxItems })
	nodes := func(n int) string {
		s := `{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]}`
		for id := 2; id <= n; id++ {
			s += fmt.Sprintf(`,{"id":%d,"callFrame":{"functionName":"f%d"}}`, id, id)
		}
		return `{"nodes":[` + s + `],"samples":`
	}
	x := `{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10}`
	tests := []struct {
		name, in string
		format   Format
		want     string // "" for a file within the bound
	}{
		{"samples within", nodes(3) + `[2,2,2]}`, CPUProfile, ""},
		{"samples past", nodes(3) + `[2,2,2,2]}`, CPUProfile, "more than 3 samples"},
		{"nodes past", nodes(4) + `[2]}`, CPUProfile, "more than 3 nodes"},
		{"events within", "[" + strings.Repeat(x+",", 2) + x + "]", TraceEvent, ""},
		{"events past", `{"traceEvents":[` + strings.Repeat(x+",", 3) + x + "]}", TraceEvent, "more than 3 trace events"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "x", tc.format)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			// Refused at the end of the last item within the bound.
			at := strings.LastIndex(tc.in, "},{") + 1
			if tc.format == CPUProfile && strings.Contains(tc.want, "samples") {
				at = strings.LastIndex(tc.in, ",")
			}
			want := fmt.Sprintf("x: offset %d: %s: more than a run holds", at, tc.want)
			if err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}
