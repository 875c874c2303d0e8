package ingest

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// The streamed JSON rows read gzip as it inflates: a gzipped file is
// detected and reads as the plain one does, and a gzip stream cut short
// or corrupt is refused as such.
func TestGzippedJSONRows(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format Format
	}{
		{"formats/app.cpuprofile", CPUProfile},
		{"formats/app.trace.json", TraceEvent},
		{"formats/py-spy.speedscope.json", Speedscope},
		{"formats/prog.gecko.json", Gecko},
		{"formats/prog.processed.json", Processed},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			data := testkit.ReadTestdata(t, tc.file)
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			if _, err := zw.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			plain, err := Parse(bytes.NewReader(data), "x", tc.format)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []Format{Auto, tc.format} {
				p, err := Parse(bytes.NewReader(gz.Bytes()), "x.gz", f)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !reflect.DeepEqual(p.Samples, plain.Samples) || !reflect.DeepEqual(p.Frames, plain.Frames) {
					t.Errorf("%s: the gzipped file reads otherwise than the plain one", f)
				}
			}
			badCRC := bytes.Clone(gz.Bytes())
			badCRC[len(badCRC)-8] ^= 0xff // the trailer's CRC-32
			for in, want := range map[string]string{
				string(gz.Bytes()[:gz.Len()/2]): "x.gz: truncated gzip stream",
				string(badCRC):                  "x.gz: corrupt gzip stream: gzip: invalid checksum",
			} {
				if _, err := Parse(strings.NewReader(in), "x.gz", tc.format); err == nil || err.Error() != want {
					t.Errorf("error %v, want %q", err, want)
				}
			}
		})
	}
}
