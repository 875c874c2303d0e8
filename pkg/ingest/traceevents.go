package ingest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeTraceEvents: the Trace Event Format's object form (a
// "traceEvents" key) or its array form (an array of objects with "ph").
func looksLikeTraceEvents(head []byte) bool {
	head = inflatedHead(head)
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return hasKeys(head, "traceEvents")
	case bytes.HasPrefix(t, []byte("[")):
		return bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t\r\n"), []byte("{")) && hasKeys(head, "ph")
	}
	return false
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
// default) its duration events become a span flame graph as OpenTelemetry
// traces do (SpanBuilder): X (complete) events and B/E pairs on each
// thread, and nestable async b/e pairs on each async track (cat, scope and
// id); on a thread or track an event is a span, the child of the innermost
// event that encloses it, framed "label: name" by the thread's name (its
// thread_name metadata event, else its process's name) or the track's
// category. A begin never ended is closed at the trace's end, an end
// whose begin is not in the trace (a ring buffer's) is dropped; the other
// phases (instant, counter, flow, object, mark, clock sync, sample,
// legacy async) carry no duration and are skipped. With sample type
// samples or cpu its V8 CPU profiles (a Profile event and its
// ProfileChunk events, nodes and samples spread over them) are read as a
// .cpuprofile is. A negative duration is an error, and so are events
// nested deeper than maxTraceNesting. With o.Threads each stack starts
// with its thread's or track's frame (ThreadFrame).
func parseTraceEvents(r io.Reader, name string, o Options) (*profile.Profile, error) {
	events, err := readTraceEvents(r, name)
	if err != nil {
		return nil, err
	}
	switch o.SampleType {
	case "", "wall":
		return traceSpans(events, name, o.Threads)
	case "samples", "cpu":
		return traceCPUProfiles(events, name, o)
	}
	return nil, fileError(name, "no sample type %q: trace events have wall (their duration events), samples and cpu (their CPU profiles)", o.SampleType)
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

// traceTrack is where events nest: a thread (pid, tid), or an async
// track (async its category, scope and id).
type traceTrack struct{ pid, tid, async string }

// describe names a track in errors.
func (t traceTrack) describe(label string) string {
	if t.async != "" {
		return fmt.Sprintf("the async track %q of category %s", t.async[strings.LastIndexByte(t.async, 0)+1:], label)
	}
	return fmt.Sprintf("thread %s of process %s", t.tid, t.pid)
}

// asyncTrack is the track of a nestable async event: events of one
// category, scope and id are one tree; an id2 "local" id is its
// process's, a plain or "global" id the trace's.
func asyncTrack(e *traceWhere) (traceTrack, bool) {
	t := traceTrack{async: e.Cat + "\x00" + e.Scope + "\x00"}
	switch {
	case len(e.ID2.Local) > 0:
		t.pid, t.async = e.Pid, t.async+"local "+e.ID2.Local
	case len(e.ID2.Global) > 0:
		t.async += e.ID2.Global
	case len(e.ID) > 0:
		t.async += e.ID
	default:
		return t, false
	}
	return t, true
}

// maxTraceNesting bounds how deep events nest on a thread: a sample holds
// its whole stack, so a deeper file would cost memory by the square of its
// depth. Real traces nest tens deep.
const maxTraceNesting = 1000

// traceEnd is the latest time of events, where a begin never ended ends.
func traceEnd(events []traceEvent) float64 {
	var end float64
	for _, e := range events {
		end = max(end, e.Ts+max(e.Dur, 0))
	}
	return end
}

// spanTrack holds the spans of a track as they are met.
type spanTrack struct {
	track traceTrack
	label string
	size  int    // its X, B and b events, a span each
	spans []Span // sized for them
	open  []int  // indices into spans of begins not yet ended
}

// spanTracks finds the track of an event (nil: an async event with no
// id) by its traceWhere, looking each up once.
type spanTracks struct {
	*traceEvents
	names   traceNames
	tracks  map[traceTrack]*spanTrack
	byWhere []*spanTrack // by the index of a where
	known   []bool
}

// of is e's track.
func (ts *spanTracks) of(e traceEvent) *spanTrack {
	if ts.known[e.where] {
		return ts.byWhere[e.where]
	}
	w := ts.where(e)
	t, ok, label := traceTrack{pid: w.Pid, tid: w.Tid}, true, ""
	if w.Ph == "b" || w.Ph == "e" {
		t, ok = asyncTrack(w)
		label = cmp.Or(w.Cat, "async")
	}
	var tr *spanTrack
	if ok {
		if tr = ts.tracks[t]; tr == nil {
			tr = &spanTrack{track: t, label: cmp.Or(label, ts.names.thread(t))}
			ts.tracks[t] = tr
		}
	}
	ts.byWhere[e.where], ts.known[e.where] = tr, true
	return tr
}

// traceSpans builds the span flame graph of events' duration events.
func traceSpans(trace *traceEvents, name string, threads bool) (*profile.Profile, error) {
	events := trace.list
	ts := spanTracks{traceEvents: trace, names: traceNamesOf(trace), tracks: map[traceTrack]*spanTrack{},
		byWhere: make([]*spanTrack, len(trace.wheres)), known: make([]bool, len(trace.wheres))}
	// Ends meet their begins in time order, whatever order the writer's
	// buffers left them in.
	sorted := make([]int, len(events))
	for i := range sorted {
		sorted[i] = i
	}
	if !slices.IsSortedFunc(events, func(a, b traceEvent) int { return cmp.Compare(a.Ts, b.Ts) }) {
		slices.SortStableFunc(sorted, func(a, b int) int { return cmp.Compare(events[a].Ts, events[b].Ts) })
	}
	// The tracks in the order of their first spans, which are laid out
	// so in one array, each track's sized once: grown by append, the
	// arrays they outgrow were most of a big trace's garbage.
	var order []*spanTrack
	n := 0
	for _, i := range sorted {
		if e, ph := events[i], trace.where(events[i]).Ph; ph == "X" || ph == "B" || ph == "b" {
			if tr := ts.of(e); tr != nil {
				if tr.size == 0 {
					order = append(order, tr)
				}
				tr.size++
				n++
			}
		}
	}
	all := make([]Span, n)
	n = 0
	for _, tr := range order {
		tr.spans = all[n : n : n+tr.size]
		n += tr.size
	}
	var open []*spanTrack // the tracks with begins not yet ended
	for _, i := range sorted {
		e := events[i]
		w := trace.where(e)
		switch w.Ph {
		case "X", "B", "E", "b", "e":
		default:
			continue // no duration
		}
		tr := ts.of(e)
		if tr == nil {
			return nil, fileError(name, "event %d: an async %s event (%q) with no id", i+1, w.Ph, trace.name(e))
		}
		switch w.Ph {
		case "X":
			start, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			dur, err := traceMicros(e.Dur, name, i, "dur")
			if err != nil {
				return nil, err
			}
			tr.spans = append(tr.spans, Span{Name: trace.name(e), Start: start, End: start + dur})
		case "B", "b":
			start, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			tr.spans = append(tr.spans, Span{Name: trace.name(e), Start: start})
			if tr.open == nil {
				open = append(open, tr)
			}
			tr.open = append(tr.open, len(tr.spans)-1)
		case "E", "e":
			stack := tr.open
			k := len(stack) - 1
			// An async end closes the innermost begin of its name.
			for w.Ph == "e" && k >= 0 && trace.name(e) != "" && tr.spans[stack[k]].Name != trace.name(e) {
				k--
			}
			if k < 0 {
				continue // its begin is before the trace (a ring buffer's)
			}
			end, err := traceMicros(e.Ts, name, i, "ts")
			if err != nil {
				return nil, err
			}
			tr.spans[stack[k]].End = end // not before its start: events come in time order
			tr.open = slices.Delete(stack, k, k+1)
		}
	}
	if len(order) == 0 {
		return nil, fileError(name, "no duration events (X, B/E, b/e): read its CPU profile with sample type samples or cpu")
	}
	// A begin never ended ends with the trace (a trace cut short).
	for _, tr := range open {
		if len(tr.open) == 0 {
			continue
		}
		end := traceEnd(events) * 1000
		if !(end < 1<<62) { // the events' own times are checked; a metadata event's are not
			return nil, fileError(name, "the trace ends at %v µs, out of range", end/1000)
		}
		for _, k := range tr.open {
			tr.spans[k].End = uint64(end)
		}
	}
	var id uint64
	type enclosingSpan struct {
		id  [8]byte
		end uint64
	}
	var enclosing []enclosingSpan
	for _, tr := range order {
		// Enclosing events first: by start, the longer first.
		byStart := func(x, y *Span) int { return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(y.End, x.End)) }
		if !spansSorted(tr.spans, byStart) { // most often they are: a sort moves them all
			slices.SortStableFunc(tr.spans, func(x, y Span) int { return byStart(&x, &y) })
		}
		enclosing = enclosing[:0]
		for k := range tr.spans {
			s := &tr.spans[k]
			id++
			binary.BigEndian.PutUint64(s.ID[:], id)
			s.Service = tr.label
			for len(enclosing) > 0 && enclosing[len(enclosing)-1].end <= s.Start {
				enclosing = enclosing[:len(enclosing)-1]
			}
			if len(enclosing) > 0 {
				s.Parent = enclosing[len(enclosing)-1].id
			}
			if len(enclosing) == maxTraceNesting {
				return nil, fileError(name, "events nest deeper than %d on %s", maxTraceNesting, tr.track.describe(tr.label))
			}
			enclosing = append(enclosing, enclosingSpan{s.ID, s.End})
		}
	}
	b := NewSpanBuilder()
	ext := b.Trace(all)
	if len(b.P.Samples) == 0 {
		return nil, fileError(name, "no duration event lasts any time")
	}
	if threads { // a stack's root span is framed by its track's label
		for i := range b.P.Samples {
			s := &b.P.Samples[i]
			s.Stack = append([]uint32{threadFrame(b.P, b.P.Frames[s.Stack[0]].Module)}, s.Stack...)
		}
	}
	b.P.Duration = time.Duration(ext.End - ext.Start) // #nosec G115 -- below 2^62 ns, checked by traceMicros
	return b.P, nil
}

// traceNames holds the names metadata events give threads and processes.
type traceNames struct {
	threads   map[traceTrack]string
	processes map[string]string
}

func traceNamesOf(trace *traceEvents) traceNames {
	n := traceNames{map[traceTrack]string{}, map[string]string{}}
	for _, args := range trace.args {
		e := trace.list[args.i]
		w := trace.where(e)
		if w.Ph != "M" {
			continue
		}
		var a struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(args.text, &a) != nil || a.Name == "" {
			continue
		}
		if trace.name(e) == "thread_name" {
			n.threads[traceTrack{pid: w.Pid, tid: w.Tid}] = a.Name
		} else if trace.name(e) == "process_name" {
			n.processes[w.Pid] = a.Name
		}
	}
	return n
}

// thread is a thread's label: its name, else its process's, else "thread".
func (n traceNames) thread(t traceTrack) string {
	return cmp.Or(n.threads[traceTrack{pid: t.pid, tid: t.tid}], n.processes[t.pid], "thread")
}

// traceCPUProfiles reads the V8 CPU profiles of events: a Profile event
// (its id, in its process) starts one, its ProfileChunk events add nodes,
// samples and time deltas.
func traceCPUProfiles(trace *traceEvents, name string, o Options) (*profile.Profile, error) {
	names := traceNamesOf(trace)
	type key struct{ pid, id string }
	profiles := map[key]*cpuProfile{}
	var order []key
	for _, args := range trace.args {
		i, w, event := args.i, trace.where(trace.list[args.i]), trace.name(trace.list[args.i])
		if w.Ph != "P" || event != "Profile" && event != "ProfileChunk" {
			continue
		}
		var a struct {
			Data traceProfileData `json:"data"`
		}
		if err := json.Unmarshal(args.text, &a); err != nil {
			return nil, fileError(name, "event %d (%s): bad args: %v", i+1, event, err)
		}
		k := key{w.Pid, w.ID}
		cp := profiles[k]
		if cp == nil {
			cp = &cpuProfile{}
			profiles[k] = cp
			order = append(order, k)
		}
		d := a.Data
		if event == "Profile" {
			cp.StartTime = int64(d.StartTime)
			if o.Threads { // the thread V8 sampled, which started its profile
				cp.thread = names.thread(traceTrack{pid: w.Pid, tid: w.Tid})
			}
		}
		if d.EndTime > 0 {
			cp.EndTime = int64(d.EndTime)
		}
		if len(d.TimeDeltas) != len(d.CPUProfile.Samples) {
			return nil, fileError(name, "event %d: %d samples but %d time deltas", i+1, len(d.CPUProfile.Samples), len(d.TimeDeltas))
		}
		cp.Nodes = append(cp.Nodes, d.CPUProfile.Nodes...)
		for k, id := range d.CPUProfile.Samples {
			cp.Samples.append(id)
			cp.TimeDeltas.append(d.TimeDeltas[k])
		}
	}
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	if o.SampleType == "cpu" {
		p.SampleType, p.Unit = "cpu", "microseconds"
	}
	maps := newScriptMaps(o)
	for _, k := range order {
		if err := profiles[k].addSamples(p, name, maps); err != nil {
			return nil, err
		}
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no CPU profile samples (Profile and ProfileChunk events) in the trace")
	}
	return p, nil
}
