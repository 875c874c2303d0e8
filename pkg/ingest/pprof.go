package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	pprof "github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/flamediff/flamediff/pkg/profile"
)

// parsePprof reads a pprof profile — protobuf, gzipped or not, or any
// legacy format github.com/google/pprof/profile reads (text heap,
// contention, thread and count profiles, binary CPU profiles) — and
// converts it:
//   - the value is sampleType, or by default pprof's rule (DefaultSampleType
//     if set, else the last sample type), which also gives SampleType/Unit;
//   - each pprof Line is a frame named after its function, inlined calls
//     expanded (a Location's Line[0] is the innermost), root first; the
//     frames of all lines but the last are Inlined;
//   - a location without lines (unsymbolized) is named "FILE+0xOFFSET" from
//     its mapping's file base name and file offset, or "0xADDRESS";
//   - Frame.Module is the location's mapping file, Frame.File and Line the
//     function's file name and start line;
//   - the profile's drop_frames/keep_frames are applied as pprof does;
//   - samples with value 0 are dropped; negative values are an error.
//
// Protobuf is read as a stream (pprofstream.go), gzip inflated as it is
// read: a file of any size is read, its memory its samples' bytes, its
// tables and the run. The legacy formats, text or small, are read whole
// by google/pprof. pprof has no per-sample time: every Time is -1.
func parsePprof(r io.Reader, name, sampleType string) (*profile.Profile, error) {
	br := bufio.NewReaderSize(r, detectSize)
	var in io.Reader = br
	var file *countingReader // the gzipped file's bytes, for where it ends
	where := ""
	if magic, _ := br.Peek(len(gzipMagic)); bytes.Equal(magic, gzipMagic) {
		file = &countingReader{r: br}
		zr, err := gzip.NewReader(file)
		if err != nil {
			return nil, fileError(name, "gzip: %v", err)
		}
		in, where = inflating{zr}, " (decompressed)"
	}
	ir := bufio.NewReaderSize(in, detectSize)
	head, err := ir.Peek(detectSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, pprofReadError(name, file, err)
	}
	switch {
	case len(head) == 0:
		return nil, fileError(name, "empty profile")
	case bytes.HasPrefix(head, gzipMagic):
		return nil, fileError(name, "gzipped twice")
	case isText(head) || legacyCPU(head):
		return parseLegacyPprof(ir, name, sampleType, where, file)
	}
	s, err := readPprofStream(ir)
	var we *wireError
	if errors.As(err, &we) {
		return nil, offsetError(name, we.offset, "%s%s", we.reason, where)
	}
	if err != nil {
		return nil, pprofReadError(name, file, err)
	}
	src, locations, err := s.tables()
	if err != nil {
		return nil, fileError(name, "malformed profile: %v", err)
	}
	return convertPprof(src, name, sampleType, s.samples.n, func(f pprofSampleFunc) error { return s.eachSample(locations, f) })
}

// countingReader counts the bytes read from the file.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// pprofReadError is an error reading the file or inflating it: a gzip
// stream cut short is truncated where the file ends.
func pprofReadError(name string, file *countingReader, err error) error {
	var gz *gzipStreamError
	if errors.As(err, &gz) {
		return gzipFailure(name, file.n, gz.err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseLegacyPprof reads one of the legacy formats whole with
// google/pprof.
func parseLegacyPprof(r io.Reader, name, sampleType, where string, file *countingReader) (*profile.Profile, error) {
	raw, err := readWhole(r, name)
	var gz *gzipStreamError
	if errors.As(err, &gz) {
		return nil, pprofReadError(name, file, err)
	}
	if err != nil {
		return nil, err
	}
	src, err := pprof.ParseData(raw)
	if err != nil {
		if isText(raw[:min(len(raw), detectSize)]) {
			return nil, fileError(name, "not a pprof profile (text): %v", err)
		}
		if off, reason := checkWire(raw); reason != "" {
			return nil, offsetError(name, off, "%s%s", reason, where)
		}
		return nil, fileError(name, "not a pprof profile: %v", err)
	}
	return convertPprof(src, name, sampleType, len(src.Sample), func(f pprofSampleFunc) error {
		for i, s := range src.Sample {
			if err := f(i, s.Location, s.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// legacyCPU reports whether b starts with the header of a legacy binary
// CPU profile: the words 0, 3 (32 or 64 bits, either byte order).
func legacyCPU(b []byte) bool {
	for _, w := range []int{4, 8} {
		if len(b) < 2*w {
			continue
		}
		zero := bytes.Count(b[:w], []byte{0}) == w
		second := b[w : 2*w]
		three := bytes.Count(second, []byte{0}) == w-1 && (second[0] == 3 || second[w-1] == 3)
		if zero && three {
			return true
		}
	}
	return false
}

// truncated is checkWire's reason for a stream that ends inside a field.
const truncated = "truncated protobuf"

// checkWire walks the top-level protobuf fields so that truncation and junk
// are reported with the offset of the field that breaks; pprof's decoder
// does not say where.
func checkWire(b []byte) (offset int64, reason string) {
	for off := 0; off < len(b); {
		_, _, n := protowire.ConsumeField(b[off:])
		if n < 0 {
			if errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF) {
				return int64(off), truncated
			}
			return int64(off), "not a pprof profile (malformed protobuf)"
		}
		off += n
	}
	return 0, ""
}

// pprofSampleFunc takes a sample's locations (leaf first) and values.
type pprofSampleFunc func(i int, locs []*pprof.Location, values []int64) error

// convertPprof makes the run of src's tables and the samples each gives,
// count of them.
func convertPprof(src *pprof.Profile, name, sampleType string, count int, each func(pprofSampleFunc) error) (*profile.Profile, error) {
	if len(src.SampleType) == 0 {
		return nil, fileError(name, "profile has no sample types")
	}
	vi, err := src.SampleIndexByName(sampleType)
	if err != nil {
		return nil, fileError(name, "%v", err)
	}
	pruner, err := newPprofPruner(src)
	if err != nil {
		return nil, fileError(name, "drop_frames or keep_frames: %v", err)
	}
	p := &profile.Profile{
		SampleType: src.SampleType[vi].Type,
		Unit:       src.SampleType[vi].Unit,
		Duration:   time.Duration(src.DurationNanos),
		Samples:    make([]profile.Sample, 0, count),
	}
	if src.TimeNanos != 0 {
		p.Start = time.Unix(0, src.TimeNanos).UTC()
	}
	// Each location's frames, leaf first, computed once.
	locFrames := make(map[*pprof.Location][]uint32, len(src.Location))
	var arena stackArena
	var stacks recentStacks
	var frames []uint32
	err = each(func(i int, locs []*pprof.Location, values []int64) error {
		if vi >= len(values) {
			return fileError(name, "sample %d has %d values, want %d", i, len(values), len(src.SampleType))
		}
		v := values[vi]
		if v == 0 {
			return nil
		}
		if v < 0 {
			return fileError(name, "sample %d has negative value %d", i, v)
		}
		locs = pruner.stack(locs)
		n := 0
		for _, loc := range locs {
			fs, ok := locFrames[loc]
			if !ok {
				fs = locationFrames(p, loc)
				locFrames[loc] = fs
			}
			n += len(fs)
		}
		if n == 0 {
			return fileError(name, "sample %d has no locations", i)
		}
		frames = slices.Grow(frames[:0], n)[:n]
		for _, loc := range locs {
			for _, id := range locFrames[loc] {
				n--
				frames[n] = id
			}
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: stacks.get(frames, &arena), Value: v, Time: -1})
		return nil
	})
	var fe *Error
	if err != nil && !errors.As(err, &fe) {
		return nil, fileError(name, "malformed profile: %v", err)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// locationFrames interns a location's frames, innermost (leaf) first.
func locationFrames(p *profile.Profile, loc *pprof.Location) []uint32 {
	var module string
	if loc.Mapping != nil {
		module = loc.Mapping.File
	}
	var lines []profile.Frame
	for _, line := range loc.Line {
		if line.Function == nil {
			continue
		}
		fn := line.Function.Name
		if fn == "" {
			fn = line.Function.SystemName
		}
		if fn == "" {
			continue
		}
		lines = append(lines, profile.Frame{Name: fn, Module: module,
			File: line.Function.Filename, Line: max(line.Function.StartLine, 0)})
	}
	ids := p.InternLines(nil, lines)
	if len(ids) == 0 {
		ids = append(ids, p.Intern(profile.Frame{Name: addressName(loc), Module: module}))
	}
	return ids
}

// addressName names an unsymbolized location, the way pprof shows it when
// it knows only the binary: by file offset in the mapped file when there
// is one, else by address.
func addressName(loc *pprof.Location) string {
	if m := loc.Mapping; m != nil && m.File != "" && loc.Address >= m.Start {
		return fmt.Sprintf("%s+0x%x", filepath.Base(m.File), loc.Address-m.Start+m.Offset)
	}
	return fmt.Sprintf("0x%x", loc.Address)
}

// legacyHeader matches the first line of the legacy text profiles that
// google/pprof reads (legacy_profile.go, legacy_java_profile.go): heap,
// growth and fragmentation; contention and mutex; threads; goroutine and
// other "NAME profile: total N" counts; Java heapz/contentionz.
var legacyHeader = regexp.MustCompile(`^(heap profile: *\d+: *\d+ *\[|--- (contention|mutex):|--- (contentionz|heapz|threadz) \d+ ---|--- Thread [[:xdigit:]]+ \(name: |\S+ profile: total \d+\s*$)`)

// legacyText reports whether the first line that is neither blank nor a
// comment is the header of a legacy pprof text profile.
func legacyText(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if t := bytes.TrimSpace(line); len(t) == 0 || t[0] == '#' {
			continue
		}
		return legacyHeader.Match(line)
	}
	return false
}
