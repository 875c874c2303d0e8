package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The JSON rows' shared steps: reading a document, its errors with their
// offsets, and the looks at a head that detection takes.

// hasKeys reports whether a JSON head has each of keys as an object key
// (a quoted string followed by a colon).
func hasKeys(head []byte, keys ...string) bool {
	for _, k := range keys {
		i := bytes.Index(head, []byte(`"`+k+`"`))
		if i < 0 || !bytes.HasPrefix(bytes.TrimLeft(head[i+len(k)+2:], " \t\r\n"), []byte(":")) {
			return false
		}
	}
	return true
}

// isJSONObject reports whether head starts, after white space, with "{".
func isJSONObject(head []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{"))
}

// looksLikeJSON reports whether head starts, after white space, like a
// JSON object or array.
func looksLikeJSON(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// jsonStream reads a JSON document value by value with encoding/json's
// token stream: memory holds the value being decoded (an element of an
// array, a number), never the document. Its errors name the file and the
// offset of the value in which the error is.
type jsonStream struct {
	dec  *json.Decoder
	name string
	// src is the input; pending what numbers read ahead of the decoder's
	// place and base the offset of the decoder's start, the decoder being
	// made anew after each array numbers scans.
	src     *bufio.Reader
	pending *bytes.Reader
	base    int64
	// nesting holds the delimiters of the arrays and objects the tokens
	// read are in, which a new decoder is put back in.
	nesting []json.Delim
}

// streamJSON is the token stream of what r holds, inflated as it is read
// when it is gzip (offsets then count inflated bytes).
func streamJSON(r io.Reader, name string) (*jsonStream, error) {
	br := bufio.NewReader(r)
	in, err := gunzipped(br, name)
	if err != nil {
		return nil, err
	}
	if in != io.Reader(br) {
		br = bufio.NewReader(inflating{in})
	}
	return &jsonStream{dec: json.NewDecoder(br), name: name, src: br, pending: bytes.NewReader(nil)}, nil
}

// offset is the input offset after the last token or value read.
func (s *jsonStream) offset() int64 { return s.base + s.dec.InputOffset() }

// fail is err in the file's terms; start is the offset the value being
// decoded starts after. I/O errors of the reader stay wrapped.
func (s *jsonStream) fail(err error, start int64) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var gz *gzipStreamError
	switch {
	case errors.As(err, &gz):
		return gzipFailure(s.name, -1, gz.err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return offsetError(s.name, s.offset(), "bad JSON: unexpected end of JSON input")
	case errors.As(err, &syntax):
		// The decoder's own offset counts only the bytes it scanned
		// value by value; its position is the bad token's, or the start
		// of the value holding it.
		return offsetError(s.name, s.offset(), "bad JSON: %v", err)
	case errors.As(err, &typ):
		return offsetError(s.name, start+typ.Offset, "bad JSON: %v", err)
	}
	return fmt.Errorf("%s: %w", s.name, err)
}

// decode decodes the next value into v.
func (s *jsonStream) decode(v any) error {
	start := s.offset()
	if err := s.dec.Decode(v); err != nil {
		return s.fail(err, start)
	}
	return nil
}

func (s *jsonStream) token() (json.Token, error) {
	start := s.offset()
	t, err := s.dec.Token()
	if err != nil {
		return nil, s.fail(err, start)
	}
	switch t {
	case json.Delim('['), json.Delim('{'):
		s.nesting = append(s.nesting, t.(json.Delim))
	case json.Delim(']'), json.Delim('}'):
		s.nesting = s.nesting[:max(len(s.nesting)-1, 0)]
	}
	return t, nil
}

// open reads the delimiter that opens the next value, which must be open
// ('[' or '{') or null (then null is true and the value is read).
func (s *jsonStream) open(open json.Delim, what string) (null bool, err error) {
	start := s.offset()
	t, err := s.token()
	if err != nil {
		return false, err
	}
	if t == nil {
		return true, nil
	}
	if t != open {
		return false, offsetError(s.name, start, "bad JSON: %s is %s, not %s", what, describeToken(t), describeToken(open))
	}
	return false, nil
}

// describeToken names a token in errors.
func describeToken(t json.Token) string {
	switch t := t.(type) {
	case json.Delim:
		return map[json.Delim]string{'[': "an array", '{': "an object"}[t]
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// object reads the object that comes next (or null), calling field with
// each key; field reads the key's value (skip if it does not want it).
// Keys are matched by the caller as encoding/json does: with
// strings.EqualFold.
func (s *jsonStream) object(what string, field func(key string) error) error {
	_, err := s.objectOrNull(what, field)
	return err
}

// objectOrNull is object, saying whether the value was null.
func (s *jsonStream) objectOrNull(what string, field func(key string) error) (null bool, err error) {
	if null, err := s.open('{', what); null || err != nil {
		return null, err
	}
	return false, s.fields(field)
}

// fields reads the fields of an object whose '{' is read, and its '}'.
func (s *jsonStream) fields(field func(key string) error) error {
	for s.dec.More() {
		t, err := s.token()
		if err != nil {
			return err
		}
		if err := field(t.(string)); err != nil { // Token allows only a string key here
			return err
		}
	}
	_, err := s.token() // '}'
	return err
}

// array reads the array that comes next (or null), calling elem for each
// element; elem reads the element.
func (s *jsonStream) array(what string, elem func() error) error {
	if null, err := s.open('[', what); null || err != nil {
		return err
	}
	for s.dec.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err := s.token() // ']'
	return err
}

// decodeList reads the array what that comes next (or null) into list, an
// element decoded at a time, refusing more than maxItems items.
func decodeList[T any](s *jsonStream, what, items string, list *[]T) error {
	*list = nil
	return s.array(what, func() error {
		if err := s.within(len(*list), items); err != nil {
			return err
		}
		var v T
		err := s.decode(&v)
		*list = append(*list, v)
		return err
	})
}

// within refuses a run of n items of what that would hold more than
// maxItems.
func (s *jsonStream) within(n int, what string) error {
	return s.withinAt(n, what, s.offset())
}

// withinAt is within for an item at offset at.
func (s *jsonStream) withinAt(n int, what string, at int64) error {
	if n >= maxItems {
		return offsetError(s.name, at, "more than %d %s: more than a run holds", maxItems, what)
	}
	return nil
}

// skip reads the next value token by token: a big value the reader does
// not want is never held whole.
func (s *jsonStream) skip() error {
	depth := 0
	for {
		t, err := s.token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// end checks that nothing but white space follows the document.
func (s *jsonStream) end() error {
	start := s.offset()
	if _, err := s.dec.Token(); err != io.EOF {
		if err != nil {
			return s.fail(err, start)
		}
		return offsetError(s.name, start, "bad JSON: data after the top-level value")
	}
	return nil
}
