package ingest

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/flamediff/flamediff/pkg/profile"
)

// The processed profile versions read (meta.preprocessedProfileVersion):
// from 29, which made samples' weight and weightType part of the format,
// to 70, the version of the Firefox Profiler read for this reader
// (firefox-devtools/profiler/src/types/profile.ts and its
// docs-developer/CHANGELOG-formats.md at df31314). An older file is upgraded by
// opening it in the Firefox Profiler and saving it again; a newer one may
// have moved a column this reader needs, so it is refused.
const (
	processedMinVersion = 29
	processedMaxVersion = 70
)

// The versions at which the processed format moved what this reader uses.
const (
	processedSharedStrings = 56 // stringArray moved to profile.shared
	processedSources       = 58 // funcTable.fileName became source, an index into shared.sources
	processedSharedTables  = 60 // stack, frame, func and resource tables moved to profile.shared
	processedPrefixOffset  = 66 // stackTable.prefix became prefixOffset
)

// maxStackFrames bounds the frames of all the distinct sampled stacks
// together: a stack table is a tree whose paths a hostile file can make
// share nothing (a comb of a million teeth), which would cost memory
// quadratic in its size.
var maxStackFrames = 1 << 26 // a variable for the test of the bound

// looksLikeProcessedGecko: a JSON object, gzipped or not, whose meta names
// the processed profile version (it comes before the long marker schema in
// the files the Firefox Profiler writes).
func looksLikeProcessedGecko(head []byte) bool {
	head = inflatedHead(head)
	return isJSONObject(head) && hasKeys(head, "meta", "preprocessedProfileVersion")
}

// column is a column of indices, null read as -1 (readColumn).
type column []int64

// weights is a samples table's weight column: numbers, or nil for none.
type weights []float64

// processedTables are the tables a thread's samples refer to: the
// thread's own before version 60, profile.shared from it on. A table the
// file does not have is nil.
type processedTables struct {
	StringArray   []string
	StackTable    *processedStackTable
	FrameTable    *processedFrameTable
	FuncTable     *processedFuncTable
	ResourceTable *processedResourceTable
	Sources       *processedSourceTable
}

type processedStackTable struct {
	Frame, Prefix, PrefixOffset column
	Length                      int64
}

type processedFrameTable struct {
	Func   column
	Length int64
}

type processedFuncTable struct {
	Name     column
	IsJS     []bool
	Resource column
	FileName column
	Source   column
	// LineNumber is 1-based.
	LineNumber column
	Length     int64
}

type processedResourceTable struct {
	Name   column
	Length int64
}

type processedSourceTable struct {
	Filename column
	Length   int64
}

type processedProfile struct {
	Meta struct {
		Version *int64
	}
	Shared  processedTables
	Threads []processedThread
}

type processedThread struct {
	Name string
	processedTables
	Samples *processedSamples
}

type processedSamples struct {
	Stack      column
	Weight     weights
	WeightType string
	Length     int64
}

// processedWeights maps a samples table's weightType to the run's sample
// type, unit and the factor to it.
var processedWeights = map[string]struct {
	sampleType, unit string
	scale            float64
}{
	"samples":    {"samples", "count", 1},
	"tracing-ms": {"time", "nanoseconds", 1e6},
	"bytes":      {"bytes", "bytes", 1},
}

// parseProcessedGecko reads the Firefox Profiler's processed profile
// format (what profiler.firefox.com saves and uploads, and what samply and
// the profiler's importers write), versions processedMinVersion to
// processedMaxVersion. Its tables are columns: the samples of every thread
// (one run, as the raw Gecko row reads threads) name a stack; a stack its
// prefix stack and its frame; a frame its function; a function its name,
// file (fileName, or its source's filename from version 58), first line
// (lineNumber, 1-based) and resource (the library or web host its code
// came from). A sample weighs its weight (1 when the column is null), in
// the unit of its weightType: samples are a count, tracing-ms become
// nanoseconds of time, bytes stay bytes. Module is a JS function's script
// (its file's base name, as the V8 rows name it) and any other function's
// resource (the library, by its base name). Samples with a null stack
// are skipped. A column shorter than its table's length, an index out of
// its table, a stack whose prefix does not come before it (the format's
// order, which rules out cycles) and weights of another type than another
// thread's are errors.
func parseProcessedGecko(r io.Reader, name string, o Options) (*profile.Profile, error) {
	g, err := readProcessedGecko(r, name)
	if err != nil {
		return nil, err
	}
	if g.Meta.Version == nil {
		return nil, fileError(name, "no meta.preprocessedProfileVersion: not a processed Firefox profile")
	}
	v := *g.Meta.Version
	if v < processedMinVersion || v > processedMaxVersion {
		return nil, fileError(name, "processed profile version %d: this reads versions %d to %d (the Firefox Profiler upgrades an older file when it opens and saves it)",
			v, processedMinVersion, processedMaxVersion)
	}
	p := &profile.Profile{}
	var weightType string
	budget := maxStackFrames
	var shared *processedStacks // from version 60 on, one for all threads
	for ti := range g.Threads {
		th := &g.Threads[ti]
		what := fmt.Sprintf("thread %d (%s)", ti, th.Name)
		if th.Samples == nil {
			return nil, fileError(name, "%s: no samples table", what)
		}
		s := th.Samples
		if err := columnsOf(s.Length, "samples", "stack", len(s.Stack)); err != nil {
			return nil, fileError(name, "%s: %v", what, err)
		}
		if s.Weight != nil {
			if err := columnsOf(s.Length, "samples", "weight", len(s.Weight)); err != nil {
				return nil, fileError(name, "%s: %v", what, err)
			}
		}
		if s.WeightType == "" {
			s.WeightType = "samples"
		}
		unit, ok := processedWeights[s.WeightType]
		if !ok {
			return nil, fileError(name, "%s: unknown weightType %q (want samples, tracing-ms or bytes)", what, s.WeightType)
		}
		if weightType == "" {
			weightType, p.SampleType, p.Unit = s.WeightType, unit.sampleType, unit.unit
		} else if weightType != s.WeightType {
			return nil, fileError(name, "%s: weightType %s, another thread's is %s", what, s.WeightType, weightType)
		}
		st := shared
		if st == nil {
			st = &processedStacks{tables: g.Shared, strings: g.Shared.StringArray, version: v, p: p, budget: &budget}
			if v < processedSharedTables {
				st.tables = th.processedTables
			}
			if v < processedSharedStrings {
				st.strings = th.StringArray
			}
			if err := st.check(); err != nil {
				return nil, fileError(name, "%s: %v", what, err)
			}
			if v >= processedSharedTables {
				shared = st
			}
		}
		var thread []uint32 // the thread's frame, with o.Threads
		if o.Threads {
			thread = []uint32{threadFrame(p, th.Name)}
		}
		p.Samples = slices.Grow(p.Samples, len(s.Stack)) // not the doubling of append: the samples are most of the memory
		for k, stack := range s.Stack {
			if stack < 0 {
				continue
			}
			w := unit.scale // a weight of 1 in weightType's unit
			if s.Weight != nil {
				w = s.Weight[k] * unit.scale
			}
			if w < 0 || w >= math.MaxInt64 {
				return nil, fileError(name, "%s: sample %d weighs %v", what, k, w)
			}
			if w == 0 {
				continue
			}
			frames, err := st.stack(stack)
			if err != nil {
				return nil, fileError(name, "%s: sample %d: %v", what, k, err)
			}
			if thread != nil {
				frames = append(thread[:1:1], frames...) // a copy: each sample its own stack
			}
			p.Samples = append(p.Samples, profile.Sample{Stack: frames, Value: int64(math.Round(w)), Time: -1})
		}
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no samples with a stack in the processed profile")
	}
	return p, nil
}

// columnsOf checks a column of n values against its table's length.
func columnsOf(length int64, table, col string, n int) error {
	if int64(n) != length {
		return fmt.Errorf("%s.%s has %d values, the table's length is %d", table, col, n, length)
	}
	return nil
}

// processedStacks turns a thread's stack indices into Flamediff stacks,
// each stack built once.
type processedStacks struct {
	tables  processedTables
	strings []string
	version int64
	p       *profile.Profile
	budget  *int
	stacks  [][]uint32
	frames  []int64 // interned frame of each func, -1 before its first use
}

// check verifies that the tables and the columns read are there and as
// long as their tables say.
func (s *processedStacks) check() error {
	t := s.tables
	if t.StackTable == nil || t.FrameTable == nil || t.FuncTable == nil {
		return fmt.Errorf("no stackTable, frameTable or funcTable")
	}
	st, ft, fn := t.StackTable, t.FrameTable, t.FuncTable
	prefixCol, prefix := "prefix", st.Prefix
	if s.version >= processedPrefixOffset {
		prefixCol, prefix = "prefixOffset", st.PrefixOffset
	}
	fileCol, file := "fileName", fn.FileName
	if s.version >= processedSources {
		fileCol, file = "source", fn.Source
		if t.Sources == nil {
			return fmt.Errorf("no sources table")
		}
		if err := columnsOf(t.Sources.Length, "sources", "filename", len(t.Sources.Filename)); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		length     int64
		table, col string
		n          int
	}{
		{st.Length, "stackTable", "frame", len(st.Frame)},
		{st.Length, "stackTable", prefixCol, len(prefix)},
		{ft.Length, "frameTable", "func", len(ft.Func)},
		{fn.Length, "funcTable", "name", len(fn.Name)},
		{fn.Length, "funcTable", "isJS", len(fn.IsJS)},
		{fn.Length, "funcTable", "resource", len(fn.Resource)},
		{fn.Length, "funcTable", fileCol, len(file)},
		{fn.Length, "funcTable", "lineNumber", len(fn.LineNumber)},
	} {
		if err := columnsOf(c.length, c.table, c.col, c.n); err != nil {
			return err
		}
	}
	if t.ResourceTable != nil {
		if err := columnsOf(t.ResourceTable.Length, "resourceTable", "name", len(t.ResourceTable.Name)); err != nil {
			return err
		}
	}
	s.stacks = make([][]uint32, st.Length)
	s.frames = make([]int64, fn.Length)
	for i := range s.frames {
		s.frames[i] = -1
	}
	return nil
}

// parent is stack i's prefix stack, -1 for a root.
func (s *processedStacks) parent(i int64) (int64, error) {
	st := s.tables.StackTable
	if s.version >= processedPrefixOffset {
		off := st.PrefixOffset[i]
		if off < 0 || off > i {
			return 0, fmt.Errorf("stack %d: prefixOffset %d points before the table", i, off)
		}
		if off == 0 {
			return -1, nil
		}
		return i - off, nil
	}
	prefix := st.Prefix[i]
	if prefix >= i {
		return 0, fmt.Errorf("stack %d: prefix %d does not come before it (the stack table is in topological order)", i, prefix)
	}
	return prefix, nil
}

// stack is stack i's frames, root first.
func (s *processedStacks) stack(i int64) ([]uint32, error) {
	if i >= int64(len(s.stacks)) {
		return nil, fmt.Errorf("stack %d out of the %d of the stack table", i, len(s.stacks))
	}
	if s.stacks[i] != nil {
		return s.stacks[i], nil
	}
	var path []int64 // i and its prefixes up to the first one built
	j := i
	for j >= 0 && s.stacks[j] == nil {
		path = append(path, j)
		var err error
		if j, err = s.parent(j); err != nil {
			return nil, err
		}
	}
	var base []uint32
	if j >= 0 {
		base = s.stacks[j]
	}
	// Every stack on the path is built: they are sampled or prefixes of
	// sampled ones, and built once each.
	for k := len(path) - 1; k >= 0; k-- {
		id, err := s.frame(path[k])
		if err != nil {
			return nil, err
		}
		if *s.budget -= len(base) + 1; *s.budget < 0 {
			return nil, fmt.Errorf("the sampled stacks hold more than %d frames in all", maxStackFrames)
		}
		next := make([]uint32, len(base)+1)
		copy(next, base)
		next[len(base)] = id
		s.stacks[path[k]], base = next, next
	}
	return base, nil
}

// frame interns the function of stack i's frame.
func (s *processedStacks) frame(i int64) (uint32, error) {
	t := s.tables
	fr := t.StackTable.Frame[i]
	if fr < 0 || fr >= t.FrameTable.Length {
		return 0, fmt.Errorf("stack %d: frame %d out of the %d of the frame table", i, fr, t.FrameTable.Length)
	}
	fn := t.FrameTable.Func[fr]
	if fn < 0 || fn >= t.FuncTable.Length {
		return 0, fmt.Errorf("frame %d: func %d out of the %d of the func table", fr, fn, t.FuncTable.Length)
	}
	if id := s.frames[fn]; id >= 0 {
		return uint32(id), nil // #nosec G115 -- an interned frame id
	}
	ft := t.FuncTable
	str := func(k int64, what string) (string, error) {
		if k < 0 {
			return "", nil
		}
		if k >= int64(len(s.strings)) {
			return "", fmt.Errorf("func %d: %s string %d out of the %d of the string array", fn, what, k, len(s.strings))
		}
		return s.strings[k], nil
	}
	fname, err := str(ft.Name[fn], "name")
	if err != nil {
		return 0, err
	}
	fileIndex := int64(-1)
	if s.version >= processedSources {
		if src := ft.Source[fn]; src >= t.Sources.Length {
			return 0, fmt.Errorf("func %d: source %d out of the %d of the sources", fn, src, t.Sources.Length)
		} else if src >= 0 {
			fileIndex = t.Sources.Filename[src]
		}
	} else {
		fileIndex = ft.FileName[fn]
	}
	file, err := str(fileIndex, "file")
	if err != nil {
		return 0, err
	}
	f := profile.Frame{Name: fname, File: file}
	if line := ft.LineNumber[fn]; line > 0 {
		f.Line = line
	}
	if ft.IsJS[fn] {
		f.Module = file // whole: profile.ModuleIdentity matches it across builds
	} else if res := ft.Resource[fn]; res >= 0 {
		if t.ResourceTable == nil || res >= t.ResourceTable.Length {
			return 0, fmt.Errorf("func %d: resource %d out of the resource table", fn, res)
		}
		lib, err := str(t.ResourceTable.Name[res], "resource")
		if err != nil {
			return 0, err
		}
		f.Module = lib
	}
	id := s.p.Intern(f)
	s.frames[fn] = int64(id)
	return id, nil
}
