package ingest

import (
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeCPUProfile: a JSON object whose keys include V8's node table
// with call frames (Node writes "nodes" first; DevTools too), and that is
// not a Chrome trace, whose ProfileChunk events carry node tables too.
func looksLikeCPUProfile(head []byte) bool {
	head = inflatedHead(head)
	return isJSONObject(head) && hasKeys(head, "nodes", "callFrame") && !hasKeys(head, "traceEvents")
}

// cpuProfile is V8's CPU profile (the DevTools protocol's Profiler.Profile):
// a tree of nodes, and samples naming the node that was on CPU, with the
// microseconds since the previous sample.
type cpuProfile struct {
	Nodes      []cpuNode
	StartTime  int64 // microseconds
	EndTime    int64
	Samples    packedInts // node ids
	TimeDeltas packedInts
	// thread, when not "", names the thread whose frame starts every
	// stack (Options.Threads): trace events' and Gecko's threads.
	thread string
}

// cpuNode is a node of a V8 CPU profile's tree.
type cpuNode struct {
	ID        int64        `json:"id"`
	CallFrame cpuCallFrame `json:"callFrame"`
	Children  []int64      `json:"children"`
	Parent    *int64       `json:"parent"` // the older format and trace events name parents instead
}

// cpuCallFrame is a node's function.
type cpuCallFrame struct {
	FunctionName string `json:"functionName"`
	URL          string `json:"url"`
	LineNumber   int64  `json:"lineNumber"` // 0-based; -1 when none
	ColumnNumber int64  `json:"columnNumber"`
}

// frame is node n's function, before any source map.
func (n *cpuNode) frame() profile.Frame {
	cf := n.CallFrame
	fn := cf.FunctionName
	if fn == "" {
		fn = "(anonymous)"
	}
	f := profile.Frame{Name: fn, Module: cf.URL, File: cf.URL} // the url whole: profile.ModuleIdentity matches it across builds
	if cf.LineNumber >= 0 {
		f.Line = cf.LineNumber + 1
	}
	return f
}

// parseCPUProfile reads a V8 CPU profile (`node --cpu-prof`, Chrome
// DevTools' Save profile). Each sample is one stack, root first without
// V8's "(root)" node; its value is 1 (sample type "samples", the default)
// or, with sample type "cpu", the microseconds until the next sample (until
// endTime for the last), as DevTools attributes time. Frames are named by
// function ("(anonymous)" when V8 has no name), their File is the script's
// url and Line its 1-based line; Module is the script's url, which
// profile.Identify makes relative to the app's root for the app's own
// files (the directory differs across checkouts). With
// o.SourceMaps, a frame of a script that has a source map is its original
// source's (scriptMaps.frame). A node table that is not a tree (a node
// with two parents, a cycle, an unknown child) is an error.
func parseCPUProfile(r io.Reader, name string, o Options) (*profile.Profile, error) {
	cp, err := readCPUProfile(r, name)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	if o.SampleType == "cpu" {
		p.SampleType, p.Unit = "cpu", "microseconds"
	}
	if cp.StartTime > 0 {
		p.Start = time.UnixMicro(cp.StartTime)
	}
	if d := cp.EndTime - cp.StartTime; d > 0 && d < 1<<62/1000 {
		p.Duration = time.Duration(d) * time.Microsecond
	}
	if err := cp.addSamples(p, name, newScriptMaps(o)); err != nil {
		return nil, err
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no samples in the CPU profile")
	}
	return p, nil
}

// readCPUProfile decodes a V8 CPU profile as a stream: its nodes one at a
// time, its samples and time deltas number by number. Keys match as
// encoding/json matches a struct's fields (case folded, the last one
// given wins); others are skipped.
func readCPUProfile(r io.Reader, name string) (*cpuProfile, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	cp := &cpuProfile{}
	err = s.object("the CPU profile", func(key string) (err error) {
		switch {
		case strings.EqualFold(key, "nodes"):
			return s.cpuNodes(&cp.Nodes)
		case strings.EqualFold(key, "samples"):
			cp.Samples = packedInts{}
			err = s.ints("samples", cp.Samples.append)
		case strings.EqualFold(key, "timeDeltas"):
			cp.TimeDeltas = packedInts{}
			err = s.ints("timeDeltas", cp.TimeDeltas.append)
		case strings.EqualFold(key, "startTime"):
			err = s.decode(&cp.StartTime)
		case strings.EqualFold(key, "endTime"):
			err = s.decode(&cp.EndTime)
		default:
			err = s.skip()
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// addSamples adds cp's samples to p, whose sample type (samples or cpu)
// says what they weigh, as parseCPUProfile describes; maps, if not nil,
// map its frames to their original sources. It lets go of cp's node
// table on the way.
func (cp *cpuProfile) addSamples(p *profile.Profile, name string, maps *scriptMaps) error {
	timed := p.SampleType == "cpu"
	if len(cp.Nodes) == 0 {
		return fileError(name, "no nodes in the CPU profile")
	}
	samples, deltas := cp.Samples.len(), cp.TimeDeltas.len()
	if deltas != 0 && deltas != samples {
		return fileError(name, "%d samples but %d time deltas", samples, deltas)
	}
	index, err := indexNodes(cp.Nodes, name)
	if err != nil {
		return err
	}
	parent := make([]int, len(cp.Nodes))
	for i := range parent {
		parent[i] = -1
	}
	for i := range cp.Nodes {
		n := &cp.Nodes[i]
		for _, c := range n.Children {
			j, ok := index.find(c)
			if !ok {
				return fileError(name, "node %d has an unknown child %d", n.ID, c)
			}
			if parent[j] >= 0 || j == i {
				return fileError(name, "node %d has two parents: the node table is not a tree", c)
			}
			parent[j] = i
		}
		if n.Parent != nil && len(n.Children) == 0 {
			j, ok := index.find(*n.Parent)
			if !ok || j == i {
				return fileError(name, "node %d has an unknown parent %d", n.ID, *n.Parent)
			}
			parent[i] = j
		}
		n.Children = nil // parent holds the tree now: their memory goes before the samples take theirs
	}
	nodes := len(cp.Nodes)
	frames := make([]uint32, nodes)
	ids := make([]int64, nodes)   // what the samples need of the nodes,
	v8Root := make([]bool, nodes) // so that their table goes before the samples come
	// interned is the id of each frame met, by all but its line: a
	// function's nodes (one a call path) are one frame, whose line Intern
	// takes from the first that has a file. Intern's work a frame would be
	// most of the cost of the nodes.
	interned := map[profile.Frame]uint32{}
	for i, n := range cp.Nodes {
		ids[i], v8Root[i] = n.ID, n.CallFrame.FunctionName == "(root)"
		cf := n.CallFrame
		f, err := maps.frame(n.frame(), cf.URL, cf.LineNumber, cf.ColumnNumber, name)
		if err != nil {
			return err
		}
		k := f
		k.Line = 0
		id, ok := interned[k]
		if !ok {
			id = p.Intern(f)
			interned[k] = id
		}
		frames[i] = id
	}
	cp.Nodes = nil
	// stacks[i] is node i's stack, built once per node on first use;
	// walking up is bounded by the node count, so a cycle is caught.
	stacks := make([][]uint32, nodes)
	var arena stackArena
	var root []uint32
	if cp.thread != "" {
		root = []uint32{threadFrame(p, cp.thread)}
	}
	stackOf := func(i int) ([]uint32, error) {
		if stacks[i] != nil {
			return stacks[i], nil
		}
		var path []int
		for j := i; j >= 0; j = parent[j] {
			if len(path) > nodes {
				return nil, fileError(name, "node %d: the parents form a cycle", ids[i])
			}
			if parent[j] < 0 && v8Root[j] {
				break
			}
			path = append(path, j)
		}
		if len(path) == 0 {
			return nil, fileError(name, "a sample of the root node %d", ids[i])
		}
		s := arena.alloc(len(root) + len(path))
		copy(s, root)
		for k, j := range path {
			s[len(s)-1-k] = frames[j]
		}
		stacks[i] = s
		return s, nil
	}
	p.Samples = slices.Grow(p.Samples, samples) // not the doubling of append: the samples are most of the memory
	at := cp.StartTime
	for k := range samples {
		id := cp.Samples.at(k)
		i, ok := index.find(id)
		if !ok {
			return fileError(name, "sample %d names an unknown node %d", k+1, id)
		}
		s, err := stackOf(i)
		if err != nil {
			return err
		}
		sample := profile.Sample{Stack: s, Value: 1, Time: -1}
		if deltas > 0 {
			at += cp.TimeDeltas.at(k)
			if t := at - cp.StartTime; t >= 0 && t < 1<<62/1000 {
				sample.Time = t * 1000
			}
			if timed {
				next := cp.EndTime
				if k+1 < samples {
					next = at + cp.TimeDeltas.at(k+1)
				}
				sample.Value = max(next-at, 0)
			}
		} else if timed {
			return fileError(name, "no time deltas: sample type cpu needs them")
		}
		p.Samples = append(p.Samples, sample)
	}
	return nil
}

// nodeIndex finds a node by its id: in a slice by id where the ids are
// about 1 to the node count, as V8 numbers them (a look-up a sample, no
// map's cost), else in a map.
type nodeIndex struct {
	byID  []int // the node's index + 1; 0 for none
	index map[int64]int
}

// indexNodes indexes nodes, whose ids must differ.
func indexNodes(nodes []cpuNode, name string) (nodeIndex, error) {
	var x nodeIndex
	top := int64(-1)
	for _, n := range nodes {
		if n.ID < 0 {
			top = math.MaxInt64
			break
		}
		top = max(top, n.ID)
	}
	if top <= 2*int64(len(nodes)) {
		x.byID = make([]int, top+1)
	} else {
		x.index = make(map[int64]int, len(nodes))
	}
	for i, n := range nodes {
		if _, dup := x.find(n.ID); dup {
			return x, fileError(name, "node id %d given twice", n.ID)
		}
		if x.byID != nil {
			x.byID[n.ID] = i + 1
		} else {
			x.index[n.ID] = i
		}
	}
	return x, nil
}

// find is the index of the node id.
func (x *nodeIndex) find(id int64) (int, bool) {
	if x.byID == nil {
		i, ok := x.index[id]
		return i, ok
	}
	if id < 0 || id >= int64(len(x.byID)) {
		return 0, false
	}
	i := x.byID[id]
	return i - 1, i > 0
}
