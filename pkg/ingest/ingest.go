// Package ingest turns profile files into runs (*profile.Profile), one row
// of its format table (formats.go) per format, tried in this order by
// detection: `gecko-processed` (the Firefox Profiler's processed JSON),
// `cprofile` (Python's pstats), `pprof` (protobuf, gzipped or not, and
// every legacy format google/pprof reads), `jfr` (JDK Flight Recorder),
// `callgrind` (valgrind), `cpuprofile` (V8), `speedscope`, `trace-events`
// (Chrome's trace), `gecko` (Firefox's raw profile), `perf` (`perf script`
// text, collapsed exactly as FlameGraph's stackcollapse-perf.pl does with
// no options) and `folded` (Brendan Gregg's folded stacks); `otlp` and
// `otlp-traces` (OpenTelemetry profiles and traces) name their own runs
// (ParseRuns). It also writes runs back as folded stacks. Each format's
// detection and reader live in its own file; the steps they share in
// input.go (the bounds, whole reads, gzip) and json.go (whole JSON
// documents, and the token stream the V8, trace event and speedscope rows
// read).
//
// Every problem with the input is reported as a single-line *Error naming the
// file and the line or byte offset; on error no profile is returned, so
// callers have nothing to write.
package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/flamediff/flamediff/pkg/profile"
)

// Format names an input format.
type Format string

// Options choose how Parse reads a file.
type Options struct {
	// Format is the input format; "" means Auto.
	Format Format
	// SampleType names the pprof sample type to read (e.g. "alloc_space");
	// "" means the profile's default, by pprof's rule. The other formats
	// have one sample type: naming another is an error.
	SampleType string
	// Strict makes lines that the perf collapse ignores an error.
	Strict bool
	// Threads puts a frame naming each sample's thread at the root of its
	// stack (module profile.ThreadModule), in the formats whose row says
	// what a thread is (FormatInfo.Threads); the others have none.
	Threads bool
	// SourceMaps, if not nil, returns the Source Map v3 of the script at
	// url, nil when it has none: the formats whose frames carry a script
	// url, line and column (V8's .cpuprofile, trace events' CPU profiles)
	// then name a bundle's functions by their original sources. It is how
	// maps reach ingest as data (the CLI reads them from files:
	// internal/profilefile.SourceMaps); an error is the input's.
	SourceMaps func(url string) ([]byte, error)
	// Warn, if not nil, receives a one-line note about input that was
	// skipped without being an error (perf lines the collapse ignores).
	Warn func(string)
}

// Parse reads one run from r in format f with default Options.
func Parse(r io.Reader, name string, f Format) (*profile.Profile, error) {
	return Options{Format: f}.Parse(r, name)
}

// Parse reads one run from r. name identifies the input in errors
// (usually the file name).
//
// With Auto, the format is detected from the first 64 KiB, trying the rows
// of the format table in order: gzip (but gzipped JSON, the JSON rows'
// by its inflated head) or binary (protobuf, legacy CPU) content is
// pprof, and so is text that starts like one of pprof's legacy
// text profiles (heap, contention, thread, goroutine counts); callgrind
// files start with their header; JSON is a V8 CPU profile, a speedscope
// file, trace events or a Gecko profile by its keys, and any other JSON is refused; text whose first line
// after any `#` comments is a perf event header (ending with "event:", or
// followed by a blank or indented stack line) is `perf script` output; any
// other text is folded stacks.
//
// An empty input, a text input with no stack at all, and values whose sum
// exceeds the int64 maximum are errors. Invalid UTF-8 in names is replaced
// by U+FFFD, as a query on the same file shows it. The returned profile
// satisfies CheckValid.
func (o Options) Parse(r io.Reader, name string) (*profile.Profile, error) {
	br := bufio.NewReaderSize(r, detectSize)
	head, err := br.Peek(detectSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(head) == 0 {
		return nil, fileError(name, "empty file")
	}
	var row FormatInfo
	if f := o.Format; f == Auto || f == "" {
		if row, err = detect(head, name); err != nil {
			return nil, err
		}
	} else if row, _ = Lookup(string(f)); row.parse == nil {
		if row.Runs {
			return nil, fmt.Errorf("%s: format %q names its own runs: ingest it with --format %s", name, f, f)
		}
		return nil, fmt.Errorf("%s: unknown profile format %q", name, f)
	}
	f := row.Name
	if o.Threads && row.Threads == "" {
		return nil, fileError(name, "a %s file carries no threads: read it without threads (--threads)", f)
	}
	p, err := row.parse(br, name, o)
	if err != nil {
		return nil, err
	}
	if o.SampleType != "" && p.SampleType != o.SampleType {
		return nil, fileError(name, "no sample type %q: this %s profile has only %q", o.SampleType, f, p.SampleType)
	}
	return Check(p, name)
}

// Check is what every reader of runs does last, those of other packages
// (OTLP) too: it verifies p's invariants and that its values add up within
// int64, repairs invalid UTF-8 in its texts and settles its frames'
// identities (profile.Identify: the app's files relative to its root,
// other programs apart). name identifies the input in errors.
func Check(p *profile.Profile, name string) (*profile.Profile, error) {
	if err := p.CheckValid(); err != nil {
		return nil, fileError(name, "invalid profile: %v", err)
	}
	if i := overflow(p); i >= 0 {
		return nil, fileError(name, "values add up past the int64 maximum %d at sample %d", int64(math.MaxInt64), i+1)
	}
	p = validUTF8(p)
	p.Identify()
	return p, nil
}

// overflow returns the index of the sample at which the running sum of
// the (non-negative) values leaves int64, or -1. Every sum that storage
// and the engine form of one run is bounded by this one.
func overflow(p *profile.Profile) int {
	var total int64
	for i, s := range p.Samples {
		if s.Value > math.MaxInt64-total {
			return i
		}
		total += s.Value
	}
	return -1
}

// validUTF8 repairs invalid UTF-8 in p's texts with RepairUTF8,
// re-interning frames that become equal. Storage refuses invalid text and
// JSON output replaces it, so repairing it here makes ingest and query agree.
func validUTF8(p *profile.Profile) *profile.Profile {
	valid := utf8.ValidString(p.SampleType) && utf8.ValidString(p.Unit)
	for _, f := range p.Frames {
		valid = valid && utf8.ValidString(f.Name) && utf8.ValidString(f.Module) && utf8.ValidString(f.File)
	}
	if valid {
		return p
	}
	fix := RepairUTF8
	q := &profile.Profile{SampleType: fix(p.SampleType), Unit: fix(p.Unit), Start: p.Start, Duration: p.Duration, Exact: p.Exact,
		Samples: p.Samples}
	ids := make([]uint32, len(p.Frames))
	for i, f := range p.Frames {
		ids[i] = q.Intern(profile.Frame{Name: fix(f.Name), Module: fix(f.Module), File: fix(f.File), Line: f.Line, Inlined: f.Inlined})
	}
	q.RemapFrames(ids)
	return q
}

// RepairUTF8 replaces each byte of s that is not part of valid UTF-8 by
// U+FFFD, as encoding/json does: "f\xff\xfe" becomes "f\uFFFD\uFFFD".
// (strings.ToValidUTF8 would replace the run by one U+FFFD and make it
// the same frame as "f\xff".) Every name Flamediff stores, queries,
// exports or puts in a frame has passed through it.
func RepairUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// detectSize is how much of the input format detection looks at.
const detectSize = 64 << 10

// isText reports whether b has no control bytes besides tab, CR, LF, VT
// and FF. Protobuf is all but certain to contain some (field tags and
// lengths are small numbers).
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' || c == 0x7f {
			return false
		}
	}
	return true
}
