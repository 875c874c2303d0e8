package ingest

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// traceEvent is one event of the Trace Event Format as a trace keeps
// it: ts and dur are microseconds (fractions allowed) whatever the file's
// displayTimeUnit, which only says how a viewer shows them. Where it
// happens is shared by the events of a thread (traceWhere), its name by
// the events of that name: an event costs tens of bytes, not its text.
type traceEvent struct {
	Name    string
	Ts, Dur float64
	*traceWhere
	// Args is kept for the events that carry what Flamediff reads:
	// metadata (M, names) and samples (P, CPU profiles); a pointer, so
	// that the others' cost no more than one.
	Args *json.RawMessage
}

// args is the event's args as written, nil when it has none.
func (e traceEvent) args() json.RawMessage {
	if e.Args == nil {
		return nil
	}
	return *e.Args
}

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
func readTraceEvents(r io.Reader, name string) ([]traceEvent, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	t := traceReader{wheres: map[traceWhere]*traceWhere{}, strs: map[string]string{}}
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
	if len(t.events) == 0 {
		return nil, fileError(name, "no trace events")
	}
	return t.events, nil
}

// traceReader gathers the events of a trace being read, sharing what
// they repeat.
type traceReader struct {
	decoded traceEventText // the event being read
	events  []traceEvent
	wheres  map[traceWhere]*traceWhere
	last    *traceWhere // the event before's, most often the next's too
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
			t.events = t.events[:0] // the last one given wins
			err = s.scan("traceEvents", func(sc *numberScanner) error {
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
func (t *traceReader) event(s *jsonStream, sc *numberScanner) error {
	e := &t.decoded // read into anew, not allocated anew
	if err := sc.whole(s, func(v *jsonWindow) error { return decodeTraceEvent(v, e) }); err != nil {
		return err
	}
	// e's text lies in the window, which only the next read moves.
	w := t.last
	if w == nil || !e.ph.is(w.Ph) || !e.cat.is(w.Cat) || !e.scope.is(w.Scope) || string(e.pid) != w.Pid || string(e.tid) != w.Tid ||
		string(e.id) != w.ID || string(e.local) != w.ID2.Local || string(e.global) != w.ID2.Global {
		w = t.where(e)
	}
	kept := traceEvent{Name: t.text(e.name), Ts: e.ts, Dur: e.dur, traceWhere: w}
	if w.Ph == "M" || w.Ph == "P" {
		args := json.RawMessage(bytes.Clone(e.args))
		kept.Args = &args
	}
	t.events = append(t.events, kept)
	return nil
}

// where is e's phase and place, one for each met.
func (t *traceReader) where(e *traceEventText) *traceWhere {
	w := traceWhere{Ph: t.text(e.ph), Cat: t.text(e.cat), Scope: t.text(e.scope),
		Pid: t.intern(e.pid), Tid: t.intern(e.tid), ID: t.intern(e.id)}
	w.ID2.Local, w.ID2.Global = t.intern(e.local), t.intern(e.global)
	shared := t.wheres[w]
	if shared == nil {
		shared = new(traceWhere) // w stays on the stack
		*shared = w
		t.wheres[w] = shared
	}
	t.last = shared
	return shared
}

// text is x decoded, interned.
func (t *traceReader) text(x jsonText) string {
	if x.plain {
		return t.intern(x.text[1 : len(x.text)-1])
	}
	s := x.String()
	return t.intern([]byte(s))
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
