package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// A value the jsonScanner meets whole (a trace's event) is read in
// place from the bytes it has read ahead, a jsonWindow over them, without
// the token stream's cost per byte and allocation per value: when the
// value runs past them, more are read and the value is read again.

// errShort is a value running past the window's end.
var errShort = errors.New("the value runs past the bytes read")

// maxValueDepth is how deep encoding/json lets a value nest.
const maxValueDepth = 10000

// windowError is bad JSON at byte at of a window.
type windowError struct {
	at     int
	reason string
}

func (e *windowError) Error() string { return e.reason }

// jsonWindow reads JSON values from b, i the next byte's index.
type jsonWindow struct {
	b []byte
	i int
}

// whole calls read with a window on the input from the scanner's place,
// which must read one value: if the value runs past the window, read is
// called again on a window holding more.
func (sc *jsonScanner) whole(s *jsonStream, read func(v *jsonWindow) error) error {
	for {
		sc.view = jsonWindow{b: sc.buf} // not a new one: read keeps it on the heap
		err := read(&sc.view)
		if err == nil {
			sc.buf = sc.buf[sc.view.i:]
			sc.at += int64(sc.view.i)
			return nil
		}
		if err != errShort {
			if bad := (*windowError)(nil); errors.As(err, &bad) {
				return offsetError(s.name, sc.at+int64(bad.at), "bad JSON: %s", bad.reason)
			}
			return err
		}
		if err := sc.more(); err == io.EOF {
			return offsetError(s.name, sc.at+int64(len(sc.buf)), "bad JSON: unexpected end of JSON input")
		} else if err != nil {
			return sc.fail(s, err)
		}
	}
}

// more reads into buf at least as much again as it holds (64 KiB at
// least, however little a read of the input gives: a value is read again
// once for each doubling), io.EOF when the input has no more.
func (sc *jsonScanner) more() error {
	n := len(sc.buf)
	if want := n + max(n, 64<<10); cap(sc.window) < want {
		sc.window = make([]byte, 0, want)
	}
	w := append(sc.window[:0], sc.buf...) // buf may lie in window: moved, not lost
	m, err := io.ReadFull(sc.src, w[n:cap(w)])
	sc.buf = w[:n+m]
	if err == io.ErrUnexpectedEOF { // the input's end, after more
		return nil
	}
	return err
}

// fail is bad JSON at byte at.
func (v *jsonWindow) fail(at int, format string, args ...any) error {
	return &windowError{at, fmt.Sprintf(format, args...)}
}

// space is the next byte after white space, not consumed.
func (v *jsonWindow) space() (byte, error) {
	for ; v.i < len(v.b); v.i++ {
		if c := v.b[v.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
	return 0, errShort
}

// asWritten marks the bytes a string holds as they are: not a quote, a
// backslash, a control character or a byte past ASCII.
var asWritten = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at v.i, its text as written (quotes included);
// plain is false when it has escapes or bytes past ASCII, which decoding
// changes.
func (v *jsonWindow) str() (text []byte, plain bool, err error) {
	start, plain := v.i, true
	for i := v.i + 1; i < len(v.b); i++ {
		for i < len(v.b) && asWritten[v.b[i]] {
			i++
		}
		if i == len(v.b) {
			break
		}
		switch c := v.b[i]; {
		case c == '"':
			v.i = i + 1
			return v.b[start:v.i], plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(v.b) {
				return nil, false, errShort
			}
			switch v.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(v.b) {
						return nil, false, errShort
					}
					if c := v.b[k]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
						return nil, false, v.fail(k, "invalid character %s in \\u hexadecimal character escape", describeByte(c))
					}
				}
				i += 5
			default:
				return nil, false, v.fail(i+1, "invalid character %s in string escape code", describeByte(v.b[i+1]))
			}
		case c < ' ':
			return nil, false, v.fail(i, "invalid character %s in string literal", describeByte(c))
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return nil, false, errShort
}

// number reads the number at v.i, its text as written.
func (v *jsonWindow) number() ([]byte, error) {
	i := v.i
	for ; i < len(v.b); i++ {
		if c := v.b[i]; !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
	}
	if i == len(v.b) {
		return nil, errShort // the number may go on
	}
	tok := v.b[v.i:i]
	if !isJSONNumber(tok) {
		return nil, v.fail(v.i, "invalid number %q", tok)
	}
	v.i = i
	return tok, nil
}

// literal reads true, false or null, word, at v.i.
func (v *jsonWindow) literal(word string) error {
	for k := range len(word) {
		if v.i+k >= len(v.b) {
			return errShort
		}
		if v.b[v.i+k] != word[k] {
			return v.fail(v.i+k, "invalid character %s in literal %s (expecting %q)", describeByte(v.b[v.i+k]), word, word[k])
		}
	}
	v.i += len(word)
	return nil
}

// skip reads the value that comes next, at depth (its container's is
// depth-1), its text as written.
func (v *jsonWindow) skip(depth int) ([]byte, error) {
	c, err := v.space()
	if err != nil {
		return nil, err
	}
	start := v.i
	switch {
	case c == '{':
		err = v.object(depth, func([]byte, bool) error {
			_, err := v.skip(depth + 1)
			return err
		})
	case c == '[':
		err = v.array(depth)
	case c == '"':
		_, _, err = v.str()
	case c == 't':
		err = v.literal("true")
	case c == 'f':
		err = v.literal("false")
	case c == 'n':
		err = v.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, err = v.number()
	default:
		err = v.fail(v.i, "invalid character %s looking for beginning of value", describeByte(c))
	}
	if err != nil {
		return nil, err
	}
	return v.b[start:v.i], nil
}

// object reads the object at v.i, at depth, calling field with each key
// (as str gives it) to read its value.
func (v *jsonWindow) object(depth int, field func(key []byte, plain bool) error) error {
	if depth > maxValueDepth {
		return v.fail(v.i, "exceeded max depth")
	}
	v.i++ // '{'
	c, err := v.space()
	if err == nil && c == '}' {
		v.i++
		return nil
	}
	for err == nil {
		if c != '"' {
			return v.fail(v.i, "invalid character %s looking for beginning of object key string", describeByte(c))
		}
		var key []byte
		var plain bool
		if key, plain, err = v.str(); err != nil {
			return err
		}
		if c, err = v.space(); err != nil {
			return err
		} else if c != ':' {
			return v.fail(v.i, "invalid character %s after object key", describeByte(c))
		}
		v.i++
		if err := field(key, plain); err != nil {
			return err
		}
		if c, err = v.space(); err != nil {
			return err
		}
		v.i++
		switch c {
		case '}':
			return nil
		case ',':
		default:
			return v.fail(v.i-1, "invalid character %s after object key:value pair", describeByte(c))
		}
		c, err = v.space()
	}
	return err
}

// objectOrNull reads the object at v.i as object does, or null (no
// fields); what names the value in errors.
func (v *jsonWindow) objectOrNull(what string, depth int, field func(key []byte, plain bool) error) error {
	c, err := v.space()
	switch {
	case err != nil:
		return err
	case c == 'n':
		return v.literal("null")
	case c != '{':
		return v.mistyped(what, "an object", depth)
	}
	return v.object(depth, field)
}

// array reads the array at v.i, at depth.
func (v *jsonWindow) array(depth int) error {
	if depth > maxValueDepth {
		return v.fail(v.i, "exceeded max depth")
	}
	v.i++ // '['
	c, err := v.space()
	if err == nil && c == ']' {
		v.i++
		return nil
	}
	for err == nil {
		if _, err := v.skip(depth + 1); err != nil {
			return err
		}
		if c, err = v.space(); err != nil {
			return err
		}
		v.i++
		switch c {
		case ']':
			return nil
		case ',':
		default:
			return v.fail(v.i-1, "invalid character %s after array element", describeByte(c))
		}
	}
	return err
}

// describeValue names the kind of value that starts with c in errors.
func describeValue(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// foldKey is key, as str gives it, folded into lower for a switch on
// the lower-case ASCII names of a struct's fields: it equals a name when
// encoding/json matches key to that field (equal but for case, Unicode's
// folding included: "ſ" is an "s"). Nil when it can match none.
func foldKey(key []byte, plain bool, lower *[8]byte) []byte {
	n := 0
	if plain {
		for _, c := range key[1 : len(key)-1] {
			if n == len(lower) {
				return nil
			}
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[n] = c
			n++
		}
		return lower[:n]
	}
	var k string
	_ = json.Unmarshal(key, &k) // str checked its syntax
	for _, r := range k {
		least := r // of the runes that fold to r: ASCII if one is
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		if n == len(lower) || least >= utf8.RuneSelf {
			return nil
		}
		lower[n] = byte(unicode.ToLower(least)) // #nosec G115 -- ASCII, checked above
		n++
	}
	return lower[:n]
}

// text reads a string, the value of field at depth, into x (its text as
// written, not decoded): null leaves x as it was, as encoding/json leaves a
// string.
func (v *jsonWindow) text(x *jsonText, field string, depth int) error {
	c, err := v.space()
	switch {
	case err != nil:
		return err
	case c == '"':
		x.text, x.plain, err = v.str()
		return err
	case c == 'n':
		return v.literal("null")
	}
	return v.mistyped(field, "a string", depth)
}

// float reads a number, the value of field at depth, into f: null leaves
// f as it was.
func (v *jsonWindow) float(f *float64, field string, depth int) error {
	c, err := v.space()
	switch {
	case err != nil:
		return err
	case c == 'n':
		return v.literal("null")
	case c != '-' && (c < '0' || c > '9'):
		return v.mistyped(field, "a number", depth)
	}
	at := v.i
	tok, err := v.number()
	if err != nil {
		return err
	}
	if n, ok := parseInt(tok); ok && (n != 0 || tok[0] != '-') { // -0 is strconv's
		*f = float64(n)
		return nil
	}
	x, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return v.fail(at, "%s is %s, out of a float64's range", field, tok)
	}
	*f = x
	return nil
}

// mistyped refuses the value at v.i (at depth), which field cannot hold:
// bad JSON first, as encoding/json checks a value's syntax before
// decoding it.
func (v *jsonWindow) mistyped(field, want string, depth int) error {
	at := v.i
	if _, err := v.skip(depth); err != nil {
		return err
	}
	return v.fail(at, "%s is %s, not %s", field, describeValue(v.b[at]), want)
}

// jsonText is a string as written, nil when absent; plain as str says.
type jsonText struct {
	text  []byte
	plain bool
}

// String decodes the string as encoding/json does.
func (x jsonText) String() string {
	if x.text == nil {
		return ""
	}
	if x.plain {
		return string(x.text[1 : len(x.text)-1])
	}
	var s string
	_ = json.Unmarshal(x.text, &s) // str checked its syntax
	return s
}

// is reports whether x decodes to s, without decoding it when plain.
func (x jsonText) is(s string) bool {
	switch {
	case x.text == nil:
		return s == ""
	case x.plain:
		return string(x.text[1:len(x.text)-1]) == s
	}
	return x.String() == s
}
