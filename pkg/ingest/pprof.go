package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"

	pprof "github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/flamediff/flamediff/pkg/profile"
)

// parsePprof reads a pprof profile with github.com/google/pprof/profile —
// protobuf, gzipped or not, or any legacy format profile.Parse reads
// (text heap, contention, thread and count profiles, binary CPU
// profiles) — and converts it:
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
// pprof has no per-sample time: every Time is -1.
func parsePprof(r io.Reader, name, sampleType string) (*profile.Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, where := data, ""
	if bytes.HasPrefix(data, gzipMagic) {
		if raw, err = gunzip(data, name); err != nil {
			return nil, err
		}
		where = " (decompressed)"
	}
	if len(raw) == 0 {
		return nil, fileError(name, "empty profile")
	}
	if bytes.HasPrefix(raw, gzipMagic) {
		return nil, fileError(name, "gzipped twice")
	}
	src, err := pprof.ParseData(raw) // protobuf, else the legacy formats
	if err != nil {
		if isText(raw[:min(len(raw), detectSize)]) {
			return nil, fileError(name, "not a pprof profile (text): %v", err)
		}
		if off, reason := checkWire(raw); reason != "" {
			return nil, offsetError(name, off, "%s%s", reason, where)
		}
		return nil, fileError(name, "not a pprof profile: %v", err)
	}
	if err := src.RemoveUninteresting(); err != nil {
		return nil, fileError(name, "%v", err)
	}
	return convertPprof(src, name, sampleType)
}

// gunzip decompresses a gzipped profile, at most MaxFileSize bytes.
// A stream whose first block looks like no profile (protobuf, legacy
// binary or text) fails before the rest is inflated.
func gunzip(data []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, gzipError(name, data, err)
	}
	var out bytes.Buffer
	n, err := io.CopyN(&out, zr, detectSize)
	if err == nil {
		if off, reason := checkWire(out.Bytes()); reason != "" && reason != truncated &&
			!isText(out.Bytes()) && !legacyCPU(out.Bytes()) {
			return nil, offsetError(name, off, "%s (decompressed)", reason)
		}
		var m int64
		m, err = io.Copy(&out, io.LimitReader(zr, MaxFileSize+1-n))
		n += m
	}
	if err != nil && err != io.EOF {
		return nil, gzipError(name, data, err)
	}
	if n > MaxFileSize {
		return nil, fileError(name, "decompresses to more than %d MiB: not a profile", MaxFileSize>>20)
	}
	return out.Bytes(), nil
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

func convertPprof(src *pprof.Profile, name, sampleType string) (*profile.Profile, error) {
	if len(src.SampleType) == 0 {
		return nil, fileError(name, "profile has no sample types")
	}
	vi, err := src.SampleIndexByName(sampleType)
	if err != nil {
		return nil, fileError(name, "%v", err)
	}
	p := &profile.Profile{
		SampleType: src.SampleType[vi].Type,
		Unit:       src.SampleType[vi].Unit,
		Duration:   time.Duration(src.DurationNanos),
	}
	if src.TimeNanos != 0 {
		p.Start = time.Unix(0, src.TimeNanos).UTC()
	}
	// Each location's frames, leaf first, computed once.
	locFrames := make(map[*pprof.Location][]uint32, len(src.Location))
	var arena stackArena
	for i, s := range src.Sample {
		if vi >= len(s.Value) {
			return nil, fileError(name, "sample %d has %d values, want %d", i, len(s.Value), len(src.SampleType))
		}
		v := s.Value[vi]
		if v == 0 {
			continue
		}
		if v < 0 {
			return nil, fileError(name, "sample %d has negative value %d", i, v)
		}
		n := 0
		for _, loc := range s.Location {
			fs, ok := locFrames[loc]
			if !ok {
				fs = locationFrames(p, loc)
				locFrames[loc] = fs
			}
			n += len(fs)
		}
		if n == 0 {
			return nil, fileError(name, "sample %d has no locations", i)
		}
		stack := arena.alloc(n)
		for _, loc := range s.Location {
			for _, id := range locFrames[loc] {
				n--
				stack[n] = id
			}
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: v, Time: -1})
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
