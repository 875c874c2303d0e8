package ingest

import (
	"bufio"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// jsonScanner reads JSON byte by byte where the token stream's cost per
// value is most of a read (the long arrays of numbers, V8's nodes): from
// buf, then src; at is the offset of buf's first byte. It checks the
// syntax as encoding/json does, with encoding/json's words for what is
// wrong, and decodes strings as it does.
type jsonScanner struct {
	buf []byte
	src *bufio.Reader
	at  int64
	tok []byte // the number or string last read
	// quoted is a string with escapes, quoted again for encoding/json.
	quoted []byte
	// window holds buf when more has read into it; view is the window
	// whole reads a value in (jsonvalues.go).
	window []byte
	view   jsonWindow
}

// maxDecodeDepth is encoding/json's bound on the nesting of a value.
const maxDecodeDepth = 10000

// fail is an error of reading in the file's terms.
func (sc *jsonScanner) fail(s *jsonStream, err error) error {
	if err == io.EOF {
		return offsetError(s.name, sc.at, "bad JSON: unexpected end of JSON input")
	}
	return s.fail(err, sc.at)
}

// syntax is the error of the byte c at sc.at, what says where it is not
// allowed.
func (sc *jsonScanner) syntax(s *jsonStream, c byte, what string) error {
	return offsetError(s.name, sc.at, "bad JSON: invalid character %s %s", describeByte(c), what)
}

// peek is the next byte, not consumed.
func (sc *jsonScanner) peek() (byte, error) {
	if len(sc.buf) == 0 {
		if err := sc.fill(); err != nil {
			return 0, err
		}
	}
	return sc.buf[0], nil
}

// fill takes what src holds buffered as buf, once buf is used up: src's
// buffer stays as it is until src reads again, at the next fill.
func (sc *jsonScanner) fill() error {
	if _, err := sc.src.Peek(1); err != nil {
		return err
	}
	sc.buf, _ = sc.src.Peek(sc.src.Buffered())
	_, _ = sc.src.Discard(len(sc.buf)) // what Peek gave is there
	return nil
}

// next consumes the byte peek gave.
func (sc *jsonScanner) next() {
	sc.buf = sc.buf[1:]
	sc.at++
}

// nonSpace is the next byte after white space, not consumed.
func (sc *jsonScanner) nonSpace() (byte, error) {
	for {
		c, err := sc.peek()
		if err != nil || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, err
		}
		sc.next()
	}
}

// elements reads an array's elements after its '[' through its ']', elem
// reading each (n counts them, c is its first byte).
func (sc *jsonScanner) elements(s *jsonStream, elem func(n int, c byte) error) error {
	for n := 0; ; n++ {
		c, err := sc.nonSpace()
		if err != nil {
			return sc.fail(s, err)
		}
		if n == 0 && c == ']' {
			sc.next()
			return nil
		}
		if err := elem(n, c); err != nil {
			return err
		}
		if c, err = sc.nonSpace(); err != nil {
			return sc.fail(s, err)
		}
		if c != ']' && c != ',' {
			return sc.syntax(s, c, "after array element")
		}
		sc.next()
		if c == ']' {
			return nil
		}
	}
}

// fields reads an object's members after its '{' through its '}', field
// reading each value (c its first byte); key, the member's name decoded,
// holds until field reads on.
func (sc *jsonScanner) fields(s *jsonStream, field func(key []byte, c byte) error) error {
	for n := 0; ; n++ {
		c, err := sc.nonSpace()
		if err != nil {
			return sc.fail(s, err)
		}
		if n == 0 && c == '}' {
			sc.next()
			return nil
		}
		if c != '"' {
			return sc.syntax(s, c, "looking for beginning of object key string")
		}
		key, err := sc.str(s)
		if err != nil {
			return err
		}
		if c, err = sc.nonSpace(); err != nil {
			return sc.fail(s, err)
		}
		if c != ':' {
			return sc.syntax(s, c, "after object key")
		}
		sc.next()
		if c, err = sc.nonSpace(); err != nil {
			return sc.fail(s, err)
		}
		if err := field(key, c); err != nil {
			return err
		}
		if c, err = sc.nonSpace(); err != nil {
			return sc.fail(s, err)
		}
		if c != '}' && c != ',' {
			return sc.syntax(s, c, "after object key:value pair")
		}
		sc.next()
		if c == '}' {
			return nil
		}
	}
}

// skip reads the value whose first byte is c, nested depth deep (1 for
// the top value encoding/json decodes), checking its syntax.
func (sc *jsonScanner) skip(s *jsonStream, c byte, depth int) error {
	switch c {
	case '{', '[':
		if depth > maxDecodeDepth {
			return offsetError(s.name, sc.at, "bad JSON: exceeded max depth")
		}
		sc.next()
		if c == '{' {
			return sc.fields(s, func(_ []byte, c byte) error { return sc.skip(s, c, depth+1) })
		}
		return sc.elements(s, func(_ int, c byte) error { return sc.skip(s, c, depth+1) })
	case '"':
		_, err := sc.str(s)
		return err
	case 't':
		return sc.literal(s, "true")
	case 'f':
		return sc.literal(s, "false")
	case 'n':
		return sc.literal(s, "null")
	}
	if c == '-' || c >= '0' && c <= '9' {
		return sc.readNumber(s)
	}
	return sc.syntax(s, c, "looking for beginning of value")
}

// literal reads the literal word (true, false, null), which is next.
func (sc *jsonScanner) literal(s *jsonStream, word string) error {
	for i := range len(word) {
		c, err := sc.peek()
		if err != nil {
			return sc.fail(s, err)
		}
		if c != word[i] {
			return sc.syntax(s, c, "in literal "+word+" (expecting "+describeByte(word[i])+")")
		}
		sc.next()
	}
	return nil
}

// maxNumberText is how much of a number tok keeps: more than an int64's
// text, so that a longer number is no int64.
const maxNumberText = 24

// readNumber reads the number that is next by JSON's grammar, its first
// maxNumberText bytes into tok.
func (sc *jsonScanner) readNumber(s *jsonStream) error {
	sc.tok = sc.tok[:0]
	st := numberStart
	for {
		c, err := sc.peek()
		if err == io.EOF {
			break // the end of the container is missing, which its reader finds
		}
		if err != nil {
			return sc.fail(s, err)
		}
		next := st.step(c)
		if next == numberOver {
			if !st.complete() {
				return sc.syntax(s, c, "in numeric literal")
			}
			return nil
		}
		st = next
		if len(sc.tok) < maxNumberText {
			sc.tok = append(sc.tok, c)
		}
		sc.next()
	}
	if !st.complete() {
		return sc.fail(s, io.EOF)
	}
	return nil
}

// numberState is how far a number has come in JSON's grammar.
type numberState uint8

const (
	numberStart    numberState = iota
	numberMinus                // -
	numberZero                 // a leading 0: no digit may follow
	numberInteger              // 1-9, then digits
	numberDot                  // .
	numberFraction             // digits after the dot
	numberE                    // e or E
	numberSign                 // the exponent's sign
	numberExponent             // the exponent's digits
	numberOver                 // c is no part of the number
)

// step is the state after the byte c.
func (st numberState) step(c byte) numberState {
	digit := c >= '0' && c <= '9'
	switch {
	case digit && (st == numberInteger || st == numberFraction || st == numberExponent):
		return st
	case digit && (st == numberStart || st == numberMinus):
		if c == '0' {
			return numberZero
		}
		return numberInteger
	case digit && st == numberDot:
		return numberFraction
	case digit && (st == numberE || st == numberSign):
		return numberExponent
	case c == '-' && st == numberStart:
		return numberMinus
	case c == '.' && (st == numberZero || st == numberInteger):
		return numberDot
	case (c == 'e' || c == 'E') && (st == numberZero || st == numberInteger || st == numberFraction):
		return numberE
	case (c == '+' || c == '-') && st == numberE:
		return numberSign
	}
	return numberOver
}

// complete reports whether a number may end in state st.
func (st numberState) complete() bool {
	return st == numberZero || st == numberInteger || st == numberFraction || st == numberExponent
}

// plainASCII reports whether c is ASCII that stands for itself in a JSON
// string.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string whose '"' is next into tok, decoded as
// encoding/json decodes it: escapes resolved (by encoding/json itself,
// which few strings need), and each byte of bad UTF-8 made U+FFFD.
func (sc *jsonScanner) str(s *jsonStream) ([]byte, error) {
	sc.next() // '"'
	sc.tok = sc.tok[:0]
	escaped, ascii := false, true
	for {
		if len(sc.buf) == 0 {
			if err := sc.fill(); err != nil {
				return nil, sc.fail(s, err)
			}
		}
		i := 0
		for i < len(sc.buf) && plainASCII[sc.buf[i]] {
			i++
		}
		sc.tok = append(sc.tok, sc.buf[:i]...)
		sc.buf, sc.at = sc.buf[i:], sc.at+int64(i)
		if len(sc.buf) == 0 {
			continue
		}
		switch c := sc.buf[0]; {
		case c == '"':
			sc.next()
			return sc.decoded(s, escaped, ascii)
		case c == '\\':
			escaped = true
			if err := sc.escape(s); err != nil {
				return nil, err
			}
		case c >= 0x80:
			ascii = false
			sc.tok = append(sc.tok, c)
			sc.next()
		default:
			return nil, sc.syntax(s, c, "in string literal")
		}
	}
}

// escape reads the escape whose '\' is next into tok, as it is.
func (sc *jsonScanner) escape(s *jsonStream) error {
	sc.tok = append(sc.tok, '\\')
	sc.next()
	c, err := sc.peek()
	if err != nil {
		return sc.fail(s, err)
	}
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
	case 'u':
		for range 4 {
			sc.tok = append(sc.tok, c)
			sc.next()
			if c, err = sc.peek(); err != nil {
				return sc.fail(s, err)
			}
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return sc.syntax(s, c, `in \u hexadecimal character escape`)
			}
		}
	default:
		return sc.syntax(s, c, "in string escape code")
	}
	sc.tok = append(sc.tok, c)
	sc.next()
	return nil
}

// decoded is tok, a string's text between its quotes, decoded (ascii: it
// has no byte of UTF-8 beyond ASCII to check).
func (sc *jsonScanner) decoded(s *jsonStream, escaped, ascii bool) ([]byte, error) {
	switch {
	case escaped:
		sc.quoted = append(append(append(sc.quoted[:0], '"'), sc.tok...), '"')
		var v string
		if err := json.Unmarshal(sc.quoted, &v); err != nil { // the syntax is checked: not expected
			return nil, offsetError(s.name, sc.at, "bad JSON: %v", err)
		}
		sc.tok = append(sc.tok[:0], v...)
	case !ascii && !utf8.Valid(sc.tok):
		sc.tok = append(sc.tok[:0], RepairUTF8(string(sc.tok))...)
	}
	return sc.tok, nil
}
