// Package ingest turns profile files into runs (*profile.Profile): pprof
// protobuf (gzipped or not), Brendan Gregg's folded stacks, and Linux
// `perf script` text collapsed exactly as FlameGraph's stackcollapse-perf.pl
// does with no options. It also writes runs back as folded stacks.
//
// Every problem with the input is reported as a single-line *Error naming the
// file and the line or byte offset; on error no profile is returned, so
// callers have nothing to write.
package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/flamediff/flamediff/pkg/profile"
)

// Format names an input format.
type Format string

// The input formats. Auto detects the format from the content.
const (
	Auto   Format = "auto"
	Pprof  Format = "pprof"
	Folded Format = "folded"
	Perf   Format = "perf"
)

// ParseFormat returns the Format named s ("auto", "pprof", "folded" or
// "perf"; "" means auto), or an error listing the valid names.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Auto, Pprof, Folded, Perf:
		return f, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown profile format %q (want auto, pprof, folded or perf)", s)
}

// Parse reads one run from r in format f. name identifies the input in
// errors (usually the file name).
//
// With Auto, the format is detected from the first 64 KiB: gzip or binary
// (protobuf) content is pprof; text whose first line after any `#` comments
// is a perf event header (ending with "event:", or followed by a blank or
// indented stack line) is `perf script` output; any other text is folded stacks.
//
// An empty input, and a text input with no stack at all, is an error. The
// returned profile satisfies CheckValid.
func Parse(r io.Reader, name string, f Format) (*profile.Profile, error) {
	br := bufio.NewReaderSize(r, detectSize)
	head, err := br.Peek(detectSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(head) == 0 {
		return nil, fileError(name, "empty file")
	}
	if f == Auto {
		f = detect(head)
	}
	var p *profile.Profile
	switch f {
	case Pprof:
		p, err = parsePprof(br, name)
	case Folded:
		p, err = parseFolded(br, name)
	case Perf:
		p, err = parsePerf(br, name)
	default:
		return nil, fmt.Errorf("%s: unknown profile format %q", name, f)
	}
	if err != nil {
		return nil, err
	}
	if err := p.CheckValid(); err != nil {
		return nil, fileError(name, "invalid profile: %v", err)
	}
	return p, nil
}

// ParseFile parses the profile file at path, naming it by path in errors.
func ParseFile(path string, f Format) (*profile.Profile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return Parse(file, path, f)
}

// detectSize is how much of the input format detection looks at.
const detectSize = 64 << 10

var gzipMagic = []byte{0x1f, 0x8b}

func detect(head []byte) Format {
	if bytes.HasPrefix(head, gzipMagic) || !isText(head) {
		return Pprof
	}
	if looksLikePerf(head) {
		return Perf
	}
	return Folded
}

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
