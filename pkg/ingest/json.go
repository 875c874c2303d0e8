package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// The JSON rows' shared steps: reading a document, its errors with their
// offsets, and the looks at a head that detection takes.

// readJSON decodes a whole JSON document of at most MaxFileSize bytes
// into v. encoding/json refuses nesting deeper than 10000 levels.
func readJSON(r io.Reader, name string, v any) error {
	data, err := readWhole(r, name)
	if err != nil {
		return err
	}
	return decodeJSON(data, name, v)
}

// decodeJSON decodes data into v, its errors naming the file and offset.
func decodeJSON(data []byte, name string, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return offsetError(name, syntax.Offset, "bad JSON: %v", err)
		case errors.As(err, &typ):
			return offsetError(name, typ.Offset, "bad JSON: %v", err)
		}
		return fileError(name, "bad JSON: %v", err)
	}
	return nil
}

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
