package ingest

import (
	"bytes"
	"io"
	"math"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeSpeedscope: speedscope files name their schema first.
func looksLikeSpeedscope(head []byte) bool {
	return looksLikeJSON(head) && bytes.Contains(head, []byte("speedscope.app/file-format-schema.json"))
}

// speedscopeFile is speedscope's file format (its npm package's
// file-format-schema.json): frames shared by profiles that are sampled
// (stacks of frame indices with weights) or evented (frames opened and
// closed at a time).
type speedscopeFile struct {
	Shared struct {
		Frames []struct {
			Name string `json:"name"`
			File string `json:"file"`
			Line int64  `json:"line"`
		} `json:"frames"`
	} `json:"shared"`
	Profiles []struct {
		Type       string    `json:"type"`
		Name       string    `json:"name"`
		Unit       string    `json:"unit"`
		StartValue float64   `json:"startValue"`
		Samples    [][]int   `json:"samples"`
		Weights    []float64 `json:"weights"`
		Events     []struct {
			Type  string  `json:"type"`
			Frame int     `json:"frame"`
			At    float64 `json:"at"`
		} `json:"events"`
	} `json:"profiles"`
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
	var sf speedscopeFile
	if err := readJSON(r, name, &sf); err != nil {
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
