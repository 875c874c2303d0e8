package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf16"

	"github.com/flamediff/flamediff/pkg/profile"
)

// jfrMagic starts every chunk of a JDK Flight Recorder file.
var jfrMagic = []byte("FLR\x00")

func looksLikeJFR(head []byte) bool { return bytes.HasPrefix(head, jfrMagic) }

// The JFR sample types: execution samples (jdk.ExecutionSample, one a
// sample), async-profiler's wall-clock samples (profiler.WallClockSample,
// as many as its samples field: async-profiler batches a thread's idle
// samples into one event), allocations (jdk.ObjectAllocationSample's
// weight, or where a recording has none, as async-profiler's, the TLAB
// events' sizes) and async-profiler's live objects (profiler.LiveObject's
// allocationSize: what was still alive at the recording's end).
const (
	jfrSamples = "samples"
	jfrWall    = "wall"
	jfrAlloc   = "alloc"
	jfrLive    = "live"
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
	var element func(depth int, parent *jfrClass)
	element = func(depth int, parent *jfrClass) {
		if depth > jfrMaxDepth {
			c.fail("metadata nests deeper than %d", jfrMaxDepth)
		}
		name := str()
		attrs := map[string]string{}
		for range c.count() {
			k := str()
			attrs[k] = str()
		}
		var cl *jfrClass
		switch name {
		case "class":
			var id int64
			if _, err := fmt.Sscan(attrs["id"], &id); err != nil {
				c.fail("class %q without an id", attrs["name"])
			}
			cl = &jfrClass{name: attrs["name"]}
			c.classes[id] = cl
			c.byName[cl.name] = id
		case "field":
			if parent != nil {
				var id int64
				if _, err := fmt.Sscan(attrs["class"], &id); err != nil {
					c.fail("field %q without a class", attrs["name"])
				}
				parent.fields = append(parent.fields, jfrField{name: attrs["name"], class: id,
					pool: attrs["constantPool"] == "true", array: attrs["dimension"] == "1"})
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
	cl := c.classes[id]
	s, ok := c.resolve(v).([]any)
	if cl == nil || !ok {
		return nil, 0
	}
	for i, f := range cl.fields {
		if f.name == name && i < len(s) {
			return c.resolve(s[i]), f.class
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

// parseJFR reads a JDK Flight Recorder file (the JDK's
// -XX:StartFlightRecording, jcmd JFR.dump, async-profiler's jfr output):
// every chunk, its metadata and constant pools, and one sample type:
// "samples" (jdk.ExecutionSample, one a sample, the default), "wall"
// (async-profiler's profiler.WallClockSample, its samples field a sample),
// "alloc" (bytes: jdk.ObjectAllocationSample's weight, or where the
// recording has none, jdk.ObjectAllocationInNewTLAB's tlabSize and
// jdk.ObjectAllocationOutsideTLAB's allocationSize, as async-profiler's
// converter weighs them) or "live" (bytes: async-profiler's
// profiler.LiveObject's allocationSize). Frames are named
// "package.Class.method"; Module is the package ("" for the unnamed
// package), File the class's binary name (JFR has no source file names),
// Line the lowest line a sample was in. Samples carry their time.
func parseJFR(r io.Reader, name string, o Options) (p *profile.Profile, err error) {
	data, err := readWhole(r, name)
	if err != nil {
		return nil, err
	}
	st := o.SampleType
	if st == "" {
		st = jfrSamples
	}
	if st != jfrSamples && st != jfrWall && st != jfrAlloc && st != jfrLive {
		return nil, fileError(name, "no sample type %q: JFR files have %s, %s, %s and %s", st, jfrSamples, jfrWall, jfrAlloc, jfrLive)
	}
	defer func() {
		if e := recover(); e != nil {
			je, ok := e.(jfrError)
			if !ok {
				panic(e)
			}
			p, err = nil, offsetError(name, je.offset, "%s", je.reason)
		}
	}()
	jb := &jfrBuilder{p: &profile.Profile{SampleType: st, Unit: "count"}, methods: map[jfrMethodKey]int{}, threads: o.Threads}
	if st == jfrAlloc || st == jfrLive {
		jb.p.Unit = "bytes"
	}
	var firstStart int64
	for off := int64(0); off < int64(len(data)); {
		rest := data[off:]
		if len(rest) < jfrHeaderSize || !bytes.HasPrefix(rest, jfrMagic) {
			return nil, offsetError(name, off, "not a JFR chunk")
		}
		if major := binary.BigEndian.Uint16(rest[4:]); major != 2 {
			return nil, offsetError(name, off, "JFR version %d: want 2", major)
		}
		size := int64(binary.BigEndian.Uint64(rest[8:])) // #nosec G115 -- checked next
		if size < jfrHeaderSize || size > int64(len(rest)) {
			return nil, offsetError(name, off, "chunk size %d: %d bytes left", size, len(rest))
		}
		c := &jfrChunk{name: name, buf: rest[:size], base: off, classes: map[int64]*jfrClass{},
			byName: map[string]int64{}, pools: map[int64]map[int64]any{}}
		be := func(at int) int64 { return int64(binary.BigEndian.Uint64(rest[at:])) } // #nosec G115 -- offsets and times are checked where used
		if features := binary.BigEndian.Uint32(rest[64:]); features&1 == 0 {
			return nil, offsetError(name, off, "uncompressed integers: unsupported")
		}
		startNanos, startTicks, ticksPerSecond := be(32), be(48), be(56)
		if off == 0 {
			firstStart = startNanos
		}
		c.metadata(be(24))
		c.constantPools(be(16))
		clock := jfrClock{offset: startNanos - firstStart, ticks: startTicks, perSecond: ticksPerSecond}
		jb.chunk(c, clock, st)
		off += size
	}
	if len(jb.p.Samples) == 0 {
		return nil, fileError(name, "no %s events in the JFR file", st)
	}
	for i, m := range jb.list {
		jb.p.Frames[jb.frames[i]].Line = m.line
	}
	return jb.p, nil
}

type jfrClock struct{ offset, ticks, perSecond int64 }

// nanos is a tick's time since the recording's start, or -1.
func (k jfrClock) nanos(ticks int64) int64 {
	if k.perSecond <= 0 || ticks < k.ticks {
		return -1
	}
	t := float64(ticks-k.ticks)/float64(k.perSecond)*1e9 + float64(k.offset)
	if t < 0 || t > 1<<62 {
		return -1
	}
	return int64(t)
}

type jfrMethodKey struct{ class, method string }

type jfrMethod struct {
	key  jfrMethodKey
	line int64
}

// jfrBuilder gathers the samples of every chunk into one profile.
type jfrBuilder struct {
	p       *profile.Profile
	methods map[jfrMethodKey]int
	list    []jfrMethod
	frames  []uint32
	arena   stackArena
	threads bool // Options.Threads
}

// chunk adds the chunk's events of the sample type st.
func (jb *jfrBuilder) chunk(c *jfrChunk, clock jfrClock, st string) {
	type source struct {
		class  int64
		weight string // the field of the value; "" counts one
	}
	var sources []source
	add := func(event, weight string) {
		if id, ok := c.byName[event]; ok {
			sources = append(sources, source{id, weight})
		}
	}
	switch st {
	case jfrSamples:
		add("jdk.ExecutionSample", "")
	case jfrWall:
		add("profiler.WallClockSample", "samples")
	case jfrLive:
		add("profiler.LiveObject", "allocationSize")
	default:
		if add("jdk.ObjectAllocationSample", "weight"); len(sources) == 0 {
			add("jdk.ObjectAllocationInNewTLAB", "tlabSize")
			add("jdk.ObjectAllocationOutsideTLAB", "allocationSize")
		}
	}
	c.pos = jfrHeaderSize
	for c.pos < len(c.buf) {
		start := c.pos
		size := c.varint()
		if size <= 0 || size > int64(len(c.buf)-start) {
			c.fail("event size %d", size)
		}
		typ := c.varint()
		end := start + int(size)
		for _, s := range sources {
			if typ != s.class {
				continue
			}
			ev := c.object(typ, 0)
			value := int64(1)
			if s.weight != "" {
				value = c.number(typ, ev, s.weight)
			}
			stack := jb.stack(c, typ, ev)
			if value <= 0 || stack == nil {
				break
			}
			if jb.threads {
				stack = append([]uint32{threadFrame(jb.p, jfrThread(c, typ, ev))}, stack...)
			}
			jb.p.Samples = append(jb.p.Samples, profile.Sample{Stack: stack, Value: value,
				Time: clock.nanos(c.number(typ, ev, "startTime"))})
		}
		c.pos = end
	}
}

// stack turns an event's stack trace (frames leaf first) into a stack.
func (jb *jfrBuilder) stack(c *jfrChunk, event int64, ev any) []uint32 {
	st, stClass := c.field(event, ev, "stackTrace")
	frames, frameType := c.field(stClass, st, "frames") // an array field's class is its elements'
	list, ok := frames.([]any)
	if !ok || len(list) == 0 {
		return nil
	}
	s := jb.arena.alloc(len(list))
	for i, fr := range list {
		method, mClass := c.field(frameType, fr, "method")
		line := c.number(frameType, fr, "lineNumber")
		class, cClass := c.field(mClass, method, "type")
		className := strings.ReplaceAll(c.text(cClass, class, "name"), "/", ".")
		pkg, pClass := c.field(cClass, class, "package")
		pkgName := strings.ReplaceAll(c.text(pClass, pkg, "name"), "/", ".")
		k := jfrMethodKey{className, c.text(mClass, method, "name")}
		id, ok := jb.methods[k]
		if !ok {
			id = len(jb.list)
			jb.methods[k] = id
			jb.list = append(jb.list, jfrMethod{key: k})
			jb.frames = append(jb.frames, jb.p.Intern(profile.Frame{Name: k.class + "." + k.method, Module: pkgName,
				File: strings.ReplaceAll(k.class, ".", "/")}))
		}
		if m := &jb.list[id]; line > 0 && (m.line == 0 || line < m.line) {
			m.line = line
		}
		s[len(list)-1-i] = jb.frames[id]
	}
	return s
}
