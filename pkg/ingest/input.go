package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
)

// What every row's input shares: the bounds on what a file may hold or
// inflate to, whole reads, and gzip.

// MaxFileSize bounds a file read whole and what gzipped input inflates
// to: real profiles are well below it, and a small stream of zeros must
// not fill the memory. The JSON rows, read as a stream, are bounded by
// MaxItems instead.
const MaxFileSize = 1 << 30

// MaxItems bounds what a file read as a stream gives its run: its
// samples, time deltas, weights, V8 nodes, events, table rows or column
// values each (in one array), tens of bytes apiece
// in memory where the file may spend two (a 1 GiB V8 profile has about 40
// million samples). A file of any size is read within it.
const MaxItems = 1 << 26

// maxItems is MaxItems, lowered by the test of the bound.
var maxItems = MaxItems

var gzipMagic = []byte{0x1f, 0x8b}

// readWhole reads all of r, at most MaxFileSize bytes.
func readWhole(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return nil, fileError(name, "larger than %d bytes", MaxFileSize)
	}
	return data, nil
}

// appendRead appends the n bytes that r says come next to buf, the
// buffer growing a MiB at a time as the bytes come: a length the file
// does not hold costs what it does hold. io.ErrUnexpectedEOF, with what
// was read, when r ends first.
func appendRead(buf []byte, r io.Reader, n int64) ([]byte, error) {
	for left := n; left > 0; {
		part := min(left, 1<<20)
		left -= part
		k := int(part) // #nosec G115 -- at most a MiB
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// gunzipped returns what br holds, inflated when it starts as gzip. The
// reader is not bounded: its caller reads it whole (readWhole).
func gunzipped(br *bufio.Reader, name string) (io.Reader, error) {
	if magic, _ := br.Peek(len(gzipMagic)); !bytes.Equal(magic, gzipMagic) {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fileError(name, "gzip: %v", err)
	}
	return zr, nil
}

// inflatedHead is head inflated when it starts as gzip (cut short where
// head ends), else head: what detection looks at in a gzipped file.
func inflatedHead(head []byte) []byte {
	if !bytes.HasPrefix(head, gzipMagic) {
		return head
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil
	}
	head, _ = io.ReadAll(io.LimitReader(zr, detectSize)) // a head cut short is a head
	return head
}

// gzipStreamError is an error of a gzip stream being inflated as it is
// read, told apart from the errors of what it holds.
type gzipStreamError struct{ err error }

func (e *gzipStreamError) Error() string { return e.err.Error() }

// inflating reads a gzip stream, marking its errors.
type inflating struct{ zr io.Reader }

func (r inflating) Read(p []byte) (int, error) {
	n, err := r.zr.Read(p)
	if err != nil && err != io.EOF {
		err = &gzipStreamError{err}
	}
	return n, err
}

// ErrTooLarge is Gunzip's error for a stream that inflates past its limit.
var ErrTooLarge = errors.New("decompressed size over the limit")

// Gunzip inflates data, at most limit bytes: a small body of zeros must not
// fill the memory.
func Gunzip(data []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip stream: %w", err)
	}
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip stream: %w", err)
	}
	if n > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return out.Bytes(), nil
}

// gzipFailure says what is wrong with a gzip stream in the file's terms:
// a stream cut short is truncated where the file ends, at (-1 when the
// reader does not count the file's bytes).
func gzipFailure(name string, at int64, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return offsetError(name, at, "truncated gzip stream")
	}
	return fileError(name, "corrupt gzip stream: %v", err)
}
