package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// geckoTable is a table of the raw Gecko format (rows of values, the
// schema naming each column's index) as read: the integer cells of the
// columns its reader wants, row by row.
type geckoTable struct {
	want   []string
	schema map[string]int
	cells  []int64 // len(want) a row; geckoNone where a row has no integer
	raw    [][]json.RawMessage
}

// geckoNone is a cell without an integer (null, a string, no such column;
// -2^63, which indexes nothing, reads as none too).
const geckoNone = -1 << 63

// rows is the number of rows read.
func (t *geckoTable) rows() int { return len(t.cells) / len(t.want) }

// cell is row i's value of want[k], ok false when it has none.
func (t *geckoTable) cell(i, k int) (int64, bool) {
	v := t.cells[i*len(t.want)+k]
	return v, v != geckoNone
}

// add keeps row's wanted cells, or the whole row while the schema that
// says which they are is still to come (Firefox writes it first).
func (t *geckoTable) add(row []json.RawMessage) {
	if t.schema == nil {
		kept := make([]json.RawMessage, len(row))
		for i, c := range row {
			kept[i] = bytes.Clone(c)
		}
		t.raw = append(t.raw, kept)
		return
	}
	for _, name := range t.want {
		v := int64(geckoNone)
		if i, ok := t.schema[name]; ok && i >= 0 && i < len(row) {
			if n, ok := parseInt(row[i]); ok {
				v = n
			}
		}
		t.cells = append(t.cells, v)
	}
}

// readGeckoTable reads the table that comes next, keeping the columns
// want names.
func readGeckoTable(s *jsonStream, what string, want ...string) (geckoTable, error) {
	t := geckoTable{want: want}
	var row []json.RawMessage // reused: encoding/json decodes into its cells
	err := s.object(what, func(key string) error {
		switch {
		case strings.EqualFold(key, "schema"):
			return s.decode(&t.schema)
		case strings.EqualFold(key, "data"):
			t.cells, t.raw = nil, nil
			return s.array(what, func() error {
				if err := s.within(t.rows()+len(t.raw), what+" rows"); err != nil {
					return err
				}
				if err := s.decode(&row); err != nil {
					return err
				}
				t.add(row)
				return nil
			})
		}
		return s.skip()
	})
	if t.schema == nil {
		t.schema = map[string]int{}
	}
	for _, row := range t.raw {
		t.add(row)
	}
	t.raw = nil
	return t, err
}

// geckoReader adds the threads of a Gecko profile and of its child
// processes to p as they are read.
type geckoReader struct {
	p       *profile.Profile
	threads bool // Options.Threads
}

// process reads the Gecko profile that comes next, a process at depth in
// the tree of processes (where names it in errors).
func (g *geckoReader) process(s *jsonStream, where string, depth int) error {
	if null, err := s.open('{', "a Gecko profile"); null || err != nil {
		return err
	}
	return g.processFields(s, where, depth)
}

// processFields reads a process whose '{' is read: each thread's samples
// are added as the thread is read, then its child processes'. Child
// processes given before the threads are held whole until then.
func (g *geckoReader) processFields(s *jsonStream, where string, depth int) error {
	if depth > geckoMaxProcessDepth {
		return fileError(s.name, "%sprocesses nest deeper than %d", where, geckoMaxProcessDepth)
	}
	var later []json.RawMessage
	threads, seen := 0, false
	err := s.fields(func(key string) error {
		switch {
		case strings.EqualFold(key, "threads"):
			seen = true
			return s.array("threads", func() error {
				th, err := readGeckoThread(s)
				if err == nil {
					err = addGeckoThread(g.p, &th, s.name, fmt.Sprintf("%sthread %d (%s)", where, threads, th.name), g.threads)
				}
				threads++
				return err
			})
		case strings.EqualFold(key, "processes"):
			n := 0
			return s.array("processes", func() error {
				defer func() { n++ }()
				if !seen {
					var raw json.RawMessage
					err := s.decode(&raw)
					later = append(later, raw)
					return err
				}
				return g.child(s, fmt.Sprintf("%sprocess %d: ", where, n), depth+1)
			})
		}
		return s.skip()
	})
	for n, raw := range later {
		if err != nil {
			break
		}
		err = g.whole(raw, s.name, fmt.Sprintf("%sprocess %d: ", where, n), depth+1)
	}
	return err
}

// child reads the child process that comes next: a Gecko profile, or as
// old Firefox wrote them a string of one.
func (g *geckoReader) child(s *jsonStream, where string, depth int) error {
	start := s.offset()
	t, err := s.token()
	switch t := t.(type) {
	case nil:
		return err // null is no process
	case string:
		return g.whole([]byte(t), s.name, where, depth)
	case json.Delim:
		if t == '{' {
			return g.processFields(s, where, depth)
		}
	}
	return offsetError(s.name, start, "bad JSON: %sis %s, not an object", where, describeToken(t))
}

// whole reads a process held whole: a Gecko profile, a string of one or
// null (no process, as child reads it).
func (g *geckoReader) whole(data []byte, name, where string, depth int) error {
	if string(data) == "null" {
		return nil
	}
	var str string
	if json.Unmarshal(data, &str) == nil {
		data = []byte(str)
	}
	s, err := streamJSON(bytes.NewReader(data), name)
	if err != nil {
		return err
	}
	if err := g.process(s, where, depth); err != nil {
		return err
	}
	return s.end()
}

// geckoThread is a thread of the raw Gecko format as read.
type geckoThread struct {
	name                            string
	samples, stackTable, frameTable geckoTable
	strings                         []string
}

// The columns of the tables read, in the order their readers want them.
const (
	geckoStack = 0 // samples

	geckoPrefix      = 0 // stackTable
	geckoFrameColumn = 1

	geckoLocation = 0 // frameTable
	geckoLine     = 1
)

// readGeckoThread reads the thread that comes next.
func readGeckoThread(s *jsonStream) (geckoThread, error) {
	th := geckoThread{
		samples:    geckoTable{want: []string{"stack"}},
		stackTable: geckoTable{want: []string{"prefix", "frame"}},
		frameTable: geckoTable{want: []string{"location", "line"}},
	}
	err := s.object("a thread", func(key string) (err error) {
		switch {
		case strings.EqualFold(key, "name"):
			return s.decode(&th.name)
		case strings.EqualFold(key, "samples"):
			th.samples, err = readGeckoTable(s, "samples", th.samples.want...)
		case strings.EqualFold(key, "stackTable"):
			th.stackTable, err = readGeckoTable(s, "stackTable", th.stackTable.want...)
		case strings.EqualFold(key, "frameTable"):
			th.frameTable, err = readGeckoTable(s, "frameTable", th.frameTable.want...)
		case strings.EqualFold(key, "stringTable"):
			err = decodeList(s, "stringTable", "strings", &th.strings)
		default:
			err = s.skip()
		}
		return err
	})
	return th, err
}
