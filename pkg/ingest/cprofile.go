package ingest

import (
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// The marshal type codes (CPython's Python/marshal.c) a pstats file holds.
const (
	mNull          = '0' // ends a dict
	mNone          = 'N'
	mFalse         = 'F'
	mTrue          = 'T'
	mInt           = 'i' // int32
	mLong          = 'l' // digit count (signed: the sign), then 15-bit digits
	mFloat         = 'f' // text, marshal version 0 and 1
	mBinaryFloat   = 'g'
	mBytes         = 's'
	mInterned      = 't'
	mUnicode       = 'u'
	mASCII         = 'a'
	mASCIIInterned = 'A'
	mShortASCII    = 'z' // one-byte length
	mShortInterned = 'Z'
	mTuple         = '('
	mSmallTuple    = ')' // one-byte length
	mList          = '['
	mDict          = '{'
	mRef           = 'r' // index into the objects flagged so far
	mFlagRef       = 0x80
)

// Limits of a pstats file (read whole, within MaxFileSize): pstats nests four deep
// (stats dict, value tuple, callers dict, edge tuple), and a reference
// repeats an object without its bytes, so the objects built, references'
// included, are counted.
const (
	maxMarshalDepth    = 8
	maxMarshalString   = 1 << 16
	maxMarshalObjects  = 1 << 25
	maxCProfileDepth   = 256 // frames of a call path
	cprofileModule     = "[python]"
	cprofileBuiltinDir = "~"
)

// looksLikeCProfile: a marshal dict (flagged or not) whose first key is a
// tuple of three, starting with a string.
func looksLikeCProfile(head []byte) bool {
	if len(head) < 4 || head[0]&^mFlagRef != mDict {
		return false
	}
	var first byte
	switch head[1] &^ mFlagRef {
	case mSmallTuple:
		first = head[2]
		head = head[3:]
	case mTuple:
		if len(head) < 7 || binary.LittleEndian.Uint32(head[2:]) != 3 {
			return false
		}
		first = 3
		head = head[6:]
	default:
		return false
	}
	if first != 3 {
		return false
	}
	switch head[0] &^ mFlagRef {
	case mBytes, mInterned, mUnicode, mASCII, mASCIIInterned, mShortASCII, mShortInterned, mRef:
		return true
	}
	return false
}

// mObject is a marshal object as a pstats file uses them: ints, floats,
// strings, tuples (lists too), dicts (keys and values alternating in
// items) and None/True/False.
type mObject struct {
	kind  byte // mInt, mBinaryFloat, mUnicode, mTuple, mDict, mNone, mTrue, mFalse
	i     int64
	f     float64
	s     string
	items []mObject
	off   int64 // where it starts in the file
	size  int   // objects it holds, itself included
}

type marshalReader struct {
	name    string
	data    []byte
	pos     int
	refs    []mObject
	ready   []bool // refs[i] is complete (a container is referenced before its items are read)
	objects int
}

func (m *marshalReader) errorf(off int, format string, args ...any) error {
	return offsetError(m.name, int64(off), format, args...)
}

func (m *marshalReader) need(n int) error {
	if n < 0 || len(m.data)-m.pos < n {
		return m.errorf(m.pos, "truncated marshal data: %d bytes wanted, %d left", n, len(m.data)-m.pos)
	}
	return nil
}

func (m *marshalReader) byte() (byte, error) {
	if err := m.need(1); err != nil {
		return 0, err
	}
	m.pos++
	return m.data[m.pos-1], nil
}

func (m *marshalReader) int32() (int32, error) {
	if err := m.need(4); err != nil {
		return 0, err
	}
	m.pos += 4
	return int32(binary.LittleEndian.Uint32(m.data[m.pos-4:])), nil // #nosec G115 -- marshal's int32 is two's complement
}

// length reads a container or string length; each item takes a byte at
// least, so one past the bytes left is bad data.
func (m *marshalReader) length(short bool) (int, error) {
	start := m.pos
	var n int
	if short {
		b, err := m.byte()
		if err != nil {
			return 0, err
		}
		n = int(b)
	} else {
		v, err := m.int32()
		if err != nil {
			return 0, err
		}
		n = int(v)
	}
	if n < 0 || n > len(m.data)-m.pos {
		return 0, m.errorf(start, "length %d out of range: %d bytes left", n, len(m.data)-m.pos)
	}
	return n, nil
}

// object reads the object at m.pos; depth counts the containers around it.
func (m *marshalReader) object(depth int) (mObject, error) {
	start := m.pos
	code, err := m.byte()
	if err != nil {
		return mObject{}, err
	}
	if depth > maxMarshalDepth {
		return mObject{}, m.errorf(start, "marshal objects nest deeper than %d", maxMarshalDepth)
	}
	if m.objects++; m.objects > maxMarshalObjects {
		return mObject{}, m.errorf(start, "more than %d marshal objects", maxMarshalObjects)
	}
	flag := code&mFlagRef != 0
	code &^= mFlagRef
	o := mObject{kind: code, off: int64(start), size: 1}
	ref := -1
	if flag { // the index is taken before a container's items are read
		ref = len(m.refs)
		m.refs = append(m.refs, mObject{})
		m.ready = append(m.ready, false)
	}
	switch code {
	case mNone, mTrue, mFalse:
	case mInt:
		v, err := m.int32()
		if err != nil {
			return o, err
		}
		o.i = int64(v)
	case mLong:
		if o.i, err = m.long(); err != nil {
			return o, err
		}
		o.kind = mInt
	case mBinaryFloat:
		if err := m.need(8); err != nil {
			return o, err
		}
		o.f = math.Float64frombits(binary.LittleEndian.Uint64(m.data[m.pos:]))
		m.pos += 8
	case mFloat:
		n, err := m.length(true)
		if err != nil {
			return o, err
		}
		if o.f, err = strconv.ParseFloat(string(m.data[m.pos:m.pos+n]), 64); err != nil {
			return o, m.errorf(start, "bad float %q", clip(m.data[m.pos:m.pos+n]))
		}
		m.pos += n
		o.kind = mBinaryFloat
	case mBytes, mInterned, mUnicode, mASCII, mASCIIInterned, mShortASCII, mShortInterned:
		n, err := m.length(code == mShortASCII || code == mShortInterned)
		if err != nil {
			return o, err
		}
		if n > maxMarshalString {
			return o, m.errorf(start, "string of %d bytes, more than %d", n, maxMarshalString)
		}
		o.s = string(m.data[m.pos : m.pos+n])
		m.pos += n
		o.kind = mUnicode
	case mTuple, mSmallTuple, mList:
		n, err := m.length(code == mSmallTuple)
		if err != nil {
			return o, err
		}
		o.kind = mTuple
		o.items = make([]mObject, n)
		for i := range o.items {
			if o.items[i], err = m.object(depth + 1); err != nil {
				return o, err
			}
			if o.items[i].kind == mNull {
				return o, m.errorf(int(o.items[i].off), "NULL in a tuple")
			}
			o.size += o.items[i].size
		}
	case mDict:
		for {
			k, err := m.object(depth + 1)
			if err != nil {
				return o, err
			}
			if k.kind == mNull {
				break
			}
			v, err := m.object(depth + 1)
			if err != nil {
				return o, err
			}
			if v.kind == mNull {
				return o, m.errorf(int(v.off), "NULL as a dict value")
			}
			o.items = append(o.items, k, v)
			o.size += k.size + v.size
		}
	case mNull:
		if flag {
			return o, m.errorf(start, "NULL flagged as referenced")
		}
	case mRef:
		v, err := m.int32()
		if err != nil {
			return o, err
		}
		if v < 0 || int(v) >= len(m.refs) || !m.ready[v] {
			return o, m.errorf(start, "reference %d to no object read before", v)
		}
		o = m.refs[v]
		// A reference repeats its object: count all it holds again.
		if m.objects += o.size; m.objects > maxMarshalObjects {
			return o, m.errorf(start, "more than %d marshal objects", maxMarshalObjects)
		}
	default:
		return o, m.errorf(start, "marshal type %q (0x%02x), which pstats files do not hold", rune(code), code)
	}
	if ref >= 0 {
		m.refs[ref], m.ready[ref] = o, true
	}
	return o, nil
}

// long reads a marshal long that fits in an int64.
func (m *marshalReader) long() (int64, error) {
	start := m.pos
	n, err := m.int32()
	if err != nil {
		return 0, err
	}
	digits := int(n)
	if digits < 0 {
		digits = -digits
	}
	if digits > 4 { // 4 digits are 60 bits, 5 would be 75
		return 0, m.errorf(start, "integer of %d 15-bit digits: past int64", digits)
	}
	if err := m.need(2 * digits); err != nil {
		return 0, err
	}
	var v int64
	for i := digits - 1; i >= 0; i-- {
		d := binary.LittleEndian.Uint16(m.data[m.pos+2*i:])
		if d >= 1<<15 {
			return 0, m.errorf(m.pos+2*i, "bad integer digit %d", d)
		}
		v = v<<15 | int64(d)
	}
	m.pos += 2 * digits
	if n < 0 {
		v = -v
	}
	return v, nil
}

// cpFunc is a pstats function key: file, line, name.
type cpFunc struct {
	file string
	line int64
	name string
}

// parseCProfile reads the pstats file Python's cProfile writes (`python -m
// cProfile -o run.prof`, pstats.Stats.dump_stats): a marshal dict of each
// function (file, line, name) to its primitive and total calls, own time,
// cumulative time and callers, each caller with the same four for its
// calls. Each function's own time is exact, in nanoseconds; its call paths
// are shared out of the call graph as callgrind's are (callGraph), a
// function entered from no profiled caller (the script's exec) rooted by
// its cumulative time less what its callers' calls account for. Built-in
// functions (file "~") have module cprofileModule, no file, and the name
// inside the <> Python gives them.
func parseCProfile(r io.Reader, name string, _ Options) (*profile.Profile, error) {
	data, err := readWhole(r, name)
	if err != nil {
		return nil, err
	}
	m := &marshalReader{name: name, data: data}
	top, err := m.object(0)
	if err != nil {
		return nil, err
	}
	if top.kind != mDict {
		return nil, m.errorf(0, "not a pstats file: a marshal %q, not a dict", rune(top.kind))
	}
	if m.pos != len(data) {
		return nil, m.errorf(m.pos, "%d bytes after the pstats dict", len(data)-m.pos)
	}
	c := cprofileReader{m: m, ids: map[cpFunc]int{}, g: callGraph{name: name, arcs: map[cgArc]int64{}, maxDepth: maxCProfileDepth}}
	type entry struct {
		fn      int
		nc, ct  int64
		callers mObject
	}
	entries := make([]entry, 0, len(top.items)/2)
	for i := 0; i < len(top.items); i += 2 {
		fn, err := c.function(top.items[i])
		if err != nil {
			return nil, err
		}
		if fn < len(entries) { // Python's dict would keep the last: a file pstats did not write
			return nil, c.m.errorf(int(top.items[i].off), "function %s listed twice", c.funcs[fn].name)
		}
		v := top.items[i+1]
		if v.kind != mTuple || len(v.items) != 5 || v.items[4].kind != mDict {
			return nil, c.m.errorf(int(v.off), "a function's stats are no (cc, nc, tt, ct, callers)")
		}
		if _, err := c.count(v.items[0]); err != nil {
			return nil, err
		}
		nc, err := c.count(v.items[1])
		if err != nil {
			return nil, err
		}
		tt, err := c.time(v.items[2])
		if err != nil {
			return nil, err
		}
		ct, err := c.time(v.items[3])
		if err != nil {
			return nil, err
		}
		c.g.self[fn] = tt
		entries = append(entries, entry{fn, nc, ct, v.items[4]})
	}
	// entry is sized once the callers are read: a caller may have no stats of its own.
	entered := make([]int64, len(entries))
	for k, e := range entries {
		entered[k] = e.ct
		for i := 0; i < len(e.callers.items); i += 2 {
			caller, err := c.function(e.callers.items[i])
			if err != nil {
				return nil, err
			}
			t, err := c.edge(e.callers.items[i+1], e.nc, e.ct)
			if err != nil {
				return nil, err
			}
			a := cgArc{caller, e.fn}
			if t > math.MaxInt64-c.g.arcs[a] {
				return nil, c.m.errorf(int(e.callers.items[i+1].off), "call times add up past the int64 maximum")
			}
			c.g.arcs[a] += t
			if caller != e.fn { // a recursive call is inside the outermost's time
				entered[k] -= t
			}
		}
	}
	c.g.entry = make([]int64, len(c.g.self))
	for k, e := range entries {
		c.g.entry[e.fn] = max(entered[k], 0)
	}
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds"}
	frames := make([]uint32, len(c.funcs))
	for i, f := range c.funcs {
		frames[i] = p.Intern(cprofileFrame(f))
	}
	if p.Samples, err = c.g.samples(frames); err != nil {
		return nil, err
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no own time in the pstats file")
	}
	return p, nil
}

// cprofileFrame is the frame of a pstats function.
func cprofileFrame(f cpFunc) profile.Frame {
	if f.file == cprofileBuiltinDir && f.line == 0 {
		return profile.Frame{Name: strings.TrimSuffix(strings.TrimPrefix(f.name, "<"), ">"), Module: cprofileModule}
	}
	return profile.Frame{Name: f.name, Module: f.file, File: f.file, Line: f.line}
}

type cprofileReader struct {
	m     *marshalReader
	ids   map[cpFunc]int
	funcs []cpFunc
	g     callGraph
}

// function returns the id of the function a (file, line, name) key names.
func (c *cprofileReader) function(k mObject) (int, error) {
	if k.kind != mTuple || len(k.items) != 3 || k.items[0].kind != mUnicode || k.items[1].kind != mInt || k.items[2].kind != mUnicode {
		return 0, c.m.errorf(int(k.off), "a function key is no (file, line, name)")
	}
	f := cpFunc{k.items[0].s, k.items[1].i, k.items[2].s}
	id, ok := c.ids[f]
	if !ok {
		id = len(c.funcs)
		c.ids[f] = id
		c.funcs = append(c.funcs, f)
		c.g.funcs = append(c.g.funcs, f.name)
		c.g.self = append(c.g.self, 0)
	}
	return id, nil
}

func (c *cprofileReader) count(o mObject) (int64, error) {
	if o.kind != mInt || o.i < 0 {
		return 0, c.m.errorf(int(o.off), "a call count is no integer of 0 or more")
	}
	return o.i, nil
}

// time reads a time in seconds as nanoseconds.
func (c *cprofileReader) time(o mObject) (int64, error) {
	s := o.f
	switch o.kind {
	case mInt:
		s = float64(o.i)
	case mBinaryFloat:
	default:
		return 0, c.m.errorf(int(o.off), "a time is no number")
	}
	ns := math.Round(s * 1e9)
	if !(ns >= 0 && ns < math.MaxInt64) { // NaN too
		return 0, c.m.errorf(int(o.off), "time %g s out of range", s)
	}
	return int64(ns), nil
}

// edge reads the time of a caller's calls: its (cc, nc, tt, ct), or the
// call count the pure-Python profile module writes instead, which takes
// its part of the callee's cumulative time ct over nc calls.
func (c *cprofileReader) edge(o mObject, nc, ct int64) (int64, error) {
	if o.kind == mInt {
		calls, err := c.count(o)
		if err != nil || nc == 0 {
			return 0, err
		}
		return int64(float64(ct) * min(float64(calls)/float64(nc), 1)), nil
	}
	if o.kind != mTuple || len(o.items) != 4 {
		return 0, c.m.errorf(int(o.off), "a caller's stats are no (cc, nc, tt, ct)")
	}
	return c.time(o.items[3])
}
