// Package export writes what Flamediff holds in other tools' formats: a
// profile (one run, or a build's runs summed) or a tree (a query's
// answer, a diff included) as pprof's protobuf or as speedscope's JSON
// file format (docs/EXPORT.md).
package export

import (
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

// stacks is what both formats write: distinct stacks of named frames,
// with a value on each side (base is used only by a diff).
type stacks struct {
	sampleType, unit string
	frames           []profile.Frame
	rows             []row
	diff             bool
	profile          *profile.Profile // the source, when a profile: its times
}

// row is one stack (indices into stacks.frames, root first) and its
// values.
type row struct {
	stack      []uint32
	head, base float64
}

func fromProfile(p *profile.Profile) *stacks {
	s := &stacks{sampleType: p.SampleType, unit: p.Unit, frames: p.Frames, profile: p}
	for _, smp := range p.Samples {
		stack := smp.Stack
		if stack == nil {
			stack = []uint32{} // a JSON array, not null
		}
		s.rows = append(s.rows, row{stack: stack, head: float64(smp.Value)})
	}
	return s
}

// fromTree reads each node's self values as a stack (Tree.EachStack). The
// root's own value, what lies outside a focus path or a sandwich, has no
// stack and is left out; "other" nodes are frames named "other". scale
// multiplies every value.
func fromTree(t *tree.Tree, sampleType, unit string, scale float64) *stacks {
	s := &stacks{sampleType: sampleType, unit: unit, diff: t.Diff}
	index := map[uint32]uint32{} // tree frame id -> index in s.frames
	t.EachStack(func(path []uint32, head, base float64) {
		if len(path) == 0 {
			return
		}
		stack := make([]uint32, len(path))
		for i, f := range path {
			at, ok := index[f]
			if !ok {
				at = uint32(len(s.frames)) // #nosec G115 -- one frame per tree frame id, itself a uint32
				index[f] = at
				frame := profile.Frame{Name: "other"}
				if f != tree.OtherFrame {
					src := t.Frames.Source(f)
					frame = profile.Frame{Name: t.Frames.Name(f), Module: t.Frames.Module(f), File: src.File, Line: src.Line}
				}
				s.frames = append(s.frames, frame)
			}
			stack[i] = at
		}
		s.rows = append(s.rows, row{stack: stack, head: head * scale, base: base * scale})
	})
	return s
}

// files gives each frame the file that pprof and speedscope tell
// functions apart by, with the name: its source file, or, when it has
// none and a frame of another module shares its name (two packages'
// stringify), its module.
func (s *stacks) files() []string {
	modules := map[string]map[string]bool{} // name -> its modules' identities
	for _, f := range s.frames {
		if modules[f.Name] == nil {
			modules[f.Name] = map[string]bool{}
		}
		modules[f.Name][profile.ModuleIdentity(f.Module)] = true
	}
	out := make([]string, len(s.frames))
	for i, f := range s.frames {
		out[i] = f.File
		if f.File == "" && len(modules[f.Name]) > 1 {
			out[i] = f.Module
		}
	}
	return out
}
