package ingest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	pprof "github.com/google/pprof/profile"
)

// A pprof protobuf read as a stream: its samples are kept as the bytes the
// file spends on them and its tables (mappings, locations, functions,
// strings) are decoded as they come, so a read holds the samples' bytes,
// the tables and the run, never the file and its decoding whole. Writers
// put the samples before the string table that names their sample types,
// so samples are converted once the file has been read. The rules are
// github.com/google/pprof/profile's decoder's (proto.go, encode.go): each
// message's fields in any order, a scalar's last value winning, repeated
// numbers packed or not, unknown fields skipped, a wire type other than
// the field's an error, string indices checked, a second time_nanos a
// concatenation of profiles; pprof_test.go holds the two equal.

// wireError is a protobuf the stream cannot read, at offset.
type wireError struct {
	offset int64
	reason string
}

// errTruncated is a stream that ends inside a field.
var errTruncated = errors.New(truncated)

// wireStream reads top-level protobuf fields from r.
type wireStream struct {
	r   *bufio.Reader
	off int64
	buf []byte // the current field's payload
}

// uvarint reads a varint as pprof's decoder does: at most ten bytes, the
// bits past 64 dropped. io.EOF only before its first byte.
func (w *wireStream) uvarint() (uint64, error) {
	var u uint64
	for i := 0; ; i++ {
		if i >= 10 {
			return 0, errors.New("bad varint")
		}
		c, err := w.r.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				return 0, errTruncated
			}
			return 0, err
		}
		w.off++
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return u, nil
		}
	}
}

// field reads the next top-level field: its number, wire type, varint or
// fixed value, or its payload (valid until the next call). io.EOF at the
// end of the stream.
func (w *wireStream) field() (num int, typ byte, u uint64, payload []byte, err error) {
	tag, err := w.uvarint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	num, typ = int(tag>>3), byte(tag&7) // #nosec G115 -- a field number is at most 61 bits; the type 3
	if num == 0 {
		return 0, 0, 0, nil, errors.New("field number 0")
	}
	var n uint64
	switch typ {
	case 0:
		u, err = w.uvarint()
		if err == io.EOF {
			err = errTruncated
		}
		return num, typ, u, nil, err
	case 1, 5:
		n = 8
		if typ == 5 {
			n = 4
		}
	case 2:
		if n, err = w.uvarint(); err == io.EOF {
			err = errTruncated
		}
		if err != nil {
			return 0, 0, 0, nil, err
		}
		if n > MaxFileSize {
			return 0, 0, 0, nil, fmt.Errorf("a field of %d bytes", n)
		}
	default:
		return 0, 0, 0, nil, fmt.Errorf("unknown wire type %d", typ)
	}
	w.buf, err = appendRead(w.buf[:0], w.r, int64(n)) // #nosec G115 -- n <= MaxFileSize
	w.off += int64(len(w.buf))
	if err == io.ErrUnexpectedEOF {
		return 0, 0, 0, nil, errTruncated
	}
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if typ != 2 {
		b := w.buf
		if typ == 1 {
			return num, typ, binary.LittleEndian.Uint64(b), nil, nil
		}
		return num, typ, uint64(binary.LittleEndian.Uint32(b)), nil, nil
	}
	return num, typ, 0, w.buf, nil
}

// wireField is one field of an embedded message.
type wireField struct {
	num  int
	typ  byte
	u    uint64
	data []byte
}

// nextField decodes the field at the start of b as pprof's decodeField
// does, returning the rest of b.
func nextField(b []byte) (wireField, []byte, error) {
	tag, b, err := varintOf(b)
	if err != nil {
		return wireField{}, nil, err
	}
	f := wireField{num: int(tag >> 3), typ: byte(tag & 7)} // #nosec G115 -- as in field
	switch f.typ {
	case 0:
		f.u, b, err = varintOf(b)
	case 1, 5:
		n := 8
		if f.typ == 5 {
			n = 4
		}
		if len(b) < n {
			return f, nil, errors.New("not enough data")
		}
		if n == 8 {
			f.u = binary.LittleEndian.Uint64(b)
		} else {
			f.u = uint64(binary.LittleEndian.Uint32(b))
		}
		b = b[n:]
	case 2:
		var n uint64
		if n, b, err = varintOf(b); err == nil && n > uint64(len(b)) {
			err = errors.New("too much data")
		}
		if err == nil {
			f.data, b = b[:n], b[n:]
		}
	default:
		err = fmt.Errorf("unknown wire type %d", f.typ)
	}
	return f, b, err
}

func varintOf(b []byte) (uint64, []byte, error) {
	var u uint64
	for i := 0; i < 10 && i < len(b); i++ {
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return u, b[i+1:], nil
		}
	}
	return 0, nil, errors.New("bad varint")
}

// fields calls each for every field of the message m whose number is
// below len(known) (the others are skipped, as pprof skips them).
func fields(m []byte, known int, each func(wireField) error) error {
	for len(m) > 0 {
		f, rest, err := nextField(m)
		if err != nil {
			return err
		}
		if f.num > 0 && f.num < known { // pprof skips field 0 too
			if err := each(f); err != nil {
				return err
			}
		}
		m = rest
	}
	return nil
}

var errWireType = errors.New("type mismatch")

// scalar is a varint field's value as int64 and uint64.
func scalar(f wireField) (int64, uint64, error) {
	if f.typ != 0 {
		return 0, 0, errWireType
	}
	return int64(f.u), f.u, nil // #nosec G115 -- pprof's int64 fields are the varint's bits
}

// numbers appends a repeated number field's values, packed or not.
func numbers(f wireField, to []uint64) ([]uint64, error) {
	if f.typ != 2 {
		_, u, err := scalar(f)
		return append(to, u), err
	}
	for b := f.data; len(b) > 0; {
		u, rest, err := varintOf(b)
		if err != nil {
			return to, err
		}
		to, b = append(to, u), rest
	}
	return to, nil
}

// wireMessage is an embedded message's payload, with pprof's type check.
func wireMessage(f wireField) ([]byte, error) {
	if f.typ != 2 {
		return nil, errWireType
	}
	return f.data, nil
}

// strIndex is a string reference, checked once the string table is read.
type strIndex = int64

// decodeValueType reads a ValueType: its type and unit string indices.
func decodeValueType(m []byte) (t, unit strIndex, err error) {
	err = fields(m, 3, func(f wireField) (err error) {
		if f.num == 1 {
			t, _, err = scalar(f)
		} else {
			unit, _, err = scalar(f)
		}
		return err
	})
	return t, unit, err
}

// pprofMapping, pprofLocation and pprofFunction are the tables' rows as
// decoded, their strings indices.
type pprofMapping struct {
	m           pprof.Mapping
	file, build strIndex
}

type pprofFunction struct {
	f                     pprof.Function
	name, system, srcFile strIndex
}

type pprofLocation struct {
	l       pprof.Location
	mapping uint64
	funcs   []uint64 // each line's function id
}

func decodeMapping(m []byte) (r pprofMapping, err error) {
	err = fields(m, 11, func(f wireField) error {
		i, u, err := scalar(f)
		switch f.num {
		case 1:
			r.m.ID = u
		case 2:
			r.m.Start = u
		case 3:
			r.m.Limit = u
		case 4:
			r.m.Offset = u
		case 5:
			r.file = i
		case 6:
			r.build = i
		}
		return err
	})
	return r, err
}

func decodeFunction(m []byte) (r pprofFunction, err error) {
	err = fields(m, 6, func(f wireField) error {
		i, u, err := scalar(f)
		switch f.num {
		case 1:
			r.f.ID = u
		case 2:
			r.name = i
		case 3:
			r.system = i
		case 4:
			r.srcFile = i
		case 5:
			r.f.StartLine = i
		}
		return err
	})
	return r, err
}

func decodeLocation(m []byte) (r pprofLocation, err error) {
	err = fields(m, 6, func(f wireField) error {
		if f.num == 4 {
			data, err := wireMessage(f)
			if err != nil {
				return err
			}
			var fn uint64
			var line pprof.Line
			err = fields(data, 4, func(g wireField) error {
				i, u, err := scalar(g)
				switch g.num {
				case 1:
					fn = u
				case 2:
					line.Line = i
				case 3:
					line.Column = i
				}
				return err
			})
			r.l.Line, r.funcs = append(r.l.Line, line), append(r.funcs, fn)
			return err
		}
		_, u, err := scalar(f)
		switch f.num {
		case 1:
			r.l.ID = u
		case 2:
			r.mapping = u
		case 3:
			r.l.Address = u
		case 5:
			r.l.IsFolded = u != 0
		}
		return err
	})
	return r, err
}

func (e *wireError) Error() string { return fmt.Sprintf("offset %d: %s", e.offset, e.reason) }
