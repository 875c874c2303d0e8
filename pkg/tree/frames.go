// Package tree is Flamediff's tree engine: it merges the distinct stacks of
// many runs into averaged, differential, inverted and collapsed flame graph
// trees, and into pprof-style function tables.
//
// The engine works on distinct stacks, not samples: storage has already
// aggregated the values per (run, stack), so a Builder receives one Add per
// run and stack and Build touches every distinct stack once. A Tree is a flat
// pre-order array of fixed-size nodes whose labels are interned in Frames.
package tree

import "github.com/flamediff/flamediff/pkg/profile"

// Frames interns frame names and modules; a frame is identified by its
// uint32 id everywhere in the engine. Frames of one identity across builds
// (profile.FrameIdentity) are one id: that is what makes a diff of two
// builds at different paths meet, whatever stored the frames. One Frames
// is shared by everything built for a query. Frames is not safe for concurrent use while Intern is
// being called; reading it concurrently is safe.
type Frames struct {
	names   []string
	modules []string
	index   map[profile.Identity]uint32
	// seen maps each (name, module) interned to its id, so that a frame met
	// again costs one look-up and no identity work (Intern is hot: every
	// frame of every stack of every run).
	seen map[frameKey]uint32
	// sources holds the frames' source positions (SetSource), when any.
	sources map[uint32]Source
	// named counts the frames of each name: a name two functions share is
	// titled with its module (Title).
	named map[string]int32
}

// Source is where a frame's function is: its file and first line ("" and
// 0 when unknown). It describes a frame, it does not identify it.
type Source struct {
	File string
	Line int64
}

type frameKey struct{ name, module string }

// NewFrames returns an empty interner.
func NewFrames() *Frames {
	return &Frames{index: make(map[profile.Identity]uint32), seen: make(map[frameKey]uint32), named: make(map[string]int32)}
}

// Intern returns the id of the frame (name, module), adding it if it is new.
// Ids are dense, starting at 0, in order of first Intern. Two frames with the
// same name in modules of different identities (profile.ModuleIdentity) are
// different frames; of one identity at two paths, one frame that keeps the
// first path it was interned with (Module).
func (f *Frames) Intern(name, module string) uint32 {
	if id, ok := f.seen[frameKey{name, module}]; ok {
		return id
	}
	k := profile.FrameIdentity(name, module)
	id, ok := f.index[k]
	if !ok {
		id = uint32(len(f.names)) // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
		f.names = append(f.names, name)
		f.modules = append(f.modules, module)
		f.index[k] = id
		f.named[name]++
	}
	f.seen[frameKey{name, module}] = id
	return id
}

// Name returns the name of frame id, or "" if id was never interned.
func (f *Frames) Name(id uint32) string {
	if int(id) >= len(f.names) {
		return ""
	}
	return f.names[id]
}

// Title names frame id where it stands alone (a table's row, a verdict's
// headline): its name, and when another frame has that name, its module's
// identity as the ecosystem knows it, "stringify (qs/lib/stringify.js)".
func (f *Frames) Title(id uint32) string {
	name := f.Name(id)
	if f.named[name] < 2 {
		return name
	}
	if m := profile.ModuleIdentity(f.Module(id)); m != "" {
		return name + " (" + m + ")"
	}
	return name
}

// called reports per frame id whether function (a Sandwich's) names it:
// the frame it titles, else every frame of that name.
func (f *Frames) called(function string) []bool {
	is := make([]bool, len(f.names))
	if function == "" {
		return is
	}
	titled := false
	for id := range is {
		is[id] = f.Title(uint32(id)) == function // #nosec G115 -- a frame id: frames are uint32 by design
		titled = titled || is[id]
	}
	if !titled {
		for id, name := range f.names {
			is[id] = name == function
		}
	}
	return is
}

// Module returns the module of frame id, or "" if it has none or id was never
// interned.
func (f *Frames) Module(id uint32) string {
	if int(id) >= len(f.modules) {
		return ""
	}
	return f.modules[id]
}

// SetSource records frame id's source position unless it has one: the
// first non-empty position wins.
func (f *Frames) SetSource(id uint32, file string, line int64) {
	if file == "" {
		return
	}
	if f.sources == nil {
		f.sources = make(map[uint32]Source)
	}
	if _, ok := f.sources[id]; !ok {
		f.sources[id] = Source{file, line}
	}
}

// Source returns frame id's source position (zero when unknown).
func (f *Frames) Source(id uint32) Source { return f.sources[id] }

// Len is the number of interned frames; valid ids are 0 to Len()-1.
func (f *Frames) Len() int { return len(f.names) }
