package ingest

import (
	"io"
	"strings"
)

// readProcessedGecko decodes a processed profile as a stream: its columns
// number by number (jsonStream.numbers), what it does not read skipped
// token by token (markers, counters), so that memory holds the columns
// read, never the document. Keys match as encoding/json matches a struct's
// fields (case folded, the last one given wins).
func readProcessedGecko(r io.Reader, name string) (*processedProfile, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	g := &processedProfile{}
	err = s.object("the processed profile", func(key string) error {
		switch {
		case strings.EqualFold(key, "meta"):
			return s.object("meta", func(key string) error {
				if strings.EqualFold(key, "preprocessedProfileVersion") {
					return s.decode(&g.Meta.Version)
				}
				return s.skip()
			})
		case strings.EqualFold(key, "shared"):
			g.Shared = processedTables{}
			return s.object("shared", func(key string) error { return readProcessedTable(s, &g.Shared, key) })
		case strings.EqualFold(key, "threads"):
			g.Threads = g.Threads[:0]
			return s.array("threads", func() error {
				g.Threads = append(g.Threads, processedThread{})
				return readProcessedThread(s, &g.Threads[len(g.Threads)-1])
			})
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

func readProcessedThread(s *jsonStream, th *processedThread) error {
	return s.object("a thread", func(key string) error {
		switch {
		case strings.EqualFold(key, "name"):
			return s.decode(&th.Name)
		case strings.EqualFold(key, "samples"):
			sm := &processedSamples{}
			th.Samples = sm
			null, err := s.objectOrNull("samples", func(key string) error {
				switch {
				case strings.EqualFold(key, "stack"):
					return readColumn(s, "samples.stack", &sm.Stack)
				case strings.EqualFold(key, "weight"):
					return readWeights(s, &sm.Weight)
				case strings.EqualFold(key, "weightType"):
					return s.decode(&sm.WeightType)
				case strings.EqualFold(key, "length"):
					return s.decode(&sm.Length)
				}
				return s.skip()
			})
			if null {
				th.Samples = nil
			}
			return err
		}
		return readProcessedTable(s, &th.processedTables, key)
	})
}

// readProcessedTable reads the value of key if it is one of the tables
// (a thread's or shared) into t, and skips it otherwise.
func readProcessedTable(s *jsonStream, t *processedTables, key string) error {
	// table reads a table's columns, given by name, and its length; null
	// is no table.
	table := func(name string, length *int64, cols map[string]*column) (null bool, err error) {
		return s.objectOrNull(name, func(key string) error {
			if strings.EqualFold(key, "length") {
				return s.decode(length)
			}
			for col, c := range cols {
				if strings.EqualFold(key, col) {
					return readColumn(s, name+"."+col, c)
				}
			}
			return s.skip()
		})
	}
	switch {
	case strings.EqualFold(key, "stringArray"):
		return decodeList(s, "stringArray", "strings", &t.StringArray)
	case strings.EqualFold(key, "stackTable"):
		st := &processedStackTable{}
		null, err := table("stackTable", &st.Length, map[string]*column{"frame": &st.Frame, "prefix": &st.Prefix, "prefixOffset": &st.PrefixOffset})
		t.StackTable = orNil(st, null)
		return err
	case strings.EqualFold(key, "frameTable"):
		ft := &processedFrameTable{}
		null, err := table("frameTable", &ft.Length, map[string]*column{"func": &ft.Func})
		t.FrameTable = orNil(ft, null)
		return err
	case strings.EqualFold(key, "funcTable"):
		fn := &processedFuncTable{}
		null, err := s.objectOrNull("funcTable", func(key string) error {
			if strings.EqualFold(key, "isJS") {
				return s.decode(&fn.IsJS) // as many as the functions, a few bytes each
			}
			cols := map[string]*column{"name": &fn.Name, "resource": &fn.Resource, "fileName": &fn.FileName, "source": &fn.Source, "lineNumber": &fn.LineNumber}
			for col, c := range cols {
				if strings.EqualFold(key, col) {
					return readColumn(s, "funcTable."+col, c)
				}
			}
			if strings.EqualFold(key, "length") {
				return s.decode(&fn.Length)
			}
			return s.skip()
		})
		t.FuncTable = orNil(fn, null)
		return err
	case strings.EqualFold(key, "resourceTable"):
		rt := &processedResourceTable{}
		null, err := table("resourceTable", &rt.Length, map[string]*column{"name": &rt.Name})
		t.ResourceTable = orNil(rt, null)
		return err
	case strings.EqualFold(key, "sources"):
		src := &processedSourceTable{}
		null, err := table("sources", &src.Length, map[string]*column{"filename": &src.Filename})
		t.Sources = orNil(src, null)
		return err
	}
	return s.skip()
}

// orNil is t, or nil when the table was null.
func orNil[T any](t *T, null bool) *T {
	if null {
		return nil
	}
	return t
}

// readColumn reads a column of indices (null: no column), an element's
// null read as -1 (the processed format's indices are never negative; its
// own "no value" is null or -1).
func readColumn(s *jsonStream, what string, c *column) error {
	*c = nil
	return s.numbers(what, func(tok []byte, at int64) error {
		if string(tok) == "null" {
			*c = append(*c, -1)
			return nil
		}
		v, ok := parseInt(tok)
		if !ok || v < -1 {
			return offsetError(s.name, at, "%s: %s is no index", what, tok)
		}
		*c = append(*c, v)
		return nil
	})
}

// readWeights reads a samples table's weight column: numbers, or null for
// none.
func readWeights(s *jsonStream, w *weights) error {
	*w = nil
	return s.numbers("samples.weight", func(tok []byte, at int64) error {
		if string(tok) == "null" {
			return offsetError(s.name, at, "samples.weight: null is no weight")
		}
		f, err := s.float(tok, at, "samples.weight")
		*w = append(*w, f)
		return err
	})
}
