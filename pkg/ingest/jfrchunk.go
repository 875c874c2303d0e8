package ingest

// A JFR chunk as the format lays it out: its header, the metadata's
// classes, the constant pools and the values that refer into them.
// jfr.go reads the events from it.

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
)

const (
	jfrHeaderSize = 68
	jfrMaxDepth   = 32 // nesting of JFR structs; real ones are a few deep
)

// jfrField is a field of a JFR class as the chunk's metadata describes it.
type jfrField struct {
	name  string
	class int64
	pool  bool // a reference into the class's constant pool
	array bool
}

type jfrClass struct {
	name   string
	fields []jfrField
}

// jfrRef is a constant pool reference, resolved once the chunk's pools
// are read.
type jfrRef struct {
	class int64
	key   int64
}

// jfrChunk reads one chunk: its metadata, constant pools and events.
type jfrChunk struct {
	name    string
	buf     []byte // the chunk
	base    int64  // the chunk's offset in the file, for errors
	pos     int
	classes map[int64]*jfrClass
	byName  map[string]int64
	pools   map[int64]map[int64]any
}

type jfrError struct {
	offset int64
	reason string
}

func (c *jfrChunk) fail(format string, args ...any) {
	panic(jfrError{c.base + int64(c.pos), fmt.Sprintf(format, args...)})
}

func (c *jfrChunk) byte() byte {
	if c.pos >= len(c.buf) {
		c.fail("truncated")
	}
	b := c.buf[c.pos]
	c.pos++
	return b
}

// varint reads JFR's compressed integer: LEB128 of up to 9 bytes, the
// ninth holding 8 bits.
func (c *jfrChunk) varint() int64 {
	var v uint64
	for i := 0; i < 8; i++ {
		b := c.byte()
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return int64(v) // #nosec G115 -- JFR's longs are two's complement
		}
	}
	v |= uint64(c.byte()) << 56
	return int64(v) // #nosec G115 -- JFR's longs are two's complement
}

// count reads an array or table length, at most the bytes left.
func (c *jfrChunk) count() int {
	n := c.varint()
	if n < 0 || n > int64(len(c.buf)-c.pos) {
		c.fail("count %d past the chunk's end", n)
	}
	return int(n)
}

func (c *jfrChunk) fixed(n int) []byte {
	if n > len(c.buf)-c.pos {
		c.fail("truncated")
	}
	b := c.buf[c.pos : c.pos+n]
	c.pos += n
	return b
}

// str reads a string in one of JFR's encodings.
func (c *jfrChunk) str() any {
	switch enc := c.byte(); enc {
	case 0:
		return nil
	case 1:
		return ""
	case 2:
		return jfrRef{c.byName["java.lang.String"], c.varint()}
	case 3, 5: // UTF-8, Latin-1
		b := c.fixed(c.count())
		if enc == 5 {
			r := make([]rune, len(b))
			for i, x := range b {
				r[i] = rune(x)
			}
			return string(r)
		}
		return string(b)
	case 4: // UTF-16 code units
		n := c.count()
		u := make([]uint16, n)
		for i := range u {
			u[i] = uint16(c.varint()) // #nosec G115 -- a UTF-16 code unit
		}
		return string(utf16.Decode(u))
	default:
		c.fail("unknown string encoding %d", enc)
	}
	return nil
}

// value reads a value of class id (an array, a pool reference or not).
func (c *jfrChunk) value(f jfrField, depth int) any {
	if f.array {
		n := c.count()
		out := make([]any, n)
		g := f
		g.array = false
		for i := range out {
			out[i] = c.value(g, depth)
		}
		return out
	}
	if f.pool {
		return jfrRef{f.class, c.varint()}
	}
	return c.object(f.class, depth)
}

// object reads a value of a class: a primitive, a string, or a struct as
// the values of its fields.
func (c *jfrChunk) object(id int64, depth int) any {
	cl := c.classes[id]
	if cl == nil {
		c.fail("unknown class %d", id)
	}
	switch cl.name {
	case "boolean", "byte":
		return int64(c.byte())
	case "short", "int", "long", "char":
		return c.varint()
	case "float":
		return float64(math.Float32frombits(binary.BigEndian.Uint32(c.fixed(4))))
	case "double":
		return math.Float64frombits(binary.BigEndian.Uint64(c.fixed(8)))
	case "java.lang.String":
		return c.str()
	}
	if depth > jfrMaxDepth {
		c.fail("class %s nests deeper than %d", cl.name, jfrMaxDepth)
	}
	out := make([]any, len(cl.fields))
	for i, f := range cl.fields {
		out[i] = c.value(f, depth+1)
	}
	return out
}

// metadata reads the chunk's type descriptions: a string table and a tree
// of elements, whose "class" elements have "field" children.
func (c *jfrChunk) metadata(at int64) {
	c.seek(at)
	c.varint() // size
	if t := c.varint(); t != 0 {
		c.fail("metadata event of type %d", t)
	}
	c.varint() // start
	c.varint() // duration
	c.varint() // id
	strs := make([]string, c.count())
	for i := range strs {
		s, _ := c.str().(string)
		strs[i] = s
	}
	str := func() string {
		i := c.varint()
		if i < 0 || i >= int64(len(strs)) {
			c.fail("string %d of %d in the metadata", i, len(strs))
		}
		return strs[i]
	}
	var attrs [][2]string           // an element's, read before its children
	attr := func(k string) string { // the last of a name wins, as in a map
		for i := len(attrs) - 1; i >= 0; i-- {
			if attrs[i][0] == k {
				return attrs[i][1]
			}
		}
		return ""
	}
	var element func(depth int, parent *jfrClass)
	element = func(depth int, parent *jfrClass) {
		if depth > jfrMaxDepth {
			c.fail("metadata nests deeper than %d", jfrMaxDepth)
		}
		name := str()
		attrs = attrs[:0]
		for range c.count() {
			k := str()
			attrs = append(attrs, [2]string{k, str()})
		}
		var cl *jfrClass
		switch name {
		case "class":
			id, err := strconv.ParseInt(attr("id"), 10, 64)
			if err != nil {
				c.fail("class %q without an id", attr("name"))
			}
			cl = &jfrClass{name: attr("name")}
			c.classes[id] = cl
			c.byName[cl.name] = id
		case "field":
			if parent != nil {
				id, err := strconv.ParseInt(attr("class"), 10, 64)
				if err != nil {
					c.fail("field %q without a class", attr("name"))
				}
				parent.fields = append(parent.fields, jfrField{name: attr("name"), class: id,
					pool: attr("constantPool") == "true", array: attr("dimension") == "1"})
			}
		}
		for range c.count() {
			element(depth+1, cl)
		}
	}
	element(0, nil)
}

func (c *jfrChunk) seek(at int64) {
	if at < jfrHeaderSize || at >= int64(len(c.buf)) {
		c.fail("offset %d outside the chunk", at)
	}
	c.pos = int(at)
}

// constantPools reads the chain of checkpoint events, each pointing back
// to the one before by a delta, the first at the header's offset.
func (c *jfrChunk) constantPools(at int64) {
	for seen := 0; ; seen++ {
		if seen > len(c.buf)/4 {
			c.fail("the constant pools' chain loops")
		}
		c.seek(at)
		c.varint() // size
		if t := c.varint(); t != 1 {
			c.fail("checkpoint event of type %d", t)
		}
		c.varint() // start
		c.varint() // duration
		delta := c.varint()
		c.byte() // type mask
		for range c.count() {
			id := c.varint()
			if c.classes[id] == nil {
				c.fail("constant pool of unknown class %d", id)
			}
			pool := c.pools[id]
			if pool == nil {
				pool = map[int64]any{}
				c.pools[id] = pool
			}
			for range c.count() {
				key := c.varint()
				pool[key] = c.object(id, 0)
			}
		}
		if delta == 0 {
			return
		}
		at += delta
	}
}

// resolve follows a constant pool reference (a bounded number of times:
// pools may refer to each other).
func (c *jfrChunk) resolve(v any) any {
	for range 8 {
		r, ok := v.(jfrRef)
		if !ok {
			return v
		}
		v = c.pools[r.class][r.key]
	}
	return nil
}

// field returns the named field of a struct value of class id.
func (c *jfrChunk) field(id int64, v any, name string) (any, int64) {
	f, class := c.rawField(id, v, name)
	return c.resolve(f), class
}

// rawField is field, a constant pool reference not followed: what
// stands for the same value wherever the chunk refers to it.
func (c *jfrChunk) rawField(id int64, v any, name string) (any, int64) {
	cl := c.classes[id]
	s, ok := c.resolve(v).([]any)
	if cl == nil || !ok {
		return nil, 0
	}
	for i, f := range cl.fields {
		if f.name == name && i < len(s) {
			return s[i], f.class
		}
	}
	return nil, 0
}

func (c *jfrChunk) text(id int64, v any, name string) string {
	f, fc := c.field(id, v, name)
	if s, ok := f.(string); ok {
		return s
	}
	if fs, ok := f.([]any); ok && c.classes[fc] != nil { // a symbol: {string}
		s, _ := c.field(fc, fs, "string")
		t, _ := s.(string)
		return t
	}
	return ""
}

func (c *jfrChunk) number(id int64, v any, name string) int64 {
	f, _ := c.field(id, v, name)
	n, _ := f.(int64)
	return n
}
