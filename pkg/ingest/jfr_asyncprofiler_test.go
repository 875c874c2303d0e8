package ingest

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/flamediff/flamediff/internal/toolprofiles"
)

// async-profiler cannot be installed here (no Debian package), so this
// writes a recording as its JFR writer does: async-profiler/
// async-profiler/src/flightRecorder.cpp and …/src/jfrMetadata.cpp, read at commit
// b583d82c. The layout is theirs: the chunk header (metadata at offset
// 68, features 1), the metadata event (size a 5-byte padded varint, id
// 0x7fffffff, a string table and the element tree of jfrMetadata.cpp with
// async-profiler's type ids, classes before the annotation types, then the
// region element), the settings and native library events written at the
// start, the sample events (size one byte, type one byte, then their
// fields), and last the checkpoint of 12 pools in writeCpool's order, a
// dummy string pool where a pool is empty. The type list is the part of
// jfrMetadata.cpp's that these events and pools use. The JDK's own `jfr
// print` reads the file as it reads async-profiler's: it is the
// reference the test checks against.

// apElement is an element of async-profiler's metadata tree.
type apElement struct {
	name     string
	attrs    [][2]string
	children []apElement
}

// The type ids of async-profiler's jfrMetadata.h.
const (
	apBoolean, apChar, apFloat, apDouble, apByte, apShort, apInt, apLong            = 4, 5, 6, 7, 8, 9, 10, 11
	apString, apClass, apThread, apClassLoader, apFrameType, apThreadState          = 20, 21, 22, 23, 24, 25
	apStackTrace, apStackFrame, apMethod, apPackage, apSymbol, apGCWhen, apLogLevel = 26, 27, 28, 30, 31, 32, 33
	apUserEventType                                                                 = 34
	apExecutionSample, apAllocInNewTLAB, apAllocOutsideTLAB, apActiveSetting        = 101, 102, 103, 108
	apNativeLibrary, apLiveObject, apWallClockSample                                = 113, 118, 119
	apLabel, apCategory, apTimestamp, apDataAmount, apUnsigned                      = 201, 202, 204, 206, 208
)

// The field flags of jfrMetadata.h this writer uses.
const (
	apCpool = 1 << iota
	apArray
	apUnsignedFlag
	apBytes
	apTicks
)

func apType(name string, id int, label string, simple bool, fields ...apElement) apElement {
	e := apElement{name: "class", attrs: [][2]string{{"name", name}, {"id", strconv.Itoa(id)}}}
	switch {
	case simple:
		e.attrs = append(e.attrs, [2]string{"simpleType", "true"})
	case id > 200:
		e.attrs = append(e.attrs, [2]string{"superType", "java.lang.annotation.Annotation"})
	case id > 100:
		e.attrs = append(e.attrs, [2]string{"superType", "jdk.jfr.Event"})
	}
	if label != "" {
		e.children = append(e.children, apAnnotation(apLabel, label))
	}
	return apElement{name: e.name, attrs: e.attrs, children: append(e.children, fields...)}
}

func apField(name string, class int, label string, flags int) apElement {
	e := apElement{name: "field", attrs: [][2]string{{"name", name}, {"class", strconv.Itoa(class)}}}
	if flags&apCpool != 0 {
		e.attrs = append(e.attrs, [2]string{"constantPool", "true"})
	}
	if flags&apArray != 0 {
		e.attrs = append(e.attrs, [2]string{"dimension", "1"})
	}
	if label != "" {
		e.children = append(e.children, apAnnotation(apLabel, label))
	}
	switch {
	case flags&apUnsignedFlag != 0:
		e.children = append(e.children, apAnnotation(apUnsigned, ""))
	case flags&apBytes != 0:
		e.children = append(e.children, apAnnotation(apUnsigned, ""), apAnnotation(apDataAmount, "BYTES"))
	case flags&apTicks != 0:
		e.children = append(e.children, apAnnotation(apTimestamp, "TICKS"))
	}
	return e
}

func apAnnotation(class int, value string) apElement {
	e := apElement{name: "annotation", attrs: [][2]string{{"class", strconv.Itoa(class)}}}
	if value != "" {
		e.attrs = append(e.attrs, [2]string{"value", value})
	}
	return e
}

// apMetadata is jfrMetadata.cpp's tree, the types this recording uses.
func apMetadata() apElement {
	start := apField("startTime", apLong, "Start Time", apTicks)
	sampleFields := func(thread string, extra ...apElement) []apElement {
		return append([]apElement{start, apField(thread, apThread, "Thread", apCpool),
			apField("stackTrace", apStackTrace, "Stack Trace", apCpool)}, extra...)
	}
	return apElement{name: "root", children: []apElement{
		{name: "metadata", children: []apElement{
			apType("boolean", apBoolean, "", false), apType("char", apChar, "", false),
			apType("float", apFloat, "", false), apType("double", apDouble, "", false),
			apType("byte", apByte, "", false), apType("short", apShort, "", false),
			apType("int", apInt, "", false), apType("long", apLong, "", false),
			apType("java.lang.String", apString, "", false),
			apType("java.lang.Class", apClass, "Java Class", false,
				apField("classLoader", apClassLoader, "Class Loader", apCpool), apField("name", apSymbol, "Name", apCpool),
				apField("package", apPackage, "Package", apCpool), apField("modifiers", apInt, "Access Modifiers", 0)),
			apType("java.lang.Thread", apThread, "Thread", false,
				apField("osName", apString, "OS Thread Name", 0), apField("osThreadId", apLong, "OS Thread Id", 0),
				apField("javaName", apString, "Java Thread Name", 0), apField("javaThreadId", apLong, "Java Thread Id", 0)),
			apType("jdk.types.ClassLoader", apClassLoader, "Java Class Loader", false,
				apField("type", apClass, "Type", apCpool), apField("name", apSymbol, "Name", apCpool)),
			apType("jdk.types.FrameType", apFrameType, "Frame type", true, apField("description", apString, "Description", 0)),
			apType("jdk.types.ThreadState", apThreadState, "Java Thread State", true, apField("name", apString, "Name", 0)),
			apType("jdk.types.StackTrace", apStackTrace, "Stacktrace", false,
				apField("truncated", apBoolean, "Truncated", 0), apField("frames", apStackFrame, "Stack Frames", apArray)),
			apType("jdk.types.StackFrame", apStackFrame, "", false,
				apField("method", apMethod, "Java Method", apCpool), apField("lineNumber", apInt, "Line Number", 0),
				apField("bytecodeIndex", apInt, "Bytecode Index", 0), apField("type", apFrameType, "Frame Type", apCpool)),
			apType("jdk.types.Method", apMethod, "Java Method", false,
				apField("type", apClass, "Type", apCpool), apField("name", apSymbol, "Name", apCpool),
				apField("descriptor", apSymbol, "Descriptor", apCpool), apField("modifiers", apInt, "Access Modifiers", 0),
				apField("hidden", apBoolean, "Hidden", 0)),
			apType("jdk.types.Package", apPackage, "Package", false, apField("name", apSymbol, "Name", apCpool)),
			apType("jdk.types.Symbol", apSymbol, "Symbol", true, apField("string", apString, "String", 0)),
			apType("jdk.types.GCWhen", apGCWhen, "GC When", true, apField("when", apString, "When", 0)),
			apType("profiler.types.LogLevel", apLogLevel, "Log Level", true, apField("name", apString, "Name", 0)),
			apType("profiler.types.UserEventType", apUserEventType, "User-Defined Event Type", true, apField("name", apString, "Name", 0)),
			apType("jdk.ExecutionSample", apExecutionSample, "Method Profiling Sample", false,
				sampleFields("sampledThread", apField("state", apThreadState, "Thread State", apCpool))...),
			apType("jdk.ObjectAllocationInNewTLAB", apAllocInNewTLAB, "Allocation in new TLAB", false,
				sampleFields("eventThread", apField("objectClass", apClass, "Object Class", apCpool),
					apField("allocationSize", apLong, "Allocation Size", apBytes), apField("tlabSize", apLong, "TLAB Size", apBytes))...),
			apType("jdk.ObjectAllocationOutsideTLAB", apAllocOutsideTLAB, "Allocation outside TLAB", false,
				sampleFields("eventThread", apField("objectClass", apClass, "Object Class", apCpool),
					apField("allocationSize", apLong, "Allocation Size", apBytes))...),
			apType("jdk.ActiveSetting", apActiveSetting, "Async-profiler Setting", false,
				start, apField("id", apLong, "Event Id", 0), apField("name", apString, "Setting Name", 0), apField("value", apString, "Setting Value", 0)),
			apType("jdk.NativeLibrary", apNativeLibrary, "Native Library", false,
				start, apField("name", apString, "Name", 0), apField("baseAddress", apLong, "Base Address", 0), apField("topAddress", apLong, "Top Address", 0)),
			apType("profiler.LiveObject", apLiveObject, "Live Object", false,
				sampleFields("eventThread", apField("objectClass", apClass, "Object Class", apCpool),
					apField("allocationSize", apLong, "Allocation Size", apBytes), apField("allocationTime", apLong, "Allocation Time", apTicks))...),
			apType("profiler.WallClockSample", apWallClockSample, "Wall Clock Sample", false,
				sampleFields("sampledThread", apField("state", apThreadState, "Thread State", apCpool),
					apField("samples", apInt, "Samples", apUnsignedFlag), apField("timeSpan", apLong, "Time Span", 0))...),
			apType("jdk.jfr.Label", apLabel, "", false, apField("value", apString, "", 0)),
			apType("jdk.jfr.Category", apCategory, "", false, apField("value", apString, "", apArray)),
			apType("jdk.jfr.Timestamp", apTimestamp, "Timestamp", false, apField("value", apString, "", 0)),
			apType("jdk.jfr.DataAmount", apDataAmount, "Data Amount", false, apField("value", apString, "", 0)),
			apType("jdk.jfr.Unsigned", apUnsigned, "Unsigned Value", false),
		}},
		{name: "region", attrs: [][2]string{{"locale", "en_US"}, {"gmtOffset", "0"}}},
	}}
}

// apBuffer is async-profiler's Buffer: varints, padded varints patched
// later, and its UTF-8 strings.
type apBuffer struct{ b []byte }

func (w *apBuffer) put8(v byte) { w.b = append(w.b, v) }
func (w *apBuffer) varint(v uint64) {
	w.b = binary.AppendUvarint(w.b, v)
}
func (w *apBuffer) utf8(s string) {
	w.put8(3)
	w.varint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// skip reserves n bytes for a size patched by patch.
func (w *apBuffer) skip(n int) int { w.b = append(w.b, make([]byte, n)...); return len(w.b) - n }

// patch writes the size of what follows start there: one byte, or five as
// putVar32(offset, v) pads it.
func (w *apBuffer) patch(start, n int) {
	v := uint32(len(w.b) - start) // #nosec G115 -- a test recording's size
	if n == 1 {
		w.b[start] = byte(v)
		return
	}
	for i := range 4 {
		w.b[start+i] = byte(v>>(7*i)) | 0x80
	}
	w.b[start+4] = byte(v >> 28)
}

// apRecording is what the recording holds: per event its stack (method
// names of App, leaf first, with lines) and values.
type apSample struct {
	event  int
	stack  int // a stack trace id
	values []uint64
}

// writeAsyncProfilerJFR writes a chunk as async-profiler does, with the
// stack traces (leaf first, methods of class App) and samples given.
func writeAsyncProfilerJFR(stacks map[int][]string, lines map[string]int, samples []apSample) []byte {
	const startTicks, ticksPerSecond = 1000, 1000000000
	w := &apBuffer{}
	// writeHeader: sizes and offsets patched by finishChunk.
	w.b = append(w.b, "FLR\x00"...)
	w.b = binary.BigEndian.AppendUint16(w.b, 2)
	w.b = binary.BigEndian.AppendUint16(w.b, 0)
	w.b = append(w.b, make([]byte, 56)...)
	w.b = binary.BigEndian.AppendUint32(w.b, 1)
	// writeMetadata.
	strs, index := []string{}, map[string]int{}
	var intern func(e apElement)
	id := func(s string) {
		if _, ok := index[s]; !ok {
			index[s] = len(strs)
			strs = append(strs, s)
		}
	}
	intern = func(e apElement) {
		id(e.name)
		for _, a := range e.attrs {
			id(a[0])
			id(a[1])
		}
		for _, c := range e.children {
			intern(c)
		}
	}
	root := apMetadata()
	intern(root)
	meta := w.skip(5)
	w.varint(0)
	w.varint(startTicks)
	w.varint(0)
	w.varint(0x7fffffff)
	w.varint(uint64(len(strs)))
	for _, s := range strs {
		w.utf8(s)
	}
	var element func(e apElement)
	element = func(e apElement) {
		w.varint(uint64(index[e.name]))
		w.varint(uint64(len(e.attrs)))
		for _, a := range e.attrs {
			w.varint(uint64(index[a[0]]))
			w.varint(uint64(index[a[1]]))
		}
		w.varint(uint64(len(e.children)))
		for _, c := range e.children {
			element(c)
		}
	}
	element(root)
	w.patch(meta, 5)
	// writeSettings (one of them) and writeNativeLibraries.
	setting := w.skip(5)
	w.put8(apActiveSetting)
	w.varint(startTicks)
	w.varint(apExecutionSample)
	w.utf8("enabled")
	w.utf8("true")
	w.patch(setting, 5)
	lib := w.skip(5)
	w.put8(apNativeLibrary)
	w.varint(startTicks)
	w.utf8("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so")
	w.varint(0x7f0000000000)
	w.varint(0x7f0000100000)
	w.patch(lib, 5)
	// The events: size and type a byte each, then the fields.
	for i, s := range samples {
		start := w.skip(1)
		w.put8(byte(s.event))
		w.varint(startTicks + uint64(i)*1000) // startTime
		w.varint(7)                           // the thread
		w.varint(uint64(s.stack))
		for _, v := range s.values {
			w.varint(v)
		}
		w.patch(start, 1)
	}
	// writeCpool: 12 pools.
	cpool := len(w.b)
	w.skip(5)
	w.varint(1)
	w.varint(startTicks)
	w.varint(0)
	w.varint(0)
	w.varint(1)
	w.varint(12)
	// Frame types, thread states, GC when.
	w.varint(apFrameType)
	w.varint(2)
	w.varint(0)
	w.utf8("Interpreted")
	w.varint(1)
	w.utf8("JIT compiled")
	w.varint(apThreadState)
	w.varint(2)
	w.varint(1)
	w.utf8("STATE_RUNNABLE")
	w.varint(2)
	w.utf8("STATE_SLEEPING")
	w.varint(apGCWhen)
	w.varint(2)
	w.varint(0)
	w.utf8("Before GC")
	w.varint(1)
	w.utf8("After GC")
	// Threads: tid, osName, osThreadId, javaName, javaThreadId.
	w.varint(apThread)
	w.varint(1)
	w.varint(7)
	w.utf8("main")
	w.varint(7)
	w.utf8("main")
	w.varint(1)
	// Stack traces: methods are keyed 1.. by name; symbols: 1 the class,
	// 2 the package, then the method names and descriptor.
	methods := map[string]int{}
	var names []string
	for k := 1; k <= len(stacks); k++ {
		for _, m := range stacks[k] {
			if methods[m] == 0 {
				names = append(names, m)
				methods[m] = len(names)
			}
		}
	}
	w.varint(apStackTrace)
	w.varint(uint64(len(stacks)))
	for k := 1; k <= len(stacks); k++ {
		w.varint(uint64(k))
		w.varint(0) // truncated
		w.varint(uint64(len(stacks[k])))
		for _, m := range stacks[k] {
			w.varint(uint64(methods[m]))
			w.varint(uint64(lines[m])) // an interpreted frame: line, bci, type
			w.varint(0)
			w.put8(0)
		}
	}
	w.varint(apMethod)
	w.varint(uint64(len(names)))
	for i := range names {
		w.varint(uint64(i + 1)) // key
		w.varint(1)             // class
		w.varint(uint64(4 + i)) // name symbol
		w.varint(3)             // descriptor symbol
		w.varint(8)             // modifiers
		w.varint(0)             // hidden
	}
	w.varint(apClass) // App, also the allocated objects' class
	w.varint(1)
	w.varint(1)
	w.varint(0) // classLoader
	w.varint(1) // name symbol
	w.varint(2) // package
	w.varint(0) // access flags
	w.varint(apPackage)
	w.varint(1)
	w.varint(2)
	w.varint(2)
	w.varint(apSymbol)
	w.varint(uint64(3 + len(names)))
	for i, s := range append([]string{"App", "", "(I)D"}, names...) {
		w.varint(uint64(i + 1))
		w.utf8(s)
	}
	for range 2 { // strings and user event types are empty: a dummy string pool each
		w.varint(apString)
		w.varint(1)
		w.varint(0)
		w.put8(0)
	}
	w.varint(apLogLevel)
	w.varint(1)
	w.varint(0)
	w.utf8("ERROR")
	w.patch(cpool, 5)
	// finishChunk patches the header.
	h := w.b[8:]
	binary.BigEndian.PutUint64(h[0:], uint64(len(w.b)))
	binary.BigEndian.PutUint64(h[8:], uint64(cpool))
	binary.BigEndian.PutUint64(h[16:], 68)
	binary.BigEndian.PutUint64(h[24:], 1_700_000_000_000_000_000)
	binary.BigEndian.PutUint64(h[32:], uint64(len(samples))*1000)
	binary.BigEndian.PutUint64(h[40:], startTicks)
	binary.BigEndian.PutUint64(h[48:], ticksPerSecond)
	return w.b
}

// async-profiler's event types through the JFR row, each sample type
// against the JDK's own reader of the same file: CPU samples, wall-clock
// samples weighed by their batch count, allocations in and outside TLABs,
// live objects.
func TestAsyncProfilerJFR(t *testing.T) {
	stacks := map[int][]string{1: {"leaf", "slow", "main"}, 2: {"slow", "main"}, 3: {"leaf", "fast", "main"}}
	lines := map[string]int{"leaf": 3, "slow": 9, "fast": 6, "main": 12}
	var samples []apSample
	for k := range 6 {
		samples = append(samples,
			apSample{apExecutionSample, 1 + k%3, []uint64{1}},                      // state
			apSample{apWallClockSample, 1 + k%2, []uint64{2, uint64(k + 1), 5000}}, // state, samples, timeSpan
			apSample{apAllocInNewTLAB, 3, []uint64{1, 24, 4096}},                   // objectClass, allocationSize, tlabSize
			apSample{apAllocOutsideTLAB, 2, []uint64{1, 1 << 20}},
			apSample{apLiveObject, 1 + k%2, []uint64{1, 512 * uint64(k+1), 1000}}, // objectClass, allocationSize, allocationTime
		)
	}
	file := filepath.Join(t.TempDir(), "async-profiler.jfr")
	if err := os.WriteFile(file, writeAsyncProfilerJFR(stacks, lines, samples), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("jfr"); err != nil {
		t.Fatal("the JDK's jfr is the reference: scripts/test.sh installs it")
	}
	for _, c := range []struct {
		sampleType string
		events     []string
		weight     []string
	}{
		{"samples", []string{"jdk.ExecutionSample"}, []string{""}},
		{"wall", []string{"profiler.WallClockSample"}, []string{"samples"}},
		{"alloc", []string{"jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB"}, []string{"tlabSize", "allocationSize"}},
		{"live", []string{"profiler.LiveObject"}, []string{"allocationSize"}},
	} {
		want := map[string]int64{}
		var events int64
		for i, ev := range c.events {
			sums, n, err := toolprofiles.JFRTopFrames(file, ev, c.weight[i])
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range sums {
				want[k] += v
			}
			events += n
		}
		if events == 0 {
			t.Fatalf("%s: jfr read no events", c.sampleType)
		}
		p := parseTool(t, file, Options{SampleType: c.sampleType})
		got := map[string]int64{}
		for _, s := range p.Samples {
			got[p.Frames[s.Stack[len(s.Stack)-1]].Name] += s.Value
		}
		if len(got) != len(want) {
			t.Errorf("%s: leaves %v, jfr's %v", c.sampleType, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s %d, jfr's %d", c.sampleType, k, got[k], v)
			}
		}
	}
	for _, f := range parseTool(t, file, Options{}).Frames {
		if f.Name == "App.slow" && f.Line != int64(lines["slow"]) {
			t.Errorf("App.slow at line %d, want %d", f.Line, lines["slow"])
		}
	}
}
