package ingest

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// traceEvent is one event of the Trace Event Format as a trace keeps
// it: ts and dur are microseconds (fractions allowed) whatever the file's
// displayTimeUnit, which only says how a viewer shows them. Its name and
// where it happens (traceWhere) are indices into its trace's tables, a
// name shared by the events of that name, a place by the events of a
// thread: an event costs 24 bytes, not its text, and holds no pointer for
// the garbage collector to follow.
type traceEvent struct {
	Ts, Dur     float64
	name, where uint32
}

// traceEvents are a trace's events and the tables they index.
type traceEvents struct {
	list   []traceEvent
	names  []string
	wheres []traceWhere
	// args are kept for the events that carry what Flamediff reads:
	// metadata (M, names) and samples (P, CPU profiles), in event order.
	args []traceArgs
}

// traceArgs are the args of event i as written.
type traceArgs struct {
	i    int
	text json.RawMessage
}

// name is e's name.
func (t *traceEvents) name(e traceEvent) string { return t.names[e.name] }

// where is e's phase and place.
func (t *traceEvents) where(e traceEvent) *traceWhere { return &t.wheres[e.where] }

// traceWhere is an event's phase and where it happens; pid, tid and ids
// are their JSON text (a number, or a string in some writers).
type traceWhere struct {
	Ph, Cat, Scope string
	Pid, Tid, ID   string
	ID2            struct{ Local, Global string }
}

// readTraceEvents reads a trace's events as a stream, one event at a
// time, in the object form (other keys skipped, matched as encoding/json
// matches a struct's fields) or the array form, whose closing bracket may
// be missing after a trailing comma (a trace cut short by the writer's
// exit). Each event is read in place (decodeTraceEvent), the token stream
// kept for the object form's other keys.
func readTraceEvents(r io.Reader, name string) (*traceEvents, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	t := traceReader{whereOf: map[traceWhere]uint32{}, nameOf: map[string]uint32{}, strs: map[string]string{}, last: -1}
	start := s.offset()
	first, err := s.token()
	if err != nil {
		return nil, err
	}
	switch first {
	case json.Delim('{'):
		err = t.object(s)
	case json.Delim('['):
		err = t.array(s)
	default:
		err = offsetError(name, start, "bad JSON: the trace is %s, not an object or an array", describeToken(first))
	}
	if err != nil {
		return nil, err
	}
	if len(t.list) == 0 {
		return nil, fileError(name, "no trace events")
	}
	return &t.traceEvents, nil
}

// traceReader gathers the events of a trace being read, sharing what
// they repeat.
type traceReader struct {
	traceEvents
	decoded traceEventText        // the event being read
	whereOf map[traceWhere]uint32 // indices into wheres
	last    int                   // the event before's where, most often the next's too
	nameOf  map[string]uint32     // indices into names
	strs    map[string]string
}

// object reads the object form's keys, its '{' read.
func (t *traceReader) object(s *jsonStream) error {
	for s.dec.More() {
		key, err := s.token()
		if err != nil {
			return err
		}
		if strings.EqualFold(key.(string), "traceEvents") { // Token allows only a string key here
			t.list, t.args = t.list[:0], t.args[:0] // the last one given wins
			err = s.scan("traceEvents", func(sc *jsonScanner) error {
				return sc.list(s, "trace events", func(byte) error { return t.event(s, sc) })
			})
		} else {
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
	if _, err := s.token(); err != nil { // '}'
		return err
	}
	return s.end()
}

// array reads the array form's events, its '[' read, up to its ']' or the
// input's end.
func (t *traceReader) array(s *jsonStream) error {
	sc := s.scanner()
	for n := 0; ; n++ {
		c, err := sc.nonSpace()
		if err == io.EOF { // no closing bracket, maybe after a trailing comma
			return nil
		} else if err != nil {
			return sc.fail(s, err)
		}
		if n == 0 && c == ']' {
			sc.next()
			break
		}
		if err := s.withinAt(n, "trace events", sc.at); err != nil {
			return err
		}
		if err := t.event(s, sc); err != nil {
			return err
		}
		if c, err = sc.nonSpace(); err == io.EOF {
			return nil
		} else if err != nil {
			return sc.fail(s, err)
		}
		sc.next()
		if c == ']' {
			break
		}
		if c != ',' {
			return offsetError(s.name, sc.at-1, "bad JSON: invalid character %s after array element", describeByte(c))
		}
	}
	if _, err := sc.nonSpace(); err != io.EOF {
		if err != nil {
			return sc.fail(s, err)
		}
		return offsetError(s.name, sc.at, "bad JSON: data after the top-level value")
	}
	return nil
}

// event reads the next event and keeps what the trace needs of it.
func (t *traceReader) event(s *jsonStream, sc *jsonScanner) error {
	e := &t.decoded // read into anew, not allocated anew
	if err := sc.whole(s, func(v *jsonWindow) error { return decodeTraceEvent(v, e) }); err != nil {
		return err
	}
	// e's text lies in the window, which only the next read moves.
	if t.last < 0 || !t.same(e, &t.wheres[t.last]) {
		t.where(e)
	}
	w := &t.wheres[t.last]
	n, ok := t.nameOf[string(t.text(e.name))]
	if !ok {
		n = uint32(len(t.names)) // #nosec G115 -- fewer names than events, at most maxItems
		name := string(t.text(e.name))
		t.names = append(t.names, name)
		t.nameOf[name] = n
	}
	if w.Ph == "M" || w.Ph == "P" {
		t.args = append(t.args, traceArgs{len(t.list), bytes.Clone(e.args)})
	}
	t.list = append(t.list, traceEvent{Ts: e.ts, Dur: e.dur, name: n, where: uint32(t.last)}) // #nosec G115 -- fewer wheres than events, at most maxItems
	return nil
}

// same reports whether e happens where w says.
func (t *traceReader) same(e *traceEventText, w *traceWhere) bool {
	return e.ph.is(w.Ph) && e.cat.is(w.Cat) && e.scope.is(w.Scope) && string(e.pid) == w.Pid && string(e.tid) == w.Tid &&
		string(e.id) == w.ID && string(e.local) == w.ID2.Local && string(e.global) == w.ID2.Global
}

// where makes e's phase and place the last, one for each met.
func (t *traceReader) where(e *traceEventText) {
	w := traceWhere{Ph: t.intern(t.text(e.ph)), Cat: t.intern(t.text(e.cat)), Scope: t.intern(t.text(e.scope)),
		Pid: t.intern(e.pid), Tid: t.intern(e.tid), ID: t.intern(e.id)}
	w.ID2.Local, w.ID2.Global = t.intern(e.local), t.intern(e.global)
	k, ok := t.whereOf[w]
	if !ok {
		k = uint32(len(t.wheres)) // #nosec G115 -- fewer wheres than events, at most maxItems
		t.wheres = append(t.wheres, w)
		t.whereOf[w] = k
	}
	t.last = int(k)
}

// text is x decoded: x's own bytes when it is plain.
func (t *traceReader) text(x jsonText) []byte {
	if x.plain {
		return x.text[1 : len(x.text)-1]
	}
	return []byte(x.String())
}

// intern is b as a string, one string for each text met.
func (t *traceReader) intern(b []byte) string {
	if s, ok := t.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	t.strs[s] = s
	return s
}
