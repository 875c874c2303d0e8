package ingest

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// The patterns of stackcollapse-perf.pl, written as in the script. Go's
// regexp picks the same submatches as Perl's backtracking (leftmost-first);
// perlRegexp only makes \s and \S mean what they mean in Perl (Go's \s
// lacks \v).
var (
	// An event header: "comm [pid/]tid [cpu] time: [period] event:".
	perfHeader = perlRegexp(`^(\S.+?)\s+(\d+)\/*(\d+)*\s+`)
	// The period and event name at the end of a header.
	perfEvent = perlRegexp(`:\s*(\d+)*\s+(\S+):\s*$`)
	// A stack line: "addr symbol (dso)".
	perfFrame = perlRegexp(`^\s*(\w+)\s*(.+) \((.*)\)`)
)

func perlRegexp(expr string) *regexp.Regexp {
	r := strings.NewReplacer(`\s`, `[\t\n\v\f\r ]`, `\S`, `[^\t\n\v\f\r ]`)
	return regexp.MustCompile(r.Replace(expr))
}

// perfParser collapses `perf script` output the way stackcollapse-perf.pl
// does with no options, one sample per event instead of one line per stack:
//   - an event ends at a blank line; an event still open at the end of the
//     input is dropped (the script only records on a blank line);
//   - the first frame is the process name (comm, spaces made '_'), no pid/tid
//     (the profiled program's has its executable as module: markProgram);
//   - only events of the first event type seen are kept;
//   - the value is the period printed before the event name, 1 if absent;
//   - symbols are tidied: "+0x.." offsets stripped, "a->b" inline chains
//     expanded with "_[i]" on the inlined ones, [unknown] replaced by
//     "[dso basename]", ';' made ':', anything from the first '(' removed
//     (except Go method names and "(anonymous namespace)"), quotes removed,
//     and for java processes a leading "L" of class names dropped;
//   - symbols starting with '(' are skipped; lines matching nothing are
//     ignored; comments ('#') are skipped. No --kernel/--jit annotations.
//
// Unlike the script it accepts CRLF line endings and rejects binary data,
// and it counts what it ignores (lines matching nothing, stack lines
// outside an event, an event left open at the end, events of other
// types) for Options.Warn; with Options.Strict an ignored line is an error.
type perfParser struct {
	name   string
	p      *profile.Profile
	frames *frameTable
	arena  stackArena

	event  string   // the kept event type; "" until the first header with one
	open   bool     // an event is open: the script's $pname is set (never "0": comm has 2+ characters)
	comm   []byte   // its process name
	period int64    // its value
	time   int64    // its time in ns, -1 when not printed
	leaf   []uint32 // its frames, leaf first
	start  int      // its header's line number

	strict   bool
	skipping bool   // in an event of another type
	others   int    // events of other types
	ignored  int    // lines ignored
	first    int    // the first of them
	firstTxt string // and its text
}

func parsePerf(r io.Reader, name string, o Options) (*profile.Profile, error) {
	pp := &perfParser{name: name, p: &profile.Profile{Unit: "count"}, strict: o.Strict}
	pp.frames = newFrameTable(pp.p)
	sc := newLineScanner(r, name)
	for {
		line, ok := sc.next()
		if !ok {
			break
		}
		if err := pp.line(line, sc.line); err != nil {
			return nil, err
		}
	}
	if sc.err != nil {
		return nil, sc.err
	}
	if pp.open {
		if pp.strict {
			return nil, lineError(name, pp.start, "event not ended by a blank line (the collapse drops it)")
		}
		pp.ignored += sc.line - pp.start + 1
		if pp.first == 0 {
			pp.first, pp.firstTxt = pp.start, "(an event not ended by a blank line)"
		}
	}
	p := pp.p
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no perf script events")
	}
	if o.Warn != nil && pp.ignored > 0 {
		o.Warn(fmt.Sprintf("%s: %d lines ignored, as stackcollapse-perf.pl ignores them (the first: line %d %s)",
			name, pp.ignored, pp.first, pp.firstTxt))
	}
	if o.Warn != nil && pp.others > 0 {
		o.Warn(fmt.Sprintf("%s: %d events other than %q skipped (the collapse keeps the first event type)",
			name, pp.others, pp.event))
	}
	markProgram(p)
	p.SampleType = pp.event
	if p.SampleType == "" {
		p.SampleType = "samples"
	}
	// Times count from the earliest event (perf prints uptime, not wall time).
	first := int64(-1)
	for _, s := range p.Samples {
		if s.Time >= 0 && (first < 0 || s.Time < first) {
			first = s.Time
		}
	}
	for i := range p.Samples {
		if p.Samples[i].Time >= 0 {
			p.Samples[i].Time -= first
		}
	}
	return p, nil
}

func (pp *perfParser) line(line []byte, n int) error {
	if len(line) > 0 && line[0] == '#' {
		return nil
	}
	if len(line) == 0 {
		if pp.open {
			pp.record()
		}
		pp.skipping = false
		return nil
	}
	if m := perfHeader.FindSubmatchIndex(line); m != nil {
		return pp.header(line, m, n)
	}
	if !pp.open {
		if pp.skipping {
			return nil // a filtered event's stack
		}
		return pp.ignore(line, n)
	}
	if m := perfFrame.FindSubmatchIndex(line); m != nil {
		pp.frame(line[m[4]:m[5]], line[m[6]:m[7]])
		return nil
	}
	return pp.ignore(line, n)
}

// ignore counts a line the collapse does not read (an error if strict).
func (pp *perfParser) ignore(line []byte, n int) error {
	if pp.strict {
		return lineError(pp.name, n, "line ignored by the collapse: %q", clip(line))
	}
	if pp.ignored == 0 {
		pp.first, pp.firstTxt = n, strconv.Quote(clip(line))
	}
	pp.ignored++
	return nil
}

func (pp *perfParser) record() {
	stack := pp.arena.alloc(len(pp.leaf) + 1)
	stack[0] = pp.frames.id(pp.comm, nil)
	for i, id := range pp.leaf {
		stack[len(stack)-1-i] = id
	}
	pp.p.Samples = append(pp.p.Samples, profile.Sample{Stack: stack, Value: pp.period, Time: pp.time})
	pp.leaf = pp.leaf[:0]
	pp.open = false
}

func (pp *perfParser) header(line []byte, m []int, n int) error {
	period := int64(1)
	if e := perfEvent.FindSubmatchIndex(line); e != nil {
		event := string(line[e[4]:e[5]])
		if pp.event == "" {
			pp.event = event
		} else if event != pp.event {
			pp.skipping = true
			pp.others++
			return nil // filtered out: the stack lines that follow are skipped
		}
		// Perl's `not $period`: no digits, or exactly "0", mean 1.
		if s := line[max(e[2], 0):max(e[3], 0)]; len(s) > 0 && string(s) != "0" {
			v, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil {
				return lineError(pp.name, n, "bad period %q", clip(s))
			}
			period = v
		}
	}
	pp.open, pp.period, pp.start = true, period, n
	pp.comm = append(pp.comm[:0], line[m[2]:m[3]]...)
	for i, c := range pp.comm {
		if c == ' ' {
			pp.comm[i] = '_'
		}
	}
	pp.time = eventTime(line[m[1]:])
	return nil
}

// eventTime finds the "seconds.micros:" field of a header (after the tid),
// in nanoseconds; -1 when there is none.
func eventTime(rest []byte) int64 {
	for _, f := range bytes.Fields(rest) {
		f, ok := bytes.CutSuffix(f, []byte(":"))
		sec, frac, dot := bytes.Cut(f, []byte("."))
		if !ok || !dot || !allDigits(sec) || !allDigits(frac) || len(frac) > 9 {
			continue
		}
		s, err := strconv.ParseInt(string(sec), 10, 64)
		ns, _ := strconv.ParseInt(string(frac)+"000000000"[len(frac):], 10, 64)
		if err != nil || s > (math.MaxInt64-ns)/1e9 {
			return -1 // not a time perf could print
		}
		return s*1e9 + ns
	}
	return -1
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// markProgram gives the process frame of the program profiled — of the
// processes named after their executable (Linux names a process after
// the first 15 bytes of its file name), the one with the largest total —
// the module profile.ProgramModule, which makes it one frame whatever the
// build named its binary: app-base's process meets app-head's. Other
// processes keep their names as identities, so the programs of a
// system-wide profile stay apart at the root.
func markProgram(p *profile.Profile) {
	exe := make([]string, len(p.Frames)) // per frame: its executable's file name, "/" if none, "" not known yet
	program := map[uint32]bool{}         // process frames found named after their executable
	total := map[uint32]int64{}
	for _, s := range p.Samples {
		root := s.Stack[0]
		total[root] += s.Value
		if program[root] {
			continue
		}
		comm := p.Frames[root].Name
		for _, id := range s.Stack[1:] {
			if exe[id] == "" {
				exe[id] = "/"
				if m := strings.TrimSuffix(p.Frames[id].Module, " (deleted)"); m != "" && m[0] != '[' && profile.ModuleIdentity(m) == "" {
					exe[id] = m[strings.LastIndexByte(m, '/')+1:]
				}
			}
			if base := exe[id]; comm == base || len(base) > 15 && comm == base[:15] {
				program[root] = true
				break
			}
		}
	}
	main, most := uint32(0), int64(-1)
	for root := range program {
		if total[root] > most || total[root] == most && root < main {
			main, most = root, total[root]
		}
	}
	if most < 0 {
		return
	}
	id := p.Intern(profile.Frame{Name: p.Frames[main].Name, Module: profile.ProgramModule})
	for _, s := range p.Samples {
		if s.Stack[0] == main {
			s.Stack[0] = id
		}
	}
}

// frame adds one stack line's frames (an inline chain "a->b" is several).
func (pp *perfParser) frame(rawfunc, module []byte) {
	rawfunc = stripOffset(rawfunc)
	if len(rawfunc) > 0 && rawfunc[0] == '(' {
		return // a process name, not a symbol
	}
	parts := bytes.Split(rawfunc, []byte("->"))
	for len(parts) > 0 && len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // Perl's split drops trailing empty fields
	}
	start := len(pp.leaf)
	for i, part := range parts {
		name := tidySymbol(string(part), string(module), pp.comm, i > 0)
		pp.leaf = append(pp.leaf, pp.frames.id([]byte(name), module))
	}
	// The chain stays in its order when the whole stack is reversed.
	chain := pp.leaf[start:]
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
}

// stripOffset removes a trailing "+0x<hex>" (perf >= 4.8 prints offsets).
func stripOffset(f []byte) []byte {
	i := bytes.LastIndex(f, []byte("+0x"))
	if i < 0 || i+3 == len(f) {
		return f
	}
	for _, c := range f[i+3:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return f
		}
	}
	return f[:i]
}

var stripQuotes = strings.NewReplacer(`"`, "", `'`, "")

// tidySymbol applies the script's per-symbol rules to one element of an
// inline chain; inlined is true for all but the first.
func tidySymbol(f, module string, comm []byte, inlined bool) string {
	if f == "[unknown]" {
		if module != "[unknown]" {
			f = "[" + module[strings.LastIndexByte(module, '/')+1:] + "]"
		}
	}
	f = strings.ReplaceAll(f, ";", ":")
	if !isGoMethod(f) {
		f = cutAtParen(f)
	}
	f = stripQuotes.Replace(f)
	if bytes.HasPrefix(comm, []byte("java")) && strings.Contains(f, "/") {
		f = strings.TrimPrefix(f, "L")
	}
	if inlined && !strings.Contains(f, "_[i]") {
		f += "_[i]"
	}
	return f
}

// isGoMethod is the script's m/\.\(.*\)\./ ("net/http.(*Client).Do").
func isGoMethod(f string) bool {
	i := strings.Index(f, ".(")
	return i >= 0 && strings.Contains(f[i+2:], ").")
}

// cutAtParen is the script's s/\((?!anonymous namespace\)).*//: drop
// everything from the first '(' that does not open "(anonymous namespace)".
func cutAtParen(f string) string {
	for i := 0; i < len(f); i++ {
		if f[i] == '(' && !strings.HasPrefix(f[i+1:], "anonymous namespace)") {
			return f[:i]
		}
	}
	return f
}

// looksLikePerf reports whether the first line that is neither blank nor a
// comment is a perf event header that ends with "event:" or is followed by
// a blank or indented stack line. A head
// of comments only is perf too: perf script prints a `#` header block and
// folded stacks have none.
func looksLikePerf(head []byte) bool {
	lines := bytes.Split(head, []byte("\n"))
	for i, line := range lines {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		if !perfHeader.Match(line) {
			return false
		}
		if bytes.HasSuffix(bytes.TrimRight(line, " \t"), []byte(":")) || i+1 == len(lines) {
			return true // "... event:" (a folded line ends with its count)
		}
		next := bytes.TrimSuffix(lines[i+1], []byte("\r"))
		return len(next) == 0 || perfFrame.Match(next) && (next[0] == ' ' || next[0] == '\t')
	}
	return len(lines) > 0 && bytes.HasPrefix(head, []byte("#"))
}
