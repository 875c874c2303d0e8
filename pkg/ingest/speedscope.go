package ingest

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeSpeedscope: speedscope files name their schema first.
func looksLikeSpeedscope(head []byte) bool {
	head = inflatedHead(head)
	return looksLikeJSON(head) && bytes.Contains(head, []byte("speedscope.app/file-format-schema.json"))
}

// speedscopeFile is speedscope's file format (its npm package's
// file-format-schema.json): frames shared by profiles that are sampled
// (stacks of frame indices with weights) or evented (frames opened and
// closed at a time).
type speedscopeFile struct {
	Shared struct {
		Frames []speedscopeFrame
	}
	Profiles []speedscopeProfile
}

type speedscopeFrame struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int64  `json:"line"`
}

// speedscopeProfile is one profile of a speedscope file.
type speedscopeProfile struct {
	Type, Name, Unit string
	StartValue       float64
	Samples          [][]int
	Weights          []float64
	Events           []speedscopeEvent
}

// speedscopeEvent is an evented profile's opening (O) or closing (C) of a
// frame.
type speedscopeEvent struct {
	Type  string  `json:"type"`
	Frame int     `json:"frame"`
	At    float64 `json:"at"`
}

// readSpeedscope decodes a speedscope file as a stream: its shared frames,
// its profiles' samples, weights and events one at a time (the samples and
// weights number by number, jsonStream.numbers). Keys
// match as encoding/json matches a struct's fields; others are skipped.
func readSpeedscope(r io.Reader, name string) (*speedscopeFile, error) {
	s, err := streamJSON(r, name)
	if err != nil {
		return nil, err
	}
	sf := &speedscopeFile{}
	err = s.object("the speedscope file", func(key string) error {
		switch {
		case strings.EqualFold(key, "shared"):
			sf.Shared.Frames = nil
			return s.object("shared", func(key string) error {
				if !strings.EqualFold(key, "frames") {
					return s.skip()
				}
				return decodeList(s, "frames", "frames", &sf.Shared.Frames)
			})
		case strings.EqualFold(key, "profiles"):
			sf.Profiles = nil
			return s.array("profiles", func() error {
				prof, err := readSpeedscopeProfile(s)
				sf.Profiles = append(sf.Profiles, prof)
				return err
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
	return sf, nil
}

// readSpeedscopeProfile decodes the profile that comes next.
func readSpeedscopeProfile(s *jsonStream) (speedscopeProfile, error) {
	var prof speedscopeProfile
	err := s.object("a profile", func(key string) error {
		switch {
		case strings.EqualFold(key, "samples"):
			prof.Samples = nil
			// A profile repeats a few thousand stacks: each is kept once.
			stacks := map[uint64][]int{}
			var stack []int
			frame := func(tok []byte, at int64) error {
				n, err := s.integer(tok, at, "a sample")
				if n != int64(int(n)) {
					return offsetError(s.name, at, "bad JSON: a sample holds %s, not an int", tok)
				}
				stack = append(stack, int(n))
				return err
			}
			return s.numberLists("samples", frame, func() error {
				h := stackHash(stack)
				kept, ok := stacks[h]
				if !ok || !slices.Equal(kept, stack) {
					kept = slices.Clone(stack)
					if !ok {
						stacks[h] = kept
					}
				}
				prof.Samples = append(prof.Samples, kept)
				stack = stack[:0]
				return nil
			})
		case strings.EqualFold(key, "weights"):
			prof.Weights = nil
			return s.numbers("weights", func(tok []byte, at int64) error {
				w, err := s.float(tok, at, "weights")
				prof.Weights = append(prof.Weights, w)
				return err
			})
		case strings.EqualFold(key, "events"):
			return decodeList(s, "events", "events", &prof.Events)
		case strings.EqualFold(key, "type"):
			return s.decode(&prof.Type)
		case strings.EqualFold(key, "name"):
			return s.decode(&prof.Name)
		case strings.EqualFold(key, "unit"):
			return s.decode(&prof.Unit)
		case strings.EqualFold(key, "startValue"):
			return s.decode(&prof.StartValue)
		}
		return s.skip()
	})
	return prof, err
}

// stackHash is FNV-1a over a stack's frame indices.
func stackHash(ids []int) uint64 {
	h := uint64(14695981039346656037)
	for _, id := range ids {
		h = (h ^ uint64(id)) * 1099511628211 // #nosec G115 -- a hash: a negative index hashes as any other
	}
	return h
}

// speedscopeUnits maps a speedscope unit to the run's sample type, unit and
// the factor to it.
var speedscopeUnits = map[string]struct {
	sampleType, unit string
	scale            float64
}{
	"none":         {"samples", "count", 1},
	"bytes":        {"bytes", "bytes", 1},
	"nanoseconds":  {"time", "nanoseconds", 1},
	"microseconds": {"time", "nanoseconds", 1e3},
	"milliseconds": {"time", "nanoseconds", 1e6},
	"seconds":      {"time", "nanoseconds", 1e9},
}

// parseSpeedscope reads a speedscope file. Its profiles (py-spy and
// dotnet-trace write one a thread) are one run: their samples added
// together, so they must share a unit. Sampled profiles give a sample per
// stack with its weight; evented ones a sample per interval between two
// events with the stack open then, timed from the profile's start. Time
// units become nanoseconds (sample type "time"), "none" is a count
// ("samples"), "bytes" stays bytes. Frames carry the file and line the file
// gives; Module is the file as given (profile.ModuleIdentity matches it
// across builds by its name).
func parseSpeedscope(r io.Reader, name string, o Options) (*profile.Profile, error) {
	sf, err := readSpeedscope(r, name)
	if err != nil {
		return nil, err
	}
	if len(sf.Profiles) == 0 {
		return nil, fileError(name, "no profiles in the speedscope file")
	}
	p := &profile.Profile{}
	frames := make([]uint32, len(sf.Shared.Frames))
	for i, f := range sf.Shared.Frames {
		frames[i] = p.Intern(profile.Frame{Name: f.Name, Module: f.File, File: f.File, Line: max(f.Line, 0)})
	}
	var arena stackArena
	var root []uint32 // the profile's thread frame (Options.Threads)
	stackOf := func(ids []int, what string) ([]uint32, error) {
		if len(ids) == 0 {
			return nil, fileError(name, "%s: empty stack", what)
		}
		s := arena.alloc(len(root) + len(ids))
		copy(s, root)
		for k, id := range ids {
			if id < 0 || id >= len(frames) {
				return nil, fileError(name, "%s: frame %d of %d frames", what, id, len(frames))
			}
			s[len(root)+k] = frames[id]
		}
		return s, nil
	}
	for pi, prof := range sf.Profiles {
		if o.Threads { // each profile is a thread (py-spy, dotnet-trace)
			root = []uint32{threadFrame(p, prof.Name)}
		}
		u, ok := speedscopeUnits[prof.Unit]
		if !ok {
			return nil, fileError(name, "profile %d: unknown unit %q", pi+1, prof.Unit)
		}
		if p.Unit == "" {
			p.SampleType, p.Unit = u.sampleType, u.unit
		} else if p.Unit != u.unit {
			return nil, fileError(name, "profile %d: unit %q, another profile's is %s", pi+1, prof.Unit, p.Unit)
		}
		value := func(v float64) (int64, bool) {
			v = math.Round(v * u.scale)
			return int64(v), v >= 0 && v < math.MaxInt64
		}
		switch prof.Type {
		case "sampled":
			if len(prof.Weights) != len(prof.Samples) {
				return nil, fileError(name, "profile %d: %d samples but %d weights", pi+1, len(prof.Samples), len(prof.Weights))
			}
			p.Samples = slices.Grow(p.Samples, len(prof.Samples)) // not the doubling of append: the samples are most of the memory
			for k, ids := range prof.Samples {
				s, err := stackOf(ids, "sample")
				if err != nil {
					return nil, err
				}
				v, ok := value(prof.Weights[k])
				if !ok {
					return nil, fileError(name, "profile %d: sample %d: bad weight %v", pi+1, k+1, prof.Weights[k])
				}
				p.Samples = append(p.Samples, profile.Sample{Stack: s, Value: v, Time: -1})
			}
		case "evented":
			var open []int
			var prev int64
			for k, e := range prof.Events {
				at, ok := value(e.At - prof.StartValue)
				if !ok || at < prev {
					return nil, fileError(name, "profile %d: event %d: time %v before the previous event's", pi+1, k+1, e.At)
				}
				if len(open) > 0 && at > prev {
					s, err := stackOf(open, "event")
					if err != nil {
						return nil, err
					}
					t := int64(-1)
					if u.unit == "nanoseconds" {
						t = prev
					}
					p.Samples = append(p.Samples, profile.Sample{Stack: s, Value: at - prev, Time: t})
				}
				prev = at
				switch e.Type {
				case "O":
					open = append(open, e.Frame)
				case "C":
					if len(open) == 0 || open[len(open)-1] != e.Frame {
						return nil, fileError(name, "profile %d: event %d closes frame %d, which is not the innermost open", pi+1, k+1, e.Frame)
					}
					open = open[:len(open)-1]
				default:
					return nil, fileError(name, "profile %d: event %d: unknown type %q", pi+1, k+1, e.Type)
				}
			}
			if len(open) > 0 {
				return nil, fileError(name, "profile %d: %d frames never closed", pi+1, len(open))
			}
		default:
			return nil, fileError(name, "profile %d: unknown type %q", pi+1, prof.Type)
		}
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no samples in the speedscope file")
	}
	return p, nil
}
