package ingest

import (
	"fmt"
	"strings"
)

// Error describes bad input on one line: which file, where in it, and why.
// Parse returns it (as *Error) for every problem with the content of a file;
// I/O failures of the reader are returned wrapped instead.
//
// Error() prints "FILE:LINE: REASON" for text formats (Line > 0),
// "FILE: offset N: REASON" for binary formats (Line == 0, Offset >= 0; for a
// gzipped pprof file the offset counts decompressed bytes unless the reason
// is about the gzip stream itself) and "FILE: REASON" otherwise.
type Error struct {
	File   string // the name given to Parse
	Line   int    // 1-based line number in a text format; 0 if not line-based
	Offset int64  // byte offset in a binary format; -1 when unknown
	Reason string // what is wrong, on one line
}

func (e *Error) Error() string {
	reason := strings.ReplaceAll(e.Reason, "\n", " ")
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, reason)
	case e.Offset >= 0:
		return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, reason)
	default:
		return fmt.Sprintf("%s: %s", e.File, reason)
	}
}

func lineError(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Offset: -1, Reason: fmt.Sprintf(format, args...)}
}

func offsetError(file string, offset int64, format string, args ...any) *Error {
	return &Error{File: file, Offset: offset, Reason: fmt.Sprintf(format, args...)}
}

func fileError(file string, format string, args ...any) *Error {
	return &Error{File: file, Offset: -1, Reason: fmt.Sprintf(format, args...)}
}
