package ingest

import (
	"io"
	"regexp"
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

// addGeckoThread adds thread th's samples to p.
func addGeckoThread(p *profile.Profile, th *geckoThread, name, what string, threads bool) error {
	n := th.stackTable.rows()
	prefix := make([]int64, n)
	keep := make([]bool, n)
	nodes := make([]cpuNode, n)
	frames := th.frameTable.rows()
	for i := range n {
		prefix[i] = -1
		if pr, ok := th.stackTable.cell(i, geckoPrefix); ok {
			if pr < 0 || pr >= int64(n) {
				return fileError(name, "%s: stack %d has an unknown prefix %d", what, i, pr)
			}
			prefix[i] = pr
		}
		f, ok := th.stackTable.cell(i, geckoFrameColumn)
		if !ok || f < 0 || f >= int64(frames) {
			return fileError(name, "%s: stack %d names no frame of %d", what, i, frames)
		}
		loc, ok := th.frameTable.cell(int(f), geckoLocation)
		if !ok || loc < 0 || loc >= int64(len(th.strings)) {
			return fileError(name, "%s: frame %d names no string of %d", what, f, len(th.strings))
		}
		nodes[i], keep[i] = geckoFrame(th.strings[loc])
		if nodes[i].CallFrame.LineNumber < 0 && nodes[i].CallFrame.URL != "" {
			if line, ok := th.frameTable.cell(int(f), geckoLine); ok && line > 0 {
				nodes[i].CallFrame.LineNumber = line - 1
			}
		}
	}
	// kept is stack i or its nearest prefix that is a frame, -1 for none;
	// a walk longer than the table is a cycle.
	kept := func(i int64) (int64, error) {
		for steps := 0; i >= 0 && !keep[i]; steps++ {
			if steps > n {
				return 0, fileError(name, "%s: stack %d: the prefixes form a cycle", what, i)
			}
			i = prefix[i]
		}
		return i, nil
	}
	cp := cpuProfile{}
	if threads {
		cp.thread = th.name
	}
	for i := range nodes {
		if !keep[i] {
			continue
		}
		nd := &nodes[i]
		nd.ID = int64(i)
		parent, err := kept(prefix[i])
		if err != nil {
			return err
		}
		if parent >= 0 {
			nd.Parent = &parent
		}
		cp.Nodes = append(cp.Nodes, *nd)
	}
	var orphans int // samples of stacks of addresses only
	for k := range th.samples.rows() {
		s, ok := th.samples.cell(k, geckoStack)
		if !ok {
			continue
		}
		if s < 0 || s >= int64(n) {
			return fileError(name, "%s: a sample names an unknown node %d", what, s)
		}
		k, err := kept(s)
		if err != nil {
			return err
		}
		if k >= 0 && nodes[k].CallFrame.FunctionName == "(root)" {
			// Gecko's root label, which stacks leave out (as V8's): a
			// sample there ran unsymbolicated code only.
			if up, err := kept(prefix[k]); err != nil {
				return err
			} else if up < 0 {
				k = -1
			}
		}
		if k < 0 {
			orphans++
			continue
		}
		cp.Samples.append(k)
	}
	if orphans > 0 {
		stack := []uint32{p.Intern(profile.Frame{Name: geckoUnsymbolicated})}
		if cp.thread != "" {
			stack = []uint32{threadFrame(p, cp.thread), stack[0]}
		}
		for range orphans {
			p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: 1, Time: -1})
		}
	}
	if cp.Samples.len() == 0 {
		return nil
	}
	return cp.addSamples(p, name, nil) // Gecko resolves no columns: no source maps
}

// geckoUnsymbolicated names the code of a sample whose frames are all
// unsymbolicated addresses.
const geckoUnsymbolicated = "(unsymbolicated code)"
