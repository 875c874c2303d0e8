package ingest

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// FormatInfo is one row of the format table: everything Flamediff knows
// about an input format. `ingest --format`, `--format auto`, `query` on
// files, the CLI's help and docs/FORMATS.md all read Formats; a test holds
// the help and the docs equal to it.
type FormatInfo struct {
	Name    Format
	Title   string // what the format is
	Carries string // samples or spans, unit, threads, file and line
	// Threads says what a thread is, whose frame Options.Threads puts at
	// the root of each stack; "" for the formats that carry none.
	Threads string
	Writer  string // a command that writes it
	// Runs marks the formats whose file names its own runs (OTLP):
	// ParseRuns reads them into many runs, Parse refuses them.
	Runs bool
	// detect reports whether the first detectSize bytes are this format;
	// nil for formats auto never picks.
	detect func(head []byte) bool
	parse  func(r io.Reader, name string, o Options) (*profile.Profile, error)
	// runs reads a Runs format; its string sums up what it met.
	runs func(data []byte, name string, o RunOptions) ([]Run, string, error)
}

// Run is one run of a file or request that names its runs: its key and
// its samples.
type Run struct {
	App, Build, Run string
	Profile         *profile.Profile
}

// RunOptions choose how a file or request that names its runs (the OTLP
// rows) becomes runs.
type RunOptions struct {
	// SampleType picks, in a run of OTLP profiles with several sample
	// types, the one to read; "" means the last one, pprof's rule (a pprof
	// profile converted to OTLP has one OTLP profile per sample type, in
	// order). Traces have one, wall.
	SampleType string
	// RunAttribute names the run. For profiles "" means
	// DefaultRunAttribute, and a profile without it is named by its profile
	// id; for traces it groups spans into runs by its value (a test that
	// emits several traces per run), and "" makes each trace a run, named by
	// its id.
	RunAttribute string
	// App, Build and Run, when set, replace service.name, service.version
	// and the run of every profile or span.
	App, Build, Run string
	// MaxSize bounds what gzipped input inflates to; 0 means MaxFileSize.
	MaxSize int64
}

// ParseRuns reads the runs of data in format f, a Runs row of the table.
// name identifies the input in errors; the string sums up what was met
// (traces: the spans, orphans, clipped and duplicates), or is "".
func ParseRuns(data []byte, name string, f Format, o RunOptions) ([]Run, string, error) {
	row, _ := Lookup(string(f))
	if row.runs == nil {
		return nil, "", fmt.Errorf("%s: format %q names no runs: read it as one run", name, f)
	}
	return row.runs(data, name, o)
}

// otlpProfileRuns is the otlp row's reader.
func otlpProfileRuns(data []byte, name string, o RunOptions) ([]Run, string, error) {
	batches, err := DecodeOTLPProfiles(data, name, o.MaxSize)
	if err != nil {
		return nil, "", err
	}
	runs, err := ProfileRuns(o, name, batches...)
	return runs, "", err
}

// otlpTraceRuns is the otlp-traces row's reader.
func otlpTraceRuns(data []byte, name string, o RunOptions) ([]Run, string, error) {
	if o.SampleType != "" && o.SampleType != "wall" {
		return nil, "", fmt.Errorf("%s: sample type %q: span runs have one sample type, wall", name, o.SampleType)
	}
	batches, err := DecodeOTLPTraces(data, name, o.MaxSize)
	if err != nil {
		return nil, "", err
	}
	runs, sum, err := TraceRuns(o, name, batches...)
	return runs, sum.String(), err
}

// The input formats. Auto detects the format from the content.
const (
	Auto       Format = "auto"
	Pprof      Format = "pprof"
	JFR        Format = "jfr"
	Callgrind  Format = "callgrind"
	CProfile   Format = "cprofile"
	CPUProfile Format = "cpuprofile"
	Speedscope Format = "speedscope"
	TraceEvent Format = "trace-events"
	Gecko      Format = "gecko"
	Processed  Format = "gecko-processed"
	Perf       Format = "perf"
	Folded     Format = "folded"
	OTLP       Format = "otlp"
	OTLPTraces Format = "otlp-traces"
)

// formats is the table, in the order auto tries the rows: the first
// whose detect accepts the head wins; folded stacks take any other text.
// The processed Gecko row comes before pprof, which takes any other gzip,
// and so does cprofile, binary too.
var formats = []FormatInfo{
	{Name: Processed, Title: "the Firefox Profiler's processed profile JSON (what profiler.firefox.com saves and uploads, gzipped or not; versions 29 to 70)",
		Carries: "weighted samples of every thread in one run: samples (count), tracing-ms (time, nanoseconds) or bytes; function, library or script, file and line",
		Writer:  "profiler.firefox.com's Download (run.json.gz), or its Upload",
		Threads: "each thread, by its name",
		detect:  looksLikeProcessedGecko, parse: parseProcessedGecko},
	{Name: CProfile, Title: "Python's cProfile and profile stats (the pstats module's marshal file)",
		Carries: "cpu (nanoseconds): own time per function exact, call paths shared out of the caller edges; file and line",
		Writer:  "`python -m cProfile -o run.prof app.py`",
		detect:  looksLikeCProfile, parse: parseCProfile},
	{Name: Pprof, Title: "pprof protobuf (gzipped or not) and the legacy formats pprof reads",
		Carries: "samples of any sample type (--sample-type), file and line",
		Writer:  "`go test -cpuprofile`, `go tool pprof -proto`, any pprof profiler",
		detect: func(head []byte) bool {
			if bytes.HasPrefix(head, gzipMagic) {
				return !looksLikeJSON(inflatedHead(head)) // gzipped JSON is the JSON rows'
			}
			return !looksLikeJFR(head) && (!isText(head) || legacyText(head))
		},
		parse: func(r io.Reader, name string, o Options) (*profile.Profile, error) {
			return parsePprof(r, name, o.SampleType)
		}},
	{Name: JFR, Title: "JDK Flight Recorder (JFR)",
		Carries: "execution samples (samples, count, the default), async-profiler's wall-clock samples (wall, count), allocations (alloc, bytes) or async-profiler's live objects (live, bytes), timed; class and line",
		Threads: "the event's sampled (or event) thread, by its Java name",
		Writer:  "`java -XX:StartFlightRecording=filename=run.jfr,settings=profile ...`, async-profiler's `asprof -e cpu --wall 10ms --alloc 512k -f run.jfr PID`",
		detect:  looksLikeJFR, parse: parseJFR},
	{Name: Callgrind, Title: "valgrind's callgrind output",
		Carries: "one event's cost (--sample-type, default the first): self cost per function exact, call paths shared out of the call graph; file and line",
		Writer:  "`valgrind --tool=callgrind --callgrind-out-file=run.callgrind PROGRAM`",
		detect:  looksLikeCallgrind, parse: parseCallgrind},
	{Name: CPUProfile, Title: "V8 CPU profile (.cpuprofile: Node, Chrome DevTools), gzipped or not",
		Carries: "timed samples: samples (count, the default) or cpu (microseconds); script url and line",
		Writer:  "`node --cpu-prof --cpu-prof-dir=DIR app.js`",
		detect:  looksLikeCPUProfile, parse: parseCPUProfile},
	{Name: Speedscope, Title: "speedscope's JSON file format, sampled and evented profiles, gzipped or not",
		Carries: "weighted samples or open/close events of every profile (thread) in one run, in the file's unit; file and line",
		Threads: "each profile, by its name",
		Writer:  "`py-spy record -f speedscope`, `rbspy record --format speedscope`, `dotnet-trace convert --format Speedscope`",
		detect:  looksLikeSpeedscope, parse: parseSpeedscope},
	{Name: TraceEvent, Title: "Chrome's Trace Event Format JSON (Chrome, Node, Perfetto's JSON export), object or array form, gzipped or not",
		Carries: "duration events (X and B/E per thread, nestable async b/e per track) as spans (wall, nanoseconds, the default), or its V8 CPU profile events (samples or cpu); url and line for samples",
		Threads: "each thread (pid, tid) by its thread_name (else process_name) metadata, each async track by its category",
		Writer:  "`node --trace-event-categories v8,node --trace-event-file-pattern run.json app.js`, Chrome's `--trace-startup --trace-startup-file=run.json`",
		detect:  looksLikeTraceEvents, parse: parseTraceEvents},
	{Name: Gecko, Title: "the raw Gecko profile JSON (threads of schema-indexed tables; child processes too) that Firefox's profiler and simpleperf write",
		Carries: "samples (count) of every thread of every process in one run; JS function, url and line, native library, label",
		Threads: "each thread, by its name",
		Writer:  "`MOZ_PROFILER_STARTUP=1 MOZ_PROFILER_SHUTDOWN=run.json firefox ...`, simpleperf's `gecko_profile_generator.py -i perf.data > run.json`",
		detect:  looksLikeGecko, parse: parseGecko},
	{Name: Perf, Title: "Linux `perf script` text, collapsed as stackcollapse-perf.pl does",
		Carries: "samples (count) of the first event; no file or line",
		Writer:  "`perf record -g PROGRAM && perf script`",
		detect:  looksLikePerf, parse: parsePerf},
	{Name: Folded, Title: "Brendan Gregg's folded stacks",
		Carries: "samples (count); no time, file or line",
		Writer:  "`stackcollapse-*.pl`, `flamediff export --output folded`",
		detect:  func([]byte) bool { return true },
		parse: func(r io.Reader, name string, _ Options) (*profile.Profile, error) {
			return parseFolded(r, name)
		}},
	{Name: OTLP, Title: "OpenTelemetry profiles (protobuf, one message or the Collector file exporter's stream)",
		Carries: "samples of any sample type, runs named by an attribute; file and line",
		Writer:  "an OpenTelemetry Collector's file exporter", Runs: true, runs: otlpProfileRuns},
	{Name: OTLPTraces, Title: "OpenTelemetry traces as span flame graphs",
		Carries: "spans (wall nanoseconds), each trace a run",
		Writer:  "an OpenTelemetry Collector's file exporter", Runs: true, runs: otlpTraceRuns},
}

// Formats returns the format table (a copy).
func Formats() []FormatInfo { return append([]FormatInfo(nil), formats...) }

// Names lists the format names for help texts: "auto, pprof, ... or otlp-traces".
func Names() string {
	names := []string{string(Auto)}
	for _, f := range formats {
		names = append(names, string(f.Name))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Lookup returns the row of the format named s ("" means auto).
func Lookup(s string) (FormatInfo, bool) {
	for _, f := range formats {
		if string(f.Name) == s {
			return f, true
		}
	}
	return FormatInfo{}, false
}

// ParseFormat returns the Format named s ("" means auto), or an error
// listing the valid names.
func ParseFormat(s string) (Format, error) {
	if s == "" || Format(s) == Auto {
		return Auto, nil
	}
	if f, ok := Lookup(s); ok {
		return f.Name, nil
	}
	return "", fmt.Errorf("unknown profile format %q (want %s)", s, Names())
}

// detect picks the row for head. JSON that no JSON row takes is refused
// rather than read as folded stacks.
func detect(head []byte, name string) (FormatInfo, error) {
	for _, f := range formats {
		if f.detect == nil || !f.detect(head) {
			continue
		}
		if f.Name == Folded && looksLikeJSON(inflatedHead(head)) {
			return FormatInfo{}, fileError(name, "JSON that is no V8 CPU profile, speedscope file, trace events or Gecko profile, the JSON formats read (docs/FORMATS.md)")
		}
		return f, nil
	}
	return FormatInfo{}, fileError(name, "unknown profile format")
}
