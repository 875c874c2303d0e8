package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

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
	// A file is read a chunk at a time, the buffer reused: a chunk is
	// whole in itself (its metadata and constant pools), and what the run
	// keeps of it is copied out.
	var buf []byte
	var firstStart int64
	for off := int64(0); ; {
		var err error
		buf, err = appendRead(buf[:0], r, jfrHeaderSize)
		if len(buf) == 0 && err == io.ErrUnexpectedEOF && off > 0 {
			break
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rest := buf
		if len(rest) < jfrHeaderSize || !bytes.HasPrefix(rest, jfrMagic) {
			return nil, offsetError(name, off, "not a JFR chunk")
		}
		if major := binary.BigEndian.Uint16(rest[4:]); major != 2 {
			return nil, offsetError(name, off, "JFR version %d: want 2", major)
		}
		size := int64(binary.BigEndian.Uint64(rest[8:])) // #nosec G115 -- checked next
		if size < jfrHeaderSize {
			return nil, offsetError(name, off, "chunk size %d: shorter than its header", size)
		}
		if size > MaxFileSize {
			return nil, offsetError(name, off, "chunk size %d: over %d bytes", size, int64(MaxFileSize))
		}
		buf, err = appendRead(buf, r, size-jfrHeaderSize)
		if err == io.ErrUnexpectedEOF {
			return nil, offsetError(name, off, "chunk size %d: %d bytes left", size, len(buf))
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rest = buf
		c := &jfrChunk{name: name, buf: rest, base: off, classes: map[int64]*jfrClass{},
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
	// The chunk's stack traces and methods made so far, by their pool
	// references: a recording's samples repeat a few thousand traces.
	traces      map[jfrRef][]uint32
	methodsSeen map[jfrRef]int
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
	jb.traces, jb.methodsSeen = map[jfrRef][]uint32{}, map[jfrRef]int{}
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
	ref, stClass := c.rawField(event, ev, "stackTrace")
	if r, pooled := ref.(jfrRef); pooled {
		if s, ok := jb.traces[r]; ok {
			return s
		}
		s := jb.newStack(c, stClass, c.resolve(r))
		jb.traces[r] = s
		return s
	}
	return jb.newStack(c, stClass, ref)
}

// newStack makes the stack of a stack trace st (of class stClass).
func (jb *jfrBuilder) newStack(c *jfrChunk, stClass int64, st any) []uint32 {
	frames, frameType := c.field(stClass, st, "frames") // an array field's class is its elements'
	list, ok := frames.([]any)
	if !ok || len(list) == 0 {
		return nil
	}
	s := jb.arena.alloc(len(list))
	for i, fr := range list {
		line := c.number(frameType, fr, "lineNumber")
		ref, mClass := c.rawField(frameType, fr, "method")
		r, pooled := ref.(jfrRef)
		if id, seen := jb.methodsSeen[r]; pooled && seen {
			jb.lowestLine(id, line)
			s[len(list)-1-i] = jb.frames[id]
			continue
		}
		method := c.resolve(ref)
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
		if pooled {
			jb.methodsSeen[r] = id
		}
		jb.lowestLine(id, line)
		s[len(list)-1-i] = jb.frames[id]
	}
	return s
}

// lowestLine keeps the lowest line a sample was in of method id.
func (jb *jfrBuilder) lowestLine(id int, line int64) {
	if m := &jb.list[id]; line > 0 && (m.line == 0 || line < m.line) {
		m.line = line
	}
}
