package ingest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"slices"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeTraceEvents: the Trace Event Format's object form (a
// "traceEvents" key) or its array form (an array of objects with "ph").
func looksLikeTraceEvents(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return hasKeys(head, "traceEvents")
	case bytes.HasPrefix(t, []byte("[")):
		return bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t\r\n"), []byte("{")) && hasKeys(head, "ph")
	}
	return false
}

// traceEvent is one event of the Trace Event Format: ts and dur are
// microseconds (fractions allowed); args is read only for the events
// that carry what Flamediff reads.
type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"` // a number, or a string in some writers
	Tid  json.RawMessage `json:"tid"`
	ID   json.RawMessage `json:"id"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args json.RawMessage `json:"args"`
}

// traceProfileData is the args.data of a Profile or ProfileChunk event:
// V8's CPU profile spread over a trace's events.
type traceProfileData struct {
	StartTime  float64 `json:"startTime"`
	EndTime    float64 `json:"endTime"`
	CPUProfile struct {
		Nodes   []cpuNode `json:"nodes"`
		Samples []int64   `json:"samples"`
	} `json:"cpuProfile"`
	TimeDeltas []int64 `json:"timeDeltas"`
}

// parseTraceEvents reads a Chrome Trace Event Format file (Chrome's and
// Node's tracing, Perfetto's JSON export), in the object or the array
// form (whose closing bracket may be missing). With sample type wall (the
// default) its duration events — X (complete) and B/E pairs of a thread —
// become a span flame graph as OpenTelemetry traces do (SpanBuilder):
// on each thread an event is a span, the child of the innermost event
// that encloses it, framed "thread: name" by the thread's name (its
// thread_name metadata event, else its process's name). With sample type
// samples or cpu its V8 CPU profiles (a Profile event and its ProfileChunk
// events, nodes and samples spread over them) are read as a .cpuprofile
// is. An E with no open B on its thread, a B never ended, and a negative
// duration are errors, and so are events nested deeper than
// maxTraceNesting.
func parseTraceEvents(r io.Reader, name string, o Options) (*profile.Profile, error) {
	events, err := readTraceEvents(r, name)
	if err != nil {
		return nil, err
	}
	switch o.SampleType {
	case "", "wall":
		return traceSpans(events, name)
	case "samples", "cpu":
		return traceCPUProfiles(events, name, o.SampleType)
	}
	return nil, fileError(name, "no sample type %q: trace events have wall (their duration events), samples and cpu (their CPU profiles)", o.SampleType)
}

func readTraceEvents(r io.Reader, name string) ([]traceEvent, error) {
	data, err := readAllJSON(r, name)
	if err != nil {
		return nil, err
	}
	var file struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	t := bytes.TrimSpace(data)
	if bytes.HasPrefix(t, []byte("[")) {
		// The array form may end without its bracket (a trace cut short
		// by the writer's exit), after a trailing comma.
		if !bytes.HasSuffix(t, []byte("]")) {
			t = append(bytes.TrimRight(t, ", \t\r\n"), ']')
		}
		err = decodeJSON(t, name, &file.TraceEvents)
	} else {
		err = decodeJSON(t, name, &file)
	}
	if err != nil {
		return nil, err
	}
	if len(file.TraceEvents) == 0 {
		return nil, fileError(name, "no trace events")
	}
	return file.TraceEvents, nil
}

// traceMicros converts a trace's microseconds to nanoseconds, refusing
// what is negative, not finite or past 2^62 ns.
func traceMicros(v float64, name string, i int, what string) (uint64, error) {
	ns := v * 1000
	if math.IsNaN(ns) || ns < 0 || ns >= 1<<62 {
		return 0, fileError(name, "event %d: %s %v µs out of range", i+1, what, v)
	}
	return uint64(ns), nil
}

type traceThread struct{ pid, tid string }

// maxTraceNesting bounds how deep events nest on a thread: a sample holds
// its whole stack, so a deeper file would cost memory by the square of its
// depth. Real traces nest tens deep.
const maxTraceNesting = 1000

// traceSpans builds the span flame graph of events' duration events.
func traceSpans(events []traceEvent, name string) (*profile.Profile, error) {
	threadNames, processNames := map[traceThread]string{}, map[string]string{}
	byThread := map[traceThread][]Span{}
	var order []traceThread
	open := map[traceThread][]int{} // indices into byThread of open B events
	add := func(th traceThread, s Span) {
		if byThread[th] == nil {
			order = append(order, th)
		}
		byThread[th] = append(byThread[th], s)
	}
	for i, e := range events {
		th := traceThread{string(e.Pid), string(e.Tid)}
		switch e.Ph {
		case "M":
			var a struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(e.Args, &a) != nil || a.Name == "" {
				continue
			}
			if e.Name == "thread_name" {
				threadNames[th] = a.Name
			} else if e.Name == "process_name" {
				processNames[th.pid] = a.Name
			}
		case "X":
			start, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			dur, err := traceMicros(e.Dur, name, i, "dur")
			if err != nil {
				return nil, err
			}
			add(th, Span{Name: e.Name, Start: start, End: start + dur})
		case "B":
			start, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			add(th, Span{Name: e.Name, Start: start})
			open[th] = append(open[th], len(byThread[th])-1)
		case "E":
			stack := open[th]
			if len(stack) == 0 {
				return nil, fileError(name, "event %d: an E event (%q) with no open B event on its thread", i+1, e.Name)
			}
			end, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			s := &byThread[th][stack[len(stack)-1]]
			if end < s.Start {
				return nil, fileError(name, "event %d: %q ends %d ns before it begins", i+1, s.Name, s.Start-end)
			}
			s.End = end
			open[th] = stack[:len(stack)-1]
		}
	}
	for _, th := range order {
		if stack := open[th]; len(stack) > 0 {
			return nil, fileError(name, "the B event %q of thread %s of process %s never ends", byThread[th][stack[0]].Name, th.tid, th.pid)
		}
	}
	if len(order) == 0 {
		return nil, fileError(name, "no duration events (X, B/E): read its CPU profile with sample type samples or cpu")
	}
	all := make([]Span, 0, len(events))
	var id uint64
	for _, th := range order {
		label := cmp.Or(threadNames[th], processNames[th.pid], "thread")
		spans := byThread[th]
		// Enclosing events first: by start, the longer first.
		slices.SortStableFunc(spans, func(x, y Span) int {
			return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(y.End, x.End))
		})
		var enclosing []Span
		for _, s := range spans {
			id++
			binary.BigEndian.PutUint64(s.ID[:], id)
			s.Service = label
			for len(enclosing) > 0 && enclosing[len(enclosing)-1].End <= s.Start {
				enclosing = enclosing[:len(enclosing)-1]
			}
			if len(enclosing) > 0 {
				s.Parent = enclosing[len(enclosing)-1].ID
			}
			if len(enclosing) == maxTraceNesting {
				return nil, fileError(name, "events nest deeper than %d on thread %s of process %s", maxTraceNesting, th.tid, th.pid)
			}
			enclosing = append(enclosing, s)
			all = append(all, s)
		}
	}
	b := NewSpanBuilder()
	ext := b.Trace(all)
	if len(b.P.Samples) == 0 {
		return nil, fileError(name, "no duration event lasts any time")
	}
	b.P.Duration = time.Duration(ext.End - ext.Start) // #nosec G115 -- below 2^62 ns, checked by traceMicros
	return b.P, nil
}

// traceCPUProfiles reads the V8 CPU profiles of events: a Profile event
// (its id, in its process) starts one, its ProfileChunk events add nodes,
// samples and time deltas.
func traceCPUProfiles(events []traceEvent, name, sampleType string) (*profile.Profile, error) {
	type key struct{ pid, id string }
	profiles := map[key]*cpuProfile{}
	var order []key
	for i, e := range events {
		if e.Ph != "P" || e.Name != "Profile" && e.Name != "ProfileChunk" {
			continue
		}
		var a struct {
			Data traceProfileData `json:"data"`
		}
		if err := json.Unmarshal(e.Args, &a); err != nil {
			return nil, fileError(name, "event %d (%s): bad args: %v", i+1, e.Name, err)
		}
		k := key{string(e.Pid), string(e.ID)}
		cp := profiles[k]
		if cp == nil {
			cp = &cpuProfile{}
			profiles[k] = cp
			order = append(order, k)
		}
		d := a.Data
		if e.Name == "Profile" {
			cp.StartTime = int64(d.StartTime)
		}
		if d.EndTime > 0 {
			cp.EndTime = int64(d.EndTime)
		}
		if len(d.TimeDeltas) != len(d.CPUProfile.Samples) {
			return nil, fileError(name, "event %d: %d samples but %d time deltas", i+1, len(d.CPUProfile.Samples), len(d.TimeDeltas))
		}
		cp.Nodes = append(cp.Nodes, d.CPUProfile.Nodes...)
		cp.Samples = append(cp.Samples, d.CPUProfile.Samples...)
		cp.TimeDeltas = append(cp.TimeDeltas, d.TimeDeltas...)
	}
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	if sampleType == "cpu" {
		p.SampleType, p.Unit = "cpu", "microseconds"
	}
	for _, k := range order {
		if err := profiles[k].addSamples(p, name); err != nil {
			return nil, err
		}
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no CPU profile samples (Profile and ProfileChunk events) in the trace")
	}
	return p, nil
}
