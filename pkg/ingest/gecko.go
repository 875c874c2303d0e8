package ingest

import (
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeGecko: a JSON object, gzipped or not, with threads whose tables have schemas,
// or with Gecko's meta or libs first (Firefox writes its libraries and
// meta, tens of kilobytes, before the threads), that is no processed
// profile: the raw Gecko profile format (simpleperf's
// gecko_profile_generator.py, Firefox's own profiler before processing).
func looksLikeGecko(head []byte) bool {
	head = inflatedHead(head)
	return isJSONObject(head) && !hasKeys(head, "preprocessedProfileVersion") &&
		(hasKeys(head, "threads", "stackTable", "schema") || hasKeys(head, "meta", "stackwalk", "processType") ||
			hasKeys(head, "libs", "breakpadId"))
}

// geckoMaxProcessDepth bounds the nesting of processes: Firefox's are one
// deep.
const geckoMaxProcessDepth = 4

// parseGecko reads the raw Gecko profile format as Firefox's profiler and
// simpleperf's gecko_profile_generator.py write it: per thread a stack
// table (prefix, frame), a frame table (location, a string; line) and
// samples (stack, time), each a sample of value 1; every thread of the
// profile and of its child processes (processes[]) into the one run. The
// stack table is a tree, read as a V8 CPU profile's node table is. A
// location is read by the Firefox Profiler's rules (firefox-devtools/
// profiler/src/profile-logic/process-profile.ts): "name (in module)" is a native function in module;
// "name (url:line:column)" a JS function of the script url, first at
// line. A JS location's source index "[n]" at its end (Gecko 32 on) is
// left out: it numbers the sources as each run met them, and a script's
// top-level code, "url[n]", would be another frame in every run. "0x..."
// is an unsymbolicated address (native code Gecko walked, JIT code): an
// instruction, not a function, until symbolicated, which Flamediff does
// not do, so it is no frame and its time is its caller's (a thousand
// samples in one function would be a thousand frames). Any other location
// is a label frame, a name. A cycle of prefixes, an unknown stack, frame
// or string is an error.
func parseGecko(r io.Reader, name string, o Options) (*profile.Profile, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	g := geckoReader{p: p, threads: o.Threads}
	if err := g.process(s, "", 0); err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no samples with a stack in the Gecko profile")
	}
	return p, nil
}

// jsLocation is a JS frame's location: "name (url:line:column)", the
// column optional, as the Firefox Profiler matches it (after its source
// index).
var jsLocation = regexp.MustCompile(`^(.*) \((.+?):([0-9]+)(?::([0-9]+))?\)$`)

// sourceIndex is a JS location's source index, "[n]" at its end.
var sourceIndex = regexp.MustCompile(`\[\d+\]$`)

// geckoFrame names the frame at location; keep false for an
// unsymbolicated address.
func geckoFrame(loc string) (f cpuNode, keep bool) {
	cf := &f.CallFrame
	cf.FunctionName, cf.LineNumber = loc, -1
	if len(loc) > 2 && strings.HasPrefix(loc, "0x") {
		if _, err := strconv.ParseUint(loc[2:], 16, 64); err == nil {
			return f, false
		}
	}
	if j := strings.LastIndex(loc, " (in "); j > 0 && strings.HasSuffix(loc, ")") {
		cf.FunctionName, cf.URL = loc[:j], loc[j+len(" (in "):len(loc)-1]
		return f, true
	}
	loc = sourceIndex.ReplaceAllString(loc, "")
	cf.FunctionName = loc
	if m := jsLocation.FindStringSubmatch(loc); m != nil {
		url := m[2]
		if k := strings.LastIndex(url, " -> "); k >= 0 {
			url = url[k+len(" -> "):] // "loader -> script": the script
		}
		cf.FunctionName, cf.URL = m[1], url
		if line, err := strconv.ParseInt(m[3], 10, 64); err == nil && line > 0 {
			cf.LineNumber = line - 1
		}
	}
	return f, true
}

// addGeckoThread adds thread th's samples to p. Its stack table is read
// as a V8 node table would be (cpuProfile.addSamples: the same frames,
// interned in the same order, and stacks), with what a stack costs kept
// to a few bytes: a Firefox stack table has as many rows as samples.
func addGeckoThread(p *profile.Profile, th *geckoThread, name, what string, threads bool) error {
	n := th.stackTable.rows()
	prefix := make([]int32, n) // rows are fewer than maxItems: they fit
	frameOf := make([]int32, n)
	frames := th.frameTable.rows()
	locs := make([]geckoLocated, frames) // a frame's location, read once
	for i := range n {
		prefix[i] = -1
		if pr, ok := th.stackTable.cell(i, geckoPrefix); ok {
			if pr < 0 || pr >= int64(n) {
				return fileError(name, "%s: stack %d has an unknown prefix %d", what, i, pr)
			}
			prefix[i] = int32(pr) // #nosec G115 -- below n
		}
		f, ok := th.stackTable.cell(i, geckoFrameColumn)
		if !ok || f < 0 || f >= int64(frames) {
			return fileError(name, "%s: stack %d names no frame of %d", what, i, frames)
		}
		frameOf[i] = int32(f) // #nosec G115 -- below frames
		if l := &locs[f]; !l.read {
			loc, ok := th.frameTable.cell(int(f), geckoLocation)
			if !ok || loc < 0 || loc >= int64(len(th.strings)) {
				return fileError(name, "%s: frame %d names no string of %d", what, f, len(th.strings))
			}
			l.node, l.keep = geckoFrame(th.strings[loc])
			if l.node.CallFrame.LineNumber < 0 && l.node.CallFrame.URL != "" {
				if line, ok := th.frameTable.cell(int(f), geckoLine); ok && line > 0 {
					l.node.CallFrame.LineNumber = line - 1
				}
			}
			l.read = true
		}
	}
	keep := func(i int32) bool { return locs[frameOf[i]].keep }
	// kept is stack i or its nearest prefix that is a frame, -1 for none;
	// a walk longer than the table is a cycle.
	kept := func(i int32) (int32, error) {
		for steps := 0; i >= 0 && !keep(i); steps++ {
			if steps > n {
				return 0, fileError(name, "%s: stack %d: the prefixes form a cycle", what, i)
			}
			i = prefix[i]
		}
		return i, nil
	}
	v8Root := func(i int32) bool { return locs[frameOf[i]].node.CallFrame.FunctionName == "(root)" }
	parent := make([]int32, n) // the nearest kept prefix of a kept stack
	nodes := 0
	for i := int32(0); int(i) < n; i++ {
		if keep(i) {
			up, err := kept(prefix[i])
			if err != nil {
				return err
			}
			parent[i] = up
			nodes++
		}
	}
	var sampled []int32
	var orphans int // samples of stacks of addresses only
	for k := range th.samples.rows() {
		s, ok := th.samples.cell(k, geckoStack)
		if !ok {
			continue
		}
		if s < 0 || s >= int64(n) {
			return fileError(name, "%s: a sample names an unknown node %d", what, s)
		}
		k, err := kept(int32(s)) // #nosec G115 -- below n
		if err != nil {
			return err
		}
		if k >= 0 && v8Root(k) && parent[k] < 0 {
			// Gecko's root label, which stacks leave out (as V8's): a
			// sample there ran unsymbolicated code only.
			k = -1
		}
		if k < 0 {
			orphans++
			continue
		}
		sampled = append(sampled, k)
	}
	threadName := "" // as cpuProfile.thread: a thread without a name has no frame
	if threads {
		threadName = th.name
	}
	if orphans > 0 {
		stack := []uint32{p.Intern(profile.Frame{Name: geckoUnsymbolicated})}
		if threadName != "" {
			stack = []uint32{threadFrame(p, threadName), stack[0]}
		}
		for range orphans {
			p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: 1, Time: -1})
		}
	}
	if len(sampled) == 0 {
		return nil
	}
	ids := make([]uint32, frames)
	for i := int32(0); int(i) < n; i++ {
		if l := &locs[frameOf[i]]; keep(i) && !l.interned {
			ids[frameOf[i]], l.interned = p.Intern(l.node.frame()), true
		}
	}
	var thread []uint32
	if threadName != "" {
		thread = []uint32{threadFrame(p, threadName)}
	}
	// stacks[i] is kept stack i's frames, built once on first use;
	// walking up is bounded by the kept stacks' count, so a cycle is
	// caught.
	stacks := make([][]uint32, n)
	var arena stackArena
	var path []int32
	p.Samples = slices.Grow(p.Samples, len(sampled))
	for _, i := range sampled {
		if stacks[i] == nil {
			path = path[:0]
			for j := i; j >= 0 && !(parent[j] < 0 && v8Root(j)); j = parent[j] {
				if len(path) > nodes {
					return fileError(name, "node %d: the parents form a cycle", i)
				}
				path = append(path, j)
			}
			st := arena.alloc(len(thread) + len(path))
			copy(st, thread)
			for k, j := range path {
				st[len(st)-1-k] = ids[frameOf[j]]
			}
			stacks[i] = st
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: stacks[i], Value: 1, Time: -1})
	}
	return nil
}

// geckoLocated is a frame of a Gecko frame table as read: its function
// (geckoFrame) and whether it was interned yet.
type geckoLocated struct {
	node       cpuNode
	keep, read bool
	interned   bool
}

// geckoUnsymbolicated names the code of a sample whose frames are all
// unsymbolicated addresses.
const geckoUnsymbolicated = "(unsymbolicated code)"
