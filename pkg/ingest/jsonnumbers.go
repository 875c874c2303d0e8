package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// The long arrays of numbers (V8's samples and time deltas, speedscope's
// weights, Gecko's columns) are most of a profile's bytes: they are
// scanned here byte by byte, without the token stream's allocation per
// value and its cost per byte.

// scan reads the array that comes next (or null) with a jsonScanner,
// its '[' read, then goes back to the token stream.
func (s *jsonStream) scan(what string, scan func(*jsonScanner) error) error {
	if null, err := s.open('[', what); null || err != nil {
		return err
	}
	sc := s.scanner()
	if err := scan(sc); err != nil {
		return err
	}
	s.nesting = s.nesting[:len(s.nesting)-1]    // the array's ']', which sc read
	return s.resume(bytes.Clone(sc.buf), sc.at) // sc.buf may be src's buffer, which the decoder reads into
}

// scanner is a jsonScanner reading on from the token stream's place.
func (s *jsonStream) scanner() *jsonScanner {
	// The decoder has read ahead: what it holds unread comes first.
	rest, _ := io.ReadAll(io.MultiReader(s.dec.Buffered(), s.pending))
	return &jsonScanner{buf: rest, src: s.src, at: s.offset()}
}

// numbers reads the flat array of numbers and nulls (or null) that comes
// next, calling each with every element's text ("null" for null) and its
// offset; the text is valid only during the call.
func (s *jsonStream) numbers(what string, each func(tok []byte, at int64) error) error {
	return s.scan(what, func(sc *jsonScanner) error {
		return sc.list(s, what, func(c byte) error { return sc.number(s, what, c, each) })
	})
}

// numberLists reads the array of flat arrays of numbers (or null) that
// comes next: each is called with every number of a list, as numbers
// calls it, and done at each list's end (a null list is an empty one).
func (s *jsonStream) numberLists(what string, each func(tok []byte, at int64) error, done func() error) error {
	return s.scan(what, func(sc *jsonScanner) error {
		number := func(c byte) error { return sc.number(s, what, c, each) }
		return sc.list(s, what, func(c byte) error {
			switch c {
			case '[':
				sc.next()
				if err := sc.list(s, what, number); err != nil {
					return err
				}
			case 'n':
				if err := sc.number(s, what, c, func(tok []byte, at int64) error {
					if string(tok) != "null" {
						return offsetError(s.name, at, "bad JSON: %s holds %s, not an array", what, tok)
					}
					return nil
				}); err != nil {
					return err
				}
			default:
				return offsetError(s.name, sc.at, "bad JSON: %s holds %s, not an array", what, describeByte(c))
			}
			return done()
		})
	})
}

// resume makes a new decoder that reads rest, then the input, from offset
// at, within the arrays and objects the array just read was in: it is
// given first a document that opens them and ends with a value in the
// innermost, read here: an empty string, which what follows cannot make
// part of a longer value (a number would take the ".5" of "[1].5").
func (s *jsonStream) resume(rest []byte, at int64) error {
	var prefix []byte
	tokens := 1
	for _, d := range s.nesting {
		if d == '{' {
			prefix = append(prefix, `{"":`...)
			tokens += 2
		} else {
			prefix = append(prefix, '[')
			tokens++
		}
	}
	prefix = append(prefix, `""`...)
	s.pending = bytes.NewReader(rest)
	s.base = at - int64(len(prefix))
	s.dec = json.NewDecoder(io.MultiReader(bytes.NewReader(prefix), s.pending, s.src))
	for range tokens {
		if _, err := s.dec.Token(); err != nil {
			return s.fail(err, at)
		}
	}
	return nil
}

// ints reads an array of integers (or null), calling add with each, null
// being 0 as encoding/json decodes it; at most maxItems of them.
func (s *jsonStream) ints(what string, add func(int64)) error {
	return s.numbers(what, func(tok []byte, at int64) error {
		n, err := s.integer(tok, at, what)
		add(n)
		return err
	})
}

// integer is tok, an element of what at offset at, as an int64 (null: 0).
func (s *jsonStream) integer(tok []byte, at int64, what string) (int64, error) {
	if string(tok) == "null" {
		return 0, nil
	}
	n, ok := parseInt(tok)
	if !ok {
		return 0, offsetError(s.name, at, "bad JSON: %s holds %s, not an int64", what, tok)
	}
	return n, nil
}

// float is tok, an element of what at offset at, as a float64 (null: 0,
// as encoding/json decodes it).
func (s *jsonStream) float(tok []byte, at int64, what string) (float64, error) {
	if string(tok) == "null" {
		return 0, nil
	}
	if n, ok := parseInt(tok); ok {
		return float64(n), nil // the usual weight, without strconv's allocation
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, offsetError(s.name, at, "bad JSON: %s holds %s, not a float64", what, tok)
	}
	return f, nil
}

// parseInt is the JSON number tok as an int64, ok false when it has a
// fraction or exponent or does not fit; unlike strconv, it allocates
// nothing.
func parseInt(tok []byte) (n int64, ok bool) {
	neg := len(tok) > 0 && tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) == 0 || len(tok) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true // #nosec G115 -- -u wraps to the negative value, 2^63 included
	case !neg && u < 1<<63:
		return int64(u), true // #nosec G115 -- u < 2^63
	}
	return 0, false
}

// list reads the elements after '[' through ']', at most maxItems of
// them, elem reading each (c is its first byte).
func (sc *jsonScanner) list(s *jsonStream, what string, elem func(c byte) error) error {
	var end int64 // of the element before, where one too many is refused
	return sc.elements(s, func(n int, c byte) error {
		if err := s.withinAt(n, what, end); err != nil {
			return err
		}
		err := elem(c)
		end = sc.at
		return err
	})
}

// number reads a number or null (c its first byte), calling each with it.
func (sc *jsonScanner) number(s *jsonStream, what string, c byte, each func(tok []byte, at int64) error) error {
	at := sc.at
	if err := sc.token(); err != nil {
		return sc.fail(s, err)
	}
	if !isJSONNumber(sc.tok) && string(sc.tok) != "null" {
		if len(sc.tok) == 0 {
			return offsetError(s.name, at, "bad JSON: %s holds %s, not a number", what, describeByte(c))
		}
		return offsetError(s.name, at, "bad JSON: %s holds %q, not a number", what, sc.tok)
	}
	return each(sc.tok, at)
}

// token reads the bytes a number or null may hold into sc.tok.
func (sc *jsonScanner) token() error {
	sc.tok = sc.tok[:0]
	for {
		c, err := sc.peek()
		if err == io.EOF && len(sc.tok) > 0 {
			return nil // the array's end is missing, which the caller finds
		}
		if err != nil {
			return err
		}
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || c >= 'a' && c <= 'z') {
			return nil
		}
		sc.tok = append(sc.tok, c)
		sc.next()
		if len(sc.tok) > 64 {
			return nil // no number is that long: the caller refuses it
		}
	}
}

// isJSONNumber reports whether tok is a number by JSON's grammar.
func isJSONNumber(tok []byte) bool {
	st := numberStart
	for _, c := range tok {
		if st = st.step(c); st == numberOver {
			return false
		}
	}
	return st.complete()
}

// describeByte quotes a byte of input for an error.
func describeByte(c byte) string {
	return fmt.Sprintf("%q", rune(c))
}
