package ingest

import (
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
	// metadata (M, names) and samples (P, CPU profiles).
	Args json.RawMessage
}

// traceWhere is an event's phase and where it happens; pid, tid and ids
// are their JSON text (a number, or a string in some writers).
type traceWhere struct {
	Ph, Cat, Scope string
	Pid, Tid, ID   string
	ID2            struct{ Local, Global string }
}

// traceEventJSON is an event as the file writes it.
type traceEventJSON struct {
	Ph    string          `json:"ph"`
	Name  string          `json:"name"`
	Cat   string          `json:"cat"`
	Scope string          `json:"scope"`
	Pid   json.RawMessage `json:"pid"`
	Tid   json.RawMessage `json:"tid"`
	ID    json.RawMessage `json:"id"`
	ID2   struct {
		Local, Global json.RawMessage
	} `json:"id2"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args json.RawMessage `json:"args"`
}

// readTraceEvents decodes a trace's events as a stream, one event at a
// time, in the object form (other keys skipped, matched as encoding/json
// matches a struct's fields) or the array form, whose closing bracket may
// be missing after a trailing comma (a trace cut short by the writer's
// exit).
func readTraceEvents(r io.Reader, name string) ([]traceEvent, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	t := traceReader{wheres: map[traceWhere]*traceWhere{}, names: map[string]string{}}
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
	decoded traceEventJSON // the event being decoded
	events  []traceEvent
	wheres  map[traceWhere]*traceWhere
	names   map[string]string
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
			err = s.array("traceEvents", func() error {
				if err := t.event(s); err != io.EOF {
					return err
				}
				return s.fail(io.ErrUnexpectedEOF, 0)
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

// array reads the array form's events, its '[' read.
func (t *traceReader) array(s *jsonStream) error {
	for s.dec.More() {
		if err := t.event(s); err != nil {
			if err == io.EOF { // a trailing comma, then the file's end
				return nil
			}
			return err
		}
	}
	start := s.offset()
	if _, err := s.dec.Token(); err == io.EOF { // no closing bracket
		return nil
	} else if err != nil {
		return s.fail(err, start)
	}
	return s.end()
}

// event decodes the next event and keeps what the trace needs of it. A
// file that ends where an event would start is io.EOF.
func (t *traceReader) event(s *jsonStream) error {
	if err := s.within(len(t.events), "trace events"); err != nil {
		return err
	}
	e := &t.decoded // decoded into anew, not allocated anew
	*e = traceEventJSON{}
	start := s.offset()
	if err := s.dec.Decode(e); err != nil {
		if err == io.EOF {
			return err
		}
		return s.fail(err, start)
	}
	w := traceWhere{Ph: e.Ph, Cat: e.Cat, Scope: e.Scope, Pid: string(e.Pid), Tid: string(e.Tid), ID: string(e.ID)}
	w.ID2.Local, w.ID2.Global = string(e.ID2.Local), string(e.ID2.Global)
	shared := t.wheres[w]
	if shared == nil {
		shared = new(traceWhere) // w stays on the stack
		*shared = w
		t.wheres[w] = shared
	}
	n, ok := t.names[e.Name]
	if !ok {
		n = e.Name
		t.names[n] = n
	}
	kept := traceEvent{Name: n, Ts: e.Ts, Dur: e.Dur, traceWhere: shared}
	if e.Ph == "M" || e.Ph == "P" {
		kept.Args = e.Args
	}
	t.events = append(t.events, kept)
	return nil
}
