package export

import (
	"encoding/json"
	"io"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

// speedscopeSchema is the $schema every speedscope file names.
const speedscopeSchema = "https://www.speedscope.app/file-format-schema.json"

// Exporter names Flamediff in the files it writes.
const Exporter = "flamediff"

// The parts of speedscope's file format (its file-format-schema.json)
// Flamediff writes: sampled profiles over shared frames.
type (
	speedscopeFile struct {
		Schema             string              `json:"$schema"`
		Shared             speedscopeShared    `json:"shared"`
		Profiles           []speedscopeProfile `json:"profiles"`
		Name               string              `json:"name"`
		ActiveProfileIndex int                 `json:"activeProfileIndex"`
		Exporter           string              `json:"exporter"`
	}
	speedscopeShared struct {
		Frames []speedscopeFrame `json:"frames"`
	}
	speedscopeFrame struct {
		Name string `json:"name"`
		File string `json:"file,omitempty"`
		Line int64  `json:"line,omitempty"`
	}
	speedscopeProfile struct {
		Type       string     `json:"type"`
		Name       string     `json:"name"`
		Unit       string     `json:"unit"`
		StartValue float64    `json:"startValue"`
		EndValue   float64    `json:"endValue"`
		Samples    [][]uint32 `json:"samples"`
		Weights    []float64  `json:"weights"`
	}
)

// Speedscope writes p as a speedscope file of one sampled profile named
// name: a sample per distinct stack, weighted by its value.
func Speedscope(w io.Writer, name string, p *profile.Profile) error {
	return fromProfile(p).speedscope(w, name)
}

// SpeedscopeTree writes the stacks of t, a query's answer, as a
// speedscope file named name, weighted by each node's self value per run
// (the values the answer shows). Speedscope has no diff view: a diff is
// two profiles, "head" and "base", over the same frames.
func SpeedscopeTree(w io.Writer, name string, t *tree.Tree, unit string) error {
	return fromTree(t, "", unit, 1).speedscope(w, name)
}

func (s *stacks) speedscope(w io.Writer, name string) error {
	f := speedscopeFile{Schema: speedscopeSchema, Name: name, Exporter: Exporter,
		Shared: speedscopeShared{Frames: make([]speedscopeFrame, len(s.frames))}}
	files := s.files()
	for i, fr := range s.frames {
		f.Shared.Frames[i] = speedscopeFrame{Name: fr.Name, File: files[i], Line: fr.Line}
	}
	sides := []string{name}
	if s.diff {
		sides = []string{"head", "base"}
	}
	for side, label := range sides {
		p := speedscopeProfile{Type: "sampled", Name: label, Unit: speedscopeUnit(s.unit),
			Samples: [][]uint32{}, Weights: []float64{}}
		for _, r := range s.rows {
			v := r.head
			if side == 1 {
				v = r.base
			}
			if v == 0 {
				continue
			}
			p.Samples = append(p.Samples, r.stack)
			p.Weights = append(p.Weights, v)
			p.EndValue += v
		}
		f.Profiles = append(f.Profiles, p)
	}
	enc := json.NewEncoder(w)
	return enc.Encode(f)
}

// speedscopeUnit is speedscope's name of a unit: a time unit or bytes, or
// "none" for counts and anything else.
func speedscopeUnit(unit string) string {
	switch unit {
	case "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes":
		return unit
	}
	return "none"
}
