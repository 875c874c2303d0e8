package ingest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/internal/testkit"
)

// seed adds the test data files matching pattern, cut to at most 16 KiB
// so that mutations stay fast.
func seed(f *testing.F, pattern string) {
	for _, file := range testkit.Glob(f, pattern) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 16<<10)])
	}
}

// fuzzParse checks that Parse never panics and returns either a valid
// profile or an *Error-worthy error, never both.
func fuzzParse(t *testing.T, data []byte, format Format) {
	fuzzOptions(t, data, Options{Format: format})
}

// fuzzOptions checks that o.Parse of data returns a valid profile or an
// error alone.
func fuzzOptions(t *testing.T, data []byte, o Options) {
	p, err := o.Parse(bytes.NewReader(data), "fuzz")
	if err != nil {
		if p != nil {
			t.Fatal("profile returned with an error")
		}
		return
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseFolded(f *testing.F) {
	seed(f, "perf-script/*.folded")
	f.Add([]byte("a;b 1\n\na;b;c 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, data, Folded)
		if p, err := Parse(bytes.NewReader(data), "fuzz", Folded); err == nil {
			roundTrip(t, p)
		}
	})
}

func FuzzParsePerf(f *testing.F) {
	seed(f, "perf-script/*.perf.txt")
	fuzzFormat(f, Perf)
}

func FuzzParsePprof(f *testing.F) {
	seed(f, "pprof/*.pb.gz")
	seed(f, "pprof/legacy/*.txt")
	f.Add(testkit.Gunzip(f, testkit.ReadTestdata(f, "pprof", "base-run1.pb.gz")))
	f.Add(legacyCPUProfile())
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, data, Pprof)
	})
}

// FuzzParseAuto feeds every format, legacy pprof included, to detection.
func FuzzParseAuto(f *testing.F) {
	seed(f, "perf-script/*-01.folded")
	seed(f, "perf-script/*-01.perf.txt")
	seed(f, "pprof/legacy/*.txt")
	f.Add(legacyCPUProfile())
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, data, Auto)
	})
}

// FuzzRepairUTF8: the repair is encoding/json's (what every JSON answer
// shows), valid UTF-8 is kept, and names that differ keep differing as
// long as they differ in length or in their valid parts.
func FuzzRepairUTF8(f *testing.F) {
	for _, s := range []string{"", "main.f", "f\xff", "f\xff\xfe", "\xc3(", "\xe2\x82", "é\xed\xa0\x80", "\uFFFD", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON string
		if err := json.Unmarshal(b, &viaJSON); err != nil {
			t.Fatal(err)
		}
		got := RepairUTF8(s)
		if got != viaJSON || !utf8.ValidString(got) {
			t.Errorf("RepairUTF8(%q) = %q, encoding/json gives %q", s, got, viaJSON)
		}
		if utf8.ValidString(s) && got != s {
			t.Errorf("valid %q changed to %q", s, got)
		}
		if longer := RepairUTF8(s + "\xff"); longer == got {
			t.Errorf("%q and %q+\\xff repaired alike", s, s)
		}
	})
}

// fuzzFormat fuzzes a format's parser, and auto on the same input.
func fuzzFormat(f *testing.F, format Format) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, data, format)
		fuzzParse(t, data, Auto)
		fuzzOptions(t, data, Options{Format: format, Threads: true})
	})
}

func FuzzParseJFR(f *testing.F) {
	seed(f, "formats/*.jfr")
	fuzzFormat(f, JFR)
}

func FuzzParseCallgrind(f *testing.F) {
	seed(f, "formats/*.callgrind")
	f.Add([]byte("# callgrind format\nevents: Ir\nfl=(1) a.c\nfn=(1) main\n1 5\ncfn=(2) f\ncalls=1 2\n2 7\nfn=(2)\n3 7\n"))
	fuzzFormat(f, Callgrind)
}

func FuzzParseCPUProfile(f *testing.F) {
	seed(f, "formats/*.cpuprofile")
	f.Add([]byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2]},` +
		`{"id":2,"callFrame":{"functionName":"f","url":"file:///a.js","lineNumber":3}}],"startTime":0,"endTime":10,"samples":[2,2],"timeDeltas":[1,2]}`))
	fuzzFormat(f, CPUProfile)
}

// FuzzCPUNodes: the scanner reads a V8 node table as encoding/json does.
func FuzzCPUNodes(f *testing.F) {
	for _, list := range nodeTables {
		f.Add([]byte(list))
	}
	r := rand.New(rand.NewPCG(1, 49))
	for i := range 20 {
		f.Add(randomNodes(r, i%2 == 0))
	}
	f.Fuzz(func(t *testing.T, list []byte) {
		_ = checkAsDecoded(t, list) // an error is fine, the same as encoding/json's
	})
}

func FuzzParseSpeedscope(f *testing.F) {
	seed(f, "formats/*.speedscope.json")
	f.Add([]byte(speedscopeSample))
	// What the scan of numbers meets: white space between lists, null lists
	// and weights, floats with exponents.
	f.Add([]byte(`{"shared":{"frames":[{"name":"a","file":"x.py","line":3},{"name":"b"}]},"profiles":[{"type":"sampled","unit":"seconds",` +
		`"samples":[[0,1] , [ 0 ],null,[1]],"weights":[0.25,1e-3,null,2.5E+0]}]}`))
	fuzzFormat(f, Speedscope)
}

func FuzzParseTraceEvents(f *testing.F) {
	seed(f, "formats/*.trace.json")
	f.Add([]byte(`{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},` +
		`{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10},{"ph":"B","name":"b","pid":1,"tid":1,"ts":2},{"ph":"E","pid":1,"tid":1,"ts":5},` +
		`{"ph":"P","name":"Profile","pid":1,"id":"0x1","args":{"data":{"startTime":0}}},` +
		`{"ph":"P","name":"ProfileChunk","pid":1,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},` +
		`{"id":2,"parent":1,"callFrame":{"functionName":"f","url":"a.js","lineNumber":2}}],"samples":[2,2]},"timeDeltas":[1,3]}}}]}`))
	f.Add([]byte(`[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10},`))
	f.Add([]byte(specTrace))
	// What the event reader meets: keys in any case, escaped or folding
	// ("ſ" is an "s"), nulls, id2 given twice, floats, white space between
	// events, a null event, the closing bracket missing.
	f.Add([]byte(` [ {"PH":"B","n\u0061me":"a\ud83d\ude00","pid":"1","tid":[1],"t\u017f":1.5,"ts":null,"cat":"c"} ,` + "\n\t" +
		`null,{"ph":"b","cat":"c","id2":{"local":"0x1"},"id2":{"Global":2},"ts":2.25,"name":"s"},{"ph":"e","cat":"c","id2":{"local":"0x1"},"ts":1e1},` +
		`{"ph":"E","pid":"1","tid":[1],"ts":3,"args":{"x":[{},[],"\"",-0.5e-3,true,false,null]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, data, TraceEvent)
		fuzzParse(t, data, Auto)
		fuzzOptions(t, data, Options{Format: TraceEvent, SampleType: "cpu", Threads: true})
		fuzzOptions(t, data, Options{Format: TraceEvent, Threads: true})
	})
}

func FuzzCProfile(f *testing.F) {
	seed(f, "formats/*.prof")
	var m marshalStats
	m.WriteByte('{')
	m.entry("main", 0.001, 0.004, "", 0)
	m.entry("f", 0.002, 0.002, "main", 0.002)
	m.WriteByte('0')
	f.Add(m.Bytes())
	fuzzFormat(f, CProfile)
}

// FuzzSourceMap: a map decodes or is an error; every mapping it keeps
// names a source and a name it lists; a frame mapped through it is valid
// and a profile read with it satisfies Parse's contract.
func FuzzSourceMap(f *testing.F) {
	f.Add([]byte(`{"version":3,"sources":["../src/a.js","webpack://app/./b.js"],"sourcesContent":["export const f = () => 1\nfunction g() {}\n"],` +
		`"names":["computeTotals"],"mappings":"AAAA,IAAIA,GAAG;ACAA,KAAK","sourceRoot":""}`))
	f.Add([]byte(`{"version":3,"sources":[null],"names":[],"mappings":";;;A,CAAA,8BAAgB"}`))
	f.Add([]byte(`{"version":3,"sources":["a.js"],"mappings":"AAAggggggA"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseSourceMap(data, "http://127.0.0.1:8001/dist/main-3F2A9C1B.js")
		if err != nil {
			if m != nil {
				t.Fatal("a map returned with an error")
			}
			return
		}
		for i, start := range m.lines {
			if int(start) > len(m.segs) || i > 0 && start < m.lines[i-1] {
				t.Fatalf("line %d starts at %d of %d mappings", i, start, len(m.segs))
			}
		}
		for _, s := range m.segs {
			if s.source >= int32(len(m.sources)) || s.name >= int32(len(m.names)) || s.col < 0 || s.line < 0 || s.column < 0 {
				t.Fatalf("mapping %+v of %d sources, %d names", s, len(m.sources), len(m.names))
			}
		}
		for _, pos := range [][2]int64{{0, 0}, {0, 4}, {1, 5}, {2, 30}, {-1, 3}} {
			for _, name := range []string{"(anonymous)", "f", "computeTotals"} {
				m.frame(name, pos[0], pos[1])
			}
		}
		profile := `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2]},` +
			`{"id":2,"callFrame":{"functionName":"","url":"http://127.0.0.1:8001/dist/main-3F2A9C1B.js","lineNumber":0,"columnNumber":4},"children":[3]},` +
			`{"id":3,"callFrame":{"functionName":"f","url":"http://127.0.0.1:8001/dist/main-3F2A9C1B.js","lineNumber":1,"columnNumber":5}}],"samples":[2,3]}`
		fuzzOptions(t, []byte(profile), Options{Format: CPUProfile, SourceMaps: func(string) ([]byte, error) { return data, nil }})
	})
}
