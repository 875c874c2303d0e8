package ingest

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeGecko: a JSON object with threads whose tables have schemas,
// the raw Gecko profile format (simpleperf's gecko_profile_generator.py,
// Firefox's own profiler before processing).
func looksLikeGecko(head []byte) bool {
	return isJSONObject(head) && hasKeys(head, "threads", "stackTable", "schema")
}

// geckoTable is a table of the raw Gecko format: rows of values, the
// schema naming each column's index.
type geckoTable struct {
	Schema map[string]int      `json:"schema"`
	Data   [][]json.RawMessage `json:"data"`
}

// cell is row's value of column name, ok false when the schema has no such
// column or the row no value there (null).
func (t *geckoTable) cell(row []json.RawMessage, name string) (int64, bool) {
	i, ok := t.Schema[name]
	if !ok || i < 0 || i >= len(row) {
		return 0, false
	}
	var v *int64
	if json.Unmarshal(row[i], &v) != nil || v == nil {
		return 0, false
	}
	return *v, true
}

type geckoProfile struct {
	Threads []struct {
		Name        string     `json:"name"`
		Samples     geckoTable `json:"samples"`
		StackTable  geckoTable `json:"stackTable"`
		FrameTable  geckoTable `json:"frameTable"`
		StringTable []string   `json:"stringTable"`
	} `json:"threads"`
}

// parseGecko reads the raw Gecko profile format as simpleperf's
// gecko_profile_generator.py writes it: per thread a stack table (prefix,
// frame), a frame table (location, a string; line) and samples (stack,
// time), each a sample of value 1, every thread into the one run. The
// stack table is a tree, read as a V8 CPU profile's node table is: a
// location "name (in module)" is function name in module, any other
// location a name. A cycle of prefixes, an unknown stack, frame or string
// is an error.
func parseGecko(r io.Reader, name string, o Options) (*profile.Profile, error) {
	var g geckoProfile
	if err := readJSON(r, name, &g); err != nil {
		return nil, err
	}
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	for ti, th := range g.Threads {
		cp := cpuProfile{Nodes: make([]cpuNode, len(th.StackTable.Data))}
		if o.Threads {
			cp.thread = th.Name
		}
		for i, row := range th.StackTable.Data {
			n := &cp.Nodes[i]
			n.ID = int64(i)
			if prefix, ok := th.StackTable.cell(row, "prefix"); ok {
				n.Parent = &prefix
			}
			f, ok := th.StackTable.cell(row, "frame")
			if !ok || f < 0 || f >= int64(len(th.FrameTable.Data)) {
				return nil, fileError(name, "thread %d (%s): stack %d names no frame of %d", ti, th.Name, i, len(th.FrameTable.Data))
			}
			frame := th.FrameTable.Data[f]
			loc, ok := th.FrameTable.cell(frame, "location")
			if !ok || loc < 0 || loc >= int64(len(th.StringTable)) {
				return nil, fileError(name, "thread %d (%s): frame %d names no string of %d", ti, th.Name, f, len(th.StringTable))
			}
			fn, module := th.StringTable[loc], ""
			if j := strings.LastIndex(fn, " (in "); j > 0 && strings.HasSuffix(fn, ")") {
				fn, module = fn[:j], fn[j+len(" (in "):len(fn)-1]
			}
			n.CallFrame.FunctionName, n.CallFrame.URL, n.CallFrame.LineNumber = fn, module, -1
			if line, ok := th.FrameTable.cell(frame, "line"); ok && line > 0 {
				n.CallFrame.LineNumber = line - 1
			}
		}
		for _, row := range th.Samples.Data {
			if s, ok := th.Samples.cell(row, "stack"); ok {
				cp.Samples = append(cp.Samples, s)
			}
		}
		if len(cp.Samples) == 0 {
			continue
		}
		if err := cp.addSamples(p, name); err != nil {
			return nil, err
		}
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no samples with a stack in the Gecko profile")
	}
	return p, nil
}
