package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flamediff/flamediff/pkg/profile"
)

// sourceMap is a decoded Source Map v3 (ECMA-426): each generated line's
// mappings in column order, its sources resolved (resolveSource).
type sourceMap struct {
	sources  []string
	contents []string // sourcesContent; "" when the map carries none
	names    []string
	segs     []mapping // every line's mappings, in line order
	lines    []int32   // where each generated line's mappings start in segs
	starts   [][]int   // per source, the byte offsets of its function starts (functionStarts), made on first use
	frames   map[v8Frame]mapped
}

// v8Frame is a function as V8 names and places it; mapped what frame
// made of it. A profile's nodes repeat functions: each is mapped once.
type v8Frame struct {
	name      string
	line, col int64
}

type mapped struct {
	frame profile.Frame
	ok    bool
}

// mapping is one segment of a map: a generated column and, if source >=
// 0, the original source, 0-based line and column and name (-1: none).
type mapping struct{ col, source, line, column, name int32 }

// parseSourceMap decodes a Source Map v3 of the script at script (a URL or
// a path, which its relative sources are resolved against). Every index
// and position is checked: a value past int32, a negative position, a
// source or name that the map does not list are errors. An index map
// (sections) is refused.
func parseSourceMap(data []byte, script string) (*sourceMap, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileSize)
	}
	var raw struct {
		Version        int               `json:"version"`
		SourceRoot     string            `json:"sourceRoot"`
		Sources        []*string         `json:"sources"`
		SourcesContent []*string         `json:"sourcesContent"`
		Names          []string          `json:"names"`
		Mappings       string            `json:"mappings"`
		Sections       []json.RawMessage `json:"sections"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("bad JSON: %v", err)
	}
	if raw.Sections != nil {
		return nil, errors.New("an index map (sections): give the bundle's own maps")
	}
	if raw.Version != 3 {
		return nil, fmt.Errorf("version %d, not 3", raw.Version)
	}
	m := &sourceMap{names: raw.Names, sources: make([]string, len(raw.Sources)), contents: make([]string, len(raw.Sources))}
	for i, s := range raw.Sources {
		if s != nil {
			m.sources[i] = resolveSource(raw.SourceRoot, *s, script)
		}
		if i < len(raw.SourcesContent) && raw.SourcesContent[i] != nil {
			m.contents[i] = *raw.SourcesContent[i]
		}
	}
	if len(raw.Mappings) > maxMappings {
		return nil, fmt.Errorf("mappings of more than %d bytes", maxMappings)
	}
	var err error
	if m.segs, m.lines, err = decodeMappings(raw.Mappings, len(m.sources), len(m.names)); err != nil {
		return nil, err
	}
	return m, nil
}

// maxMappings bounds a map's mappings (those of a bundle of some 100 MB
// of code), and so what its decoding holds: at most 10 times as much.
const maxMappings = 64 << 20

// line is the generated 0-based line's mappings.
func (m *sourceMap) line(l int64) []mapping {
	end := int32(len(m.segs)) // #nosec G115 -- at most maxMappings segments (decodeMappings), far below 2^31
	if l+1 < int64(len(m.lines)) {
		end = m.lines[l+1]
	}
	return m.segs[m.lines[l]:end]
}

// decodeMappings decodes a map's mappings: ";" ends a generated line, ","
// a segment of 1, 4 or 5 base64 VLQ fields, each relative to the previous
// one (the generated column to the line's previous segment).
func decodeMappings(s string, sources, names int) ([]mapping, []int32, error) {
	var segs []mapping
	var lines []int32
	var src, oline, ocol, name int64
	start := 0 // of the line in segs
	for i := 0; i <= len(s); {
		if i == len(s) || s[i] == ';' {
			slices.SortStableFunc(segs[start:], func(a, b mapping) int { return int(a.col) - int(b.col) })
			lines = append(lines, int32(start)) // #nosec G115 -- at most maxMappings segments, far below 2^31
			start = len(segs)
			i++
			continue
		}
		if s[i] == ',' {
			i++
			continue
		}
		var fields [5]int64
		n := 0
		for i < len(s) && s[i] != ',' && s[i] != ';' {
			if n == len(fields) {
				return nil, nil, fmt.Errorf("mappings: a segment of more than 5 fields at byte %d", i)
			}
			v, next, err := vlq(s, i)
			if err != nil {
				return nil, nil, err
			}
			fields[n], i = v, next
			n++
		}
		if n != 1 && n != 4 && n != 5 {
			return nil, nil, fmt.Errorf("mappings: a segment of %d fields before byte %d", n, i)
		}
		col := fields[0]
		if len(segs) > start {
			col += int64(segs[len(segs)-1].col)
		}
		if n >= 4 {
			src, oline, ocol = src+fields[1], oline+fields[2], ocol+fields[3]
			if src < 0 || src >= int64(sources) {
				return nil, nil, fmt.Errorf("mappings: source %d of %d before byte %d", src, sources, i)
			}
		}
		if n == 5 {
			name += fields[4]
			if name < 0 || name >= int64(names) {
				return nil, nil, fmt.Errorf("mappings: name %d of %d before byte %d", name, names, i)
			}
		}
		if col < 0 || col > math.MaxInt32 || oline < 0 || oline > math.MaxInt32 || ocol < 0 || ocol > math.MaxInt32 ||
			src > math.MaxInt32 || name > math.MaxInt32 {
			return nil, nil, fmt.Errorf("mappings: a position out of range before byte %d", i)
		}
		// Each value is checked within int32 above.
		seg := mapping{col: int32(col), source: -1, name: -1} // #nosec G115 -- checked above
		if n >= 4 {
			seg.source, seg.line, seg.column = int32(src), int32(oline), int32(ocol) // #nosec G115 -- checked above
		}
		if n == 5 {
			seg.name = int32(name) // #nosec G115 -- checked above
		}
		segs = append(segs, seg)
	}
	return segs, lines, nil
}

// vlq decodes the base64 VLQ at s[i:]: 5 bits a digit, least significant
// first, a continuation bit, the sign in the lowest bit. Values are
// bounded to 32 bits.
func vlq(s string, i int) (int64, int, error) {
	var v int64
	for shift := 0; ; shift += 5 {
		if i == len(s) || s[i] == ',' || s[i] == ';' {
			return 0, i, fmt.Errorf("mappings: a VLQ cut short at byte %d", i)
		}
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return 0, i, fmt.Errorf("mappings: %q at byte %d is no base64 digit", s[i], i)
		}
		if shift > 30 {
			return 0, i, fmt.Errorf("mappings: a VLQ past 32 bits at byte %d", i)
		}
		v |= int64(d&31) << shift
		i++
		if d&32 == 0 {
			break
		}
	}
	if v&1 != 0 {
		return -(v >> 1), i, nil
	}
	return v >> 1, i, nil
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// resolveSource is a map's source as a frame's module: the source root
// prepended, then resolved against the script (the map lies beside its
// bundle: esbuild's ../src/table.js of http://host/app/dist/main.js is
// http://host/app/src/table.js), so that profile.Identify makes it
// relative to the app's root as any script's file; node_modules/ stays in
// it, which anchors a package's files. A source with a scheme of its own
// (webpack://app/./src/table.js) is kept.
func resolveSource(root, src, script string) string {
	if root != "" && !hasScheme(src) {
		src = strings.TrimSuffix(root, "/") + "/" + src
	}
	if hasScheme(src) {
		return src
	}
	if hasScheme(script) {
		base, err1 := url.Parse(script)
		ref, err2 := url.Parse(src)
		if err1 == nil && err2 == nil {
			u := base.ResolveReference(ref)
			u.RawQuery, u.Fragment = "", ""
			return u.String()
		}
	}
	if strings.HasPrefix(src, "/") {
		return src
	}
	return path.Join(path.Dir(script), src)
}

// hasScheme reports whether s starts with a URL scheme ("webpack:",
// "http:"; a drive letter, C:, is none).
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 2 {
		return false
	}
	for k, c := range []byte(s[:i]) {
		letter := c|0x20 >= 'a' && c|0x20 <= 'z'
		if !letter && (k == 0 || (c < '0' || c > '9') && c != '+' && c != '-' && c != '.') {
			return false
		}
	}
	return true
}

// at returns the mapping of the generated 0-based line and column: the
// line's last segment at or before the column, if it names a source.
func (m *sourceMap) at(line, col int64) (mapping, bool) {
	if line < 0 || line >= int64(len(m.lines)) || col < 0 {
		return mapping{}, false
	}
	segs := m.line(line)
	i, _ := slices.BinarySearchFunc(segs, col+1, func(s mapping, c int64) int { return int(int64(s.col) - c) })
	if i == 0 || segs[i-1].source < 0 {
		return mapping{}, false
	}
	return segs[i-1], true
}

// renamed returns the original name of a function V8 names name and
// places at the generated line and column, if a minifier renamed it: the
// function's segment or the one before it has a name and starts where
// name would, right before the start (`function n(`, `n(){`) or before
// "=" or "=function" (`s=()=>`, `s=function(`).
func (m *sourceMap) renamed(line, col int64, name string) (string, bool) {
	segs := m.line(line)
	i, _ := slices.BinarySearchFunc(segs, col+1, func(s mapping, c int64) int { return int(int64(s.col) - c) })
	for _, s := range segs[max(i-2, 0):i] {
		if s.name < 0 {
			continue
		}
		switch col - int64(s.col) - int64(len(name)) {
		case 0, 1, int64(len("=function")):
			return m.names[s.name], true
		}
	}
	return "", false
}

// frame maps a V8 frame (name, script url, 0-based line and column: the
// function's start, its parameters' opening parenthesis) to its original
// source, if the map covers it: Module and File the source, Line its
// 1-based line. A script's top level (an anonymous function at 0:0) stays
// the bundle's: it is no function of the source its first byte maps to.
// The name is V8's unless a minifier renamed the function (the map's
// original name, renamed), or the source's line does not hold it as a
// word up to the function's parameters (head: a class's minified name,
// which V8 gives its constructor), when it is the identifier at the
// original position (constructor). An anonymous function is numbered by
// its place among its source's function starts: "(anonymous #3)"
// (ordinal).
func (m *sourceMap) frame(name string, line, col int64) (profile.Frame, bool) {
	k := v8Frame{name, line, col}
	if r, ok := m.frames[k]; ok {
		return r.frame, r.ok
	}
	f, ok := m.mapFrame(name, line, col)
	if m.frames == nil {
		m.frames = map[v8Frame]mapped{}
	}
	m.frames[k] = mapped{f, ok}
	return f, ok
}

func (m *sourceMap) mapFrame(name string, line, col int64) (profile.Frame, bool) {
	seg, ok := m.at(line, col)
	if !ok || m.sources[seg.source] == "" || name == "(anonymous)" && line == 0 && col == 0 {
		return profile.Frame{}, false
	}
	text := m.contents[seg.source]
	renamed := false
	if name != "(anonymous)" {
		if orig, ok := m.renamed(line, col, name); ok {
			name, renamed = orig, true
		}
		if off := offsetOf(text, seg.line, seg.column); !renamed && text != "" && !hasWord(head(text, off), name) {
			name = identAt(text, off)
		}
	}
	if name == "" || name == "(anonymous)" {
		name = "(anonymous)"
		if n := m.ordinal(int(seg.source), seg.line, seg.column); n > 0 {
			name = fmt.Sprintf("(anonymous #%d)", n)
		}
	}
	src := m.sources[seg.source]
	return profile.Frame{Name: name, Module: src, File: src, Line: int64(seg.line) + 1}, true
}

// hasWord reports whether text holds w as a whole identifier.
func hasWord(text, w string) bool {
	for i := 0; w != ""; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !isIdentByte(text[j-1])) && (j+len(w) == len(text) || !isIdentByte(text[j+len(w)])) {
			return true
		}
		i = j + 1
	}
	return false
}

// head is the line of text around byte off, from its start to the first
// "(" at or after off: where a function's own name is written (function
// f(, f(){, const f = (, f: function().
func head(text string, off int) string {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := len(text)
	if i := strings.IndexAny(text[off:], "(\n"); i >= 0 {
		end = off + i
	}
	return text[start:end]
}

// identAt is the identifier that starts at byte off of text, or "".
func identAt(text string, off int) string {
	end := off
	for end < len(text) && isIdentByte(text[end]) {
		end++
	}
	if end == off || text[off] >= '0' && text[off] <= '9' {
		return ""
	}
	return text[off:end]
}

// offsetOf is the byte offset of the 0-based line and column (UTF-16
// units, as maps count them) in text, clamped to the line's end.
func offsetOf(text string, line, col int32) int {
	off := 0
	for l := int32(0); l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	for units := int32(0); units < col && off < len(text) && text[off] != '\n'; {
		r, size := utf8.DecodeRuneInString(text[off:])
		units += int32(utf16.RuneLen(max(r, 0))) // #nosec G115 -- 1 or 2 UTF-16 units
		off += size
	}
	return off
}

// ordinal is 1 + the number of function starts (functionStarts) in the
// content of source before its 0-based line and column; 0 when the map
// carries no content. It numbers a file's anonymous functions as every
// build of that file does, whichever of them a profile sampled, and a
// function keeps its number when lines above it change but for functions
// added or removed above it in its own file.
func (m *sourceMap) ordinal(source int, line, col int32) int {
	text := m.contents[source]
	if text == "" {
		return 0
	}
	if m.starts == nil {
		m.starts = make([][]int, len(m.sources))
	}
	if m.starts[source] == nil {
		m.starts[source] = functionStarts(text)
	}
	n, _ := slices.BinarySearch(m.starts[source], offsetOf(text, line, col))
	return n + 1
}

// functionStarts lists the byte offsets of the words "function" and the
// arrows "=>" of a JavaScript source: what numbers its anonymous
// functions. A scan of the text, not a parse: one in a string or a comment
// counts too, which changes no number between two builds of one source.
func functionStarts(text string) []int {
	var starts []int
	for i := 0; i+1 < len(text); i++ {
		switch {
		case text[i] == '=' && text[i+1] == '>':
			starts = append(starts, i)
		case strings.HasPrefix(text[i:], "function") && (i == 0 || !isIdentByte(text[i-1])) &&
			(i+8 == len(text) || !isIdentByte(text[i+8])):
			starts = append(starts, i)
		}
	}
	return starts
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80
}

// scriptMaps are the source maps of one profile's scripts, each asked
// for (Options.SourceMaps) and decoded once.
type scriptMaps struct {
	get  func(url string) ([]byte, error)
	maps map[string]*sourceMap // nil: the script has none
}

func newScriptMaps(o Options) *scriptMaps {
	if o.SourceMaps == nil {
		return nil
	}
	return &scriptMaps{get: o.SourceMaps, maps: map[string]*sourceMap{}}
}

// frame maps V8's frame through its script's source map (sourceMap.frame);
// f is returned as it is when there is none or it does not cover the
// frame. A map that cannot be read or decoded is an error.
func (s *scriptMaps) frame(f profile.Frame, url string, line, col int64, name string) (profile.Frame, error) {
	if s == nil || url == "" || line < 0 || col < 0 {
		return f, nil
	}
	m, seen := s.maps[url]
	if !seen {
		data, err := s.get(url)
		if err != nil {
			return f, fileError(name, "the source map of %s: %v", url, err)
		}
		if data != nil {
			if m, err = parseSourceMap(data, url); err != nil {
				return f, fileError(name, "the source map of %s: %v", url, err)
			}
		}
		s.maps[url] = m
	}
	if m == nil {
		return f, nil
	}
	if g, ok := m.frame(f.Name, line, col); ok {
		return g, nil
	}
	return f, nil
}
