// Package profile is the in-memory model of one run's samples: the common
// currency of the ingestion formats, the storage layer and the CLI.
//
// Frames are interned: a Sample's stack is a list of indices into
// Profile.Frames, root first, so that a profile with millions of samples
// stores each distinct function name once.
package profile

import (
	"fmt"
	"strings"
	"time"
)

// Frame is one function in a stack.
type Frame struct {
	// Name is the label drawn in the flame graph (a function name, or for
	// perf/folded input the text of the frame).
	Name string
	// Module is the binary or library the code lives in (the pprof mapping's
	// file, the perf DSO, as the profile gives it); "" when the source does
	// not say. It feeds the system-frame rules used by "collapse system
	// calls" and is shown; only its identity across builds
	// (ModuleIdentity) tells frames apart.
	Module string
	// File is the source file of the function (pprof's function filename)
	// and Line its first line (pprof's start line); "" and 0 when the
	// source does not say (folded and perf input). They describe a frame,
	// they do not identify it: Name and Module do (see FrameIdentity).
	File string
	Line int64
	// Inlined says the call of this frame by the frame before it (its
	// caller) was inlined by the compiler: pprof's Line of a Location
	// other than its last. A change of inlining is not a change of the
	// function: Inlined is no part of its identity (FrameIdentity), but
	// Intern keeps inlined and called frames of a function apart, so that
	// exports keep pprof's "(inline)" marks.
	Inlined bool
}

// Sample is one stack with its value.
type Sample struct {
	// Stack holds indices into Profile.Frames, root first.
	Stack []uint32
	Value int64
	// Time is the sample's offset from the start of the run in nanoseconds,
	// or -1 when the source has no per-sample time.
	Time int64
}

// Profile is every sample of one run.
type Profile struct {
	SampleType string        // e.g. "cpu", "wall", "alloc_space", "samples"
	Unit       string        // e.g. "nanoseconds", "bytes", "count"
	Start      time.Time     // zero when the source does not say
	Duration   time.Duration // wall duration; 0 when the source does not say
	// Exact says that the values are counted, not sampled (callgrind's
	// simulated events): a run of the same build gives the same, so one
	// run a side compares exactly (docs/STATISTICS.md).
	Exact   bool
	Frames  []Frame
	Samples []Sample

	index map[frameKey]uint32
}

// frameKey is what Intern tells frames apart by: the identity and the
// inline mark.
type frameKey struct {
	Identity
	inlined bool
}

// internKey is f's identity and inline mark, except that a module whose
// identity the whole profile settles (Identify: an app's own source file
// at an absolute path, an executable) keeps its path whole: two app files
// of one name, two programs' main, are two frames.
func internKey(f Frame) frameKey {
	id := FrameIdentity(f.Name, f.Module)
	if f.Module != "" && !isMarker(f.Module) {
		if _, abs := sourcePath(f.Module); abs && (id.Module == "" || isScript(strings.ToLower(moduleBase(f.Module)))) {
			if _, settled := sourceIdentity(f.Module); id.Module == "" || !settled {
				id.Module = "\x00" + f.Module
			}
		}
	}
	return frameKey{id, f.Inlined}
}

// Intern returns the index of the frame f's identity (FrameIdentity of its
// Name and Module) and inline mark (storage hashes the same,
// storage.FrameHash; an app's source file or an executable at an absolute
// path by its path until Identify, internKey), appending f if it is new;
// the first frame of an identity keeps its module path.
// When the frame is known without a source file and f has one, f's File
// and Line fill it in: the first non-empty position wins.
func (p *Profile) Intern(f Frame) uint32 {
	if p.index == nil {
		p.index = make(map[frameKey]uint32, len(p.Frames))
		for i, g := range p.Frames {
			k := internKey(g)
			if _, ok := p.index[k]; !ok {
				p.index[k] = uint32(i) // #nosec G115 -- frame ids are uint32 by design
			}
		}
	}
	k := internKey(f)
	if i, ok := p.index[k]; ok {
		if g := &p.Frames[i]; g.File == "" && f.File != "" {
			g.File, g.Line = f.File, f.Line
		}
		return i
	}
	i := uint32(len(p.Frames)) // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
	p.Frames = append(p.Frames, f)
	p.index[k] = i
	return i
}

// InternLines interns the frames of one code location, innermost first as
// pprof and OTLP list its lines, and appends their indices to ids: each
// but the last was inlined into the one after it (Inlined).
func (p *Profile) InternLines(ids []uint32, lines []Frame) []uint32 {
	for i, f := range lines {
		f.Inlined = i < len(lines)-1
		ids = append(ids, p.Intern(f))
	}
	return ids
}

// RemapFrames replaces each frame index i in p's stacks by ids[i]. Samples
// may share a stack, or part of one (a V8 node's samples, a pprof stack
// repeated): each index is mapped once, marked by the top bit until all
// are (a run's frames are far fewer than 2^31), so sharing costs no memory.
func (p *Profile) RemapFrames(ids []uint32) {
	const mapped = 1 << 31
	for _, s := range p.Samples {
		for j, id := range s.Stack {
			if id&mapped == 0 {
				s.Stack[j] = ids[id] | mapped
			}
		}
	}
	for _, s := range p.Samples {
		for j := range s.Stack {
			s.Stack[j] &^= mapped
		}
	}
}

// Names returns the frame names of a stack, root first.
func (p *Profile) Names(stack []uint32) []string {
	names := make([]string, len(stack))
	for i, id := range stack {
		names[i] = p.Frames[id].Name
	}
	return names
}

// Total is the sum of all sample values.
func (p *Profile) Total() int64 {
	var t int64
	for _, s := range p.Samples {
		t += s.Value
	}
	return t
}

// Timed reports whether every sample carries its time within the run.
func (p *Profile) Timed() bool {
	for _, s := range p.Samples {
		if s.Time < 0 {
			return false
		}
	}
	return len(p.Samples) > 0
}

// FirstSeen is the ordering key of sample i, used to order siblings in a tree
// by when they were first seen: its time within the run when the source has
// one, otherwise its position in the file (sources list samples in the
// order they were recorded or aggregated).
func (p *Profile) FirstSeen(i int) uint64 {
	if t := p.Samples[i].Time; t >= 0 {
		return uint64(t)
	}
	return uint64(i) // #nosec G115 -- i is a sample's index, never negative
}

// CheckValid verifies the invariants every importer must establish: stacks
// are non-empty and reference existing frames, values are non-negative.
func (p *Profile) CheckValid() error {
	for i, s := range p.Samples {
		if len(s.Stack) == 0 {
			return fmt.Errorf("sample %d: empty stack", i)
		}
		if s.Value < 0 {
			return fmt.Errorf("sample %d: negative value %d", i, s.Value)
		}
		for _, id := range s.Stack {
			if int(id) >= len(p.Frames) {
				return fmt.Errorf("sample %d: frame index %d out of range (%d frames)", i, id, len(p.Frames))
			}
		}
	}
	return nil
}
