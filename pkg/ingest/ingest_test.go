package ingest

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"auto", Auto, false}, {"", Auto, false}, {"pprof", Pprof, false},
		{"folded", Folded, false}, {"perf", Perf, false}, {"PPROF", "", true}, {"json", "", true},
	}
	for _, tc := range tests {
		got, err := ParseFormat(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestDetect(t *testing.T) {
	gz := testkit.ReadTestdata(t, "pprof", "base-run1.pb.gz")
	tests := []struct {
		name string
		in   []byte
		want Format
	}{
		{"gzipped pprof", gz, Pprof},
		{"raw pprof", testkit.Gunzip(t, gz), Pprof},
		{"binary junk", []byte{0x00, 0x01, 0xfe, 'x'}, Pprof},
		{"folded", []byte("main;run 12\nmain;run;leaf 3\n"), Folded},
		{"folded with a header-like line", []byte("java 1234 5\nmain;b 1\n"), Folded},
		{"folded reference file", testkit.ReadTestdata(t, "perf-script/perf-vertx-stacks-01.folded"), Folded},
		{"perf with header", testkit.ReadTestdata(t, "perf-script/perf-java-faults-01.perf.txt"), Perf},
		{"perf without header", []byte("dd 29776 666709.771979: 10101010 cpu-clock:\n\t 7f read (/lib/libc.so)\n\n"), Perf},
		{"perf event without stack", []byte("dd 29776 666709.771979: cpu-clock: \n\ndd 29776 666709.8: cpu-clock: \n"), Perf},
		{"perf comments only", []byte("# ========\n# captured on: today\n"), Perf},
		{"callgrind", []byte("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n"), Callgrind},
		{"V8 CPU profile", []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[]}`), CPUProfile},
		{"speedscope", []byte(`{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": []}`), Speedscope},
		{"cProfile stats", testkit.ReadTestdata(t, "formats/app.prof"), CProfile},
		{"marshal dict keyed by pairs", []byte("\xfb)\x02z\x01ai\x01\x00\x00\x00N0"), Pprof},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := detect(tc.in, "x"); err != nil || got.Name != tc.want {
				t.Errorf("detected %s (%v), want %s", got.Name, err, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	gz := testkit.ReadTestdata(t, "pprof", "base-run1.pb.gz")
	raw := testkit.Gunzip(t, gz)
	tests := []struct {
		name   string
		file   string
		in     []byte
		format Format
		want   string
	}{
		{"empty file", "x.folded", nil, Auto, "x.folded: empty file"},
		{"empty pprof", "x.pb", nil, Pprof, "x.pb: empty file"},
		{"bad count", "x.folded", []byte("a;b 1\n\na;c 1x2\n"), Auto, `x.folded:3: bad count "1x2"`},
		{"negative count", "x.folded", []byte("a;b -3\n"), Folded, "x.folded:1: negative count -3"},
		{"missing count", "x.folded", []byte("a;b\n"), Folded, `x.folded:1: missing count in "a;b"`},
		{"missing stack", "x.folded", []byte("a;b 1\n 4\n"), Folded, "x.folded:2: missing stack before count 4"},
		{"count overflow", "x.folded", []byte("a 99999999999999999999\n"), Folded, `x.folded:1: bad count "99999999999999999999"`},
		{"blank folded", "x.folded", []byte("\n  \n"), Folded, "x.folded: no stacks in folded file"},
		{"binary in folded", "x.folded", []byte("a 1\nb\x00 2\n"), Folded, "x.folded:2: binary data in a text profile"},
		{"truncated gzip", "base.pb.gz", gz[:1234], Auto, "base.pb.gz: offset 1234: truncated gzip stream"},
		{"truncated protobuf", "base.pb", raw[:len(raw)-7], Auto, "base.pb: offset " + strconv.FormatInt(lastFieldOffset(t, raw), 10) + ": truncated protobuf"},
		{"truncated protobuf in gzip", "base.pb.gz", testkit.Gzip(t, raw[:len(raw)-7]), Auto,
			"base.pb.gz: offset " + strconv.FormatInt(lastFieldOffset(t, raw), 10) + ": truncated protobuf (decompressed)"},
		{"binary junk", "junk.bin", []byte{0x07, 0xff, 0x01}, Auto,
			"junk.bin: offset 0: not a pprof profile (malformed protobuf)"},
		{"text as pprof", "x.txt", []byte("a;b 1\n"), Pprof, "x.txt: not a pprof profile (text): parsing profile: unrecognized profile format"},
		{"perf without events", "x.perf", []byte("# cmdline : perf record\n\t 7f read (libc)\n\n"), Perf, "x.perf: no perf script events"},
		{"perf bad period", "x.perf", []byte("a 1 1.5: 99999999999999999999 cycles:\n\n"), Perf, `x.perf:1: bad period "99999999999999999999"`},
		{"unknown format", "x", []byte("a 1\n"), "svg", `x: unknown profile format "svg"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(bytes.NewReader(tc.in), tc.file, tc.format)
			if p != nil || err == nil {
				t.Fatalf("got a profile and error %v, want no profile", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q\n          want %q", err, tc.want)
			}
			var ie *Error
			if tc.format != "svg" && !errors.As(err, &ie) {
				t.Errorf("error %T is not an *ingest.Error", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Error("error spans several lines")
			}
		})
	}
}

// lastFieldOffset is where the last top-level protobuf field of b starts,
// found by walking the fields by hand (tag and length varints).
func lastFieldOffset(t *testing.T, b []byte) int64 {
	last := 0
	for off := 0; off < len(b); {
		last = off
		tag, n := uvarint(b[off:])
		off += n
		switch tag & 7 {
		case 0:
			_, n = uvarint(b[off:])
			off += n
		case 2:
			l, n := uvarint(b[off:])
			off += n + int(l)
		default:
			t.Fatalf("unexpected wire type %d at %d", tag&7, last)
		}
	}
	return int64(last)
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, len(b)
}

// A failing reader is an I/O error, not bad input.
func TestParseReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Parse(io.MultiReader(strings.NewReader("a;b 1\n"), errReader{boom}), "x.folded", Auto)
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want it to wrap %v", err, boom)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
