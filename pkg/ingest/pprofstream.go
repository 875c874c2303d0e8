package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	pprof "github.com/google/pprof/profile"
)

// pprofStream is what a pprof protobuf's stream (pprofwire.go) has given
// so far.
type pprofStream struct {
	sampleTypes [][2]strIndex
	samples     payloads // each sample's bytes as the file has them
	mappings    []pprofMapping
	locations   []pprofLocation
	functions   []pprofFunction
	strings     []string
	drop, keep  strIndex
	defaultType strIndex
	periodType  [2]strIndex
	others      []strIndex // comments and the doc URL: only checked
	time, dur   int64
	scratch     []uint64 // a sample's numbers as checkSample reads them
}

// payloads holds byte strings back to back in blocks, each a varint
// length and its bytes: no copy as they grow.
type payloads struct {
	blocks [][]byte
	n      int
}

// A block is twice the last, from 64 KiB to 4 MiB: a small profile
// costs little, a big one a block in 4 MiB.
const firstPayloadBlock, payloadBlock = 64 << 10, 4 << 20

func (p *payloads) add(b []byte) {
	need := len(b) + 10
	if k := len(p.blocks); k == 0 || cap(p.blocks[k-1])-len(p.blocks[k-1]) < need {
		size := firstPayloadBlock
		if k > 0 {
			size = min(2*cap(p.blocks[k-1]), payloadBlock)
		}
		p.blocks = append(p.blocks, make([]byte, 0, max(size, need)))
	}
	last := &p.blocks[len(p.blocks)-1]
	*last = append(appendUvarint(*last, uint64(len(b))), b...)
	p.n++
}

func appendUvarint(b []byte, u uint64) []byte {
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// each calls f with every byte string in order, letting each block go
// once it has been read.
func (p *payloads) each(f func(i int, b []byte) error) error {
	i := 0
	for k := range p.blocks {
		for b := p.blocks[k]; len(b) > 0; i++ {
			n, rest, _ := varintOf(b) // written by add
			if err := f(i, rest[:n]); err != nil {
				return err
			}
			b = rest[n:]
		}
		p.blocks[k] = nil
	}
	return nil
}

// readPprofStream reads a pprof protobuf from r into its tables, its
// samples kept as bytes. Errors are *wireError, at the offset of the
// top-level field that breaks.
func readPprofStream(r *bufio.Reader) (*pprofStream, error) {
	w := &wireStream{r: r}
	s := &pprofStream{}
	for {
		start := w.off
		num, typ, u, data, err := w.field()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			var gz *gzipStreamError
			if errors.As(err, &gz) {
				return nil, err
			}
			if errors.Is(err, errTruncated) {
				return nil, &wireError{start, truncated}
			}
			return nil, &wireError{start, "not a pprof profile (malformed protobuf)"}
		}
		if err := s.add(wireField{num: num, typ: typ, u: u, data: data}); err != nil {
			return nil, &wireError{start, fmt.Sprintf("%s: %v", pprofFieldName(num), err)}
		}
	}
}

// pprofFieldName names a Profile message's field in errors.
func pprofFieldName(num int) string {
	names := [...]string{1: "sample_type", "sample", "mapping", "location", "function", "string_table", "drop_frames",
		"keep_frames", "time_nanos", "duration_nanos", "period_type", "period", "comment", "default_sample_type", "doc_url"}
	if num > 0 && num < len(names) {
		return names[num]
	}
	return fmt.Sprintf("field %d", num)
}

// add takes one top-level field of a Profile message.
func (s *pprofStream) add(f wireField) (err error) {
	switch f.num {
	case 1, 11: // sample_type, period_type
		var m []byte
		if m, err = wireMessage(f); err != nil {
			return err
		}
		var vt [2]strIndex
		if vt[0], vt[1], err = decodeValueType(m); f.num == 1 {
			s.sampleTypes = append(s.sampleTypes, vt)
		} else {
			s.periodType = vt
		}
	case 2:
		if s.samples.n >= maxItems {
			return fmt.Errorf("more than %d samples", maxItems)
		}
		var m []byte
		if m, err = wireMessage(f); err == nil {
			err = s.checkSample(m)
			s.samples.add(m)
		}
	case 3, 4, 5:
		var m []byte
		if m, err = wireMessage(f); err != nil {
			return err
		}
		if len(s.mappings)+len(s.locations)+len(s.functions) >= maxItems {
			return fmt.Errorf("more than %d mappings, locations and functions", maxItems)
		}
		switch f.num {
		case 3:
			var r pprofMapping
			r, err = decodeMapping(m)
			s.mappings = append(s.mappings, r)
		case 4:
			var r pprofLocation
			r, err = decodeLocation(m)
			s.locations = append(s.locations, r)
		default:
			var r pprofFunction
			r, err = decodeFunction(m)
			s.functions = append(s.functions, r)
		}
	case 6:
		if f.typ != 2 {
			return errWireType
		}
		if len(s.strings) >= maxItems {
			return fmt.Errorf("more than %d strings", maxItems)
		}
		if s.strings = append(s.strings, string(f.data)); s.strings[0] != "" {
			return errors.New("string_table[0] must be ''")
		}
	case 7, 8, 14, 15:
		var i int64
		i, _, err = scalar(f)
		switch f.num {
		case 7:
			s.drop = i
		case 8:
			s.keep = i
		case 14:
			s.defaultType = i
		default:
			s.others = append(s.others, i)
		}
	case 9:
		if s.time != 0 {
			return errors.New("concatenated profiles detected")
		}
		s.time, _, err = scalar(f)
	case 10:
		s.dur, _, err = scalar(f)
	case 12: // period: not used, but a varint
		_, _, err = scalar(f)
	case 13:
		var c []uint64
		c, err = numbers(f, nil)
		for _, u := range c {
			s.others = append(s.others, int64(u)) // #nosec G115 -- a string index's bits, checked as pprof checks them
		}
	}
	return err
}

// checkSample checks a Sample message's wire format; its location ids
// and label strings are checked when it is converted.
func (s *pprofStream) checkSample(m []byte) error {
	return fields(m, 4, func(f wireField) (err error) {
		switch f.num {
		case 1, 2:
			s.scratch, err = numbers(f, s.scratch[:0])
		case 3:
			var l []byte
			if l, err = wireMessage(f); err == nil {
				err = fields(l, 5, func(g wireField) error { _, _, err := scalar(g); return err })
			}
		}
		return err
	})
}

// str is string i of the table; an index outside it is an error, as in
// pprof's getString.
func (s *pprofStream) str(i strIndex) (string, error) {
	if i < 0 || i >= int64(len(s.strings)) {
		return "", fmt.Errorf("string index %d: the table has %d strings", i, len(s.strings))
	}
	return s.strings[i], nil
}

// tables resolves the stream's strings and links its tables into a
// pprof.Profile without samples, as pprof's postDecode and CheckValid do;
// locations maps location ids to them.
func (s *pprofStream) tables() (src *pprof.Profile, locations map[uint64]*pprof.Location, err error) {
	src = &pprof.Profile{TimeNanos: s.time, DurationNanos: s.dur}
	str := func(i strIndex) string {
		v, e := s.str(i)
		err = errors.Join(err, e)
		return v
	}
	for _, vt := range s.sampleTypes {
		src.SampleType = append(src.SampleType, &pprof.ValueType{Type: str(vt[0]), Unit: str(vt[1])})
	}
	src.DefaultSampleType, src.DropFrames, src.KeepFrames = str(s.defaultType), str(s.drop), str(s.keep)
	src.PeriodType = &pprof.ValueType{Type: str(s.periodType[0]), Unit: str(s.periodType[1])}
	for _, i := range s.others {
		str(i)
	}
	mappings := make(map[uint64]*pprof.Mapping, len(s.mappings))
	for i := range s.mappings {
		m := &s.mappings[i].m
		m.File, m.BuildID = str(s.mappings[i].file), str(s.mappings[i].build)
		mappings[m.ID] = m
		src.Mapping = append(src.Mapping, m)
	}
	functions := make(map[uint64]*pprof.Function, len(s.functions))
	for i := range s.functions {
		f := &s.functions[i]
		f.f.Name, f.f.SystemName, f.f.Filename = str(f.name), str(f.system), str(f.srcFile)
		functions[f.f.ID] = &f.f
		src.Function = append(src.Function, &f.f)
	}
	locations = make(map[uint64]*pprof.Location, len(s.locations))
	for i := range s.locations {
		l := &s.locations[i]
		l.l.Mapping = mappings[l.mapping]
		for k, id := range l.funcs {
			l.l.Line[k].Function = functions[id]
		}
		locations[l.l.ID] = &l.l
		src.Location = append(src.Location, &l.l)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(src.SampleType) == 0 && s.samples.n > 0 {
		return nil, nil, errors.New("missing sample type information")
	}
	return src, locations, src.CheckValid()
}

// eachSample calls f with every sample's locations and values, checking
// each as pprof's postDecode and CheckValid do.
func (s *pprofStream) eachSample(locations map[uint64]*pprof.Location, f func(i int, locs []*pprof.Location, values []int64) error) error {
	var ids, values []uint64
	var locs []*pprof.Location
	var vals []int64
	return s.samples.each(func(i int, m []byte) error {
		ids, values = ids[:0], values[:0]
		err := fields(m, 4, func(g wireField) (err error) {
			switch g.num {
			case 1:
				ids, err = numbers(g, ids)
			case 2:
				values, err = numbers(g, values)
			case 3:
				l, _ := wireMessage(g) // checked as read
				err = fields(l, 5, func(h wireField) error {
					if h.num == 3 { // a number, not a string
						return nil
					}
					i := int64(h.u) // #nosec G115 -- a string index's bits, checked as pprof checks them
					_, err := s.str(i)
					return err
				})
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("sample %d: %v", i, err)
		}
		if len(values) != len(s.sampleTypes) {
			return fmt.Errorf("sample %d has %d values, want %d", i, len(values), len(s.sampleTypes))
		}
		locs, vals = locs[:0], vals[:0]
		for _, id := range ids {
			l := locations[id]
			if l == nil {
				return fmt.Errorf("sample %d: no location %d", i, id)
			}
			locs = append(locs, l)
		}
		for _, v := range values {
			vals = append(vals, int64(v)) // #nosec G115 -- pprof's values are int64, written as their bits
		}
		return f(i, locs, vals)
	})
}
