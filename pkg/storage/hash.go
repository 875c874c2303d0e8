package storage

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/flamediff/flamediff/pkg/profile"
)

// FrameHash is a frame's key in the frames table: xxhash64 of
// name + "\x00" + module of its identity (profile.FrameIdentity), so a
// function is one frame at any path of its binary; the same function in
// two modules is two frames. An inlined frame (profile.Frame.Inlined)
// appends "\x00i": stored apart, so that exports keep the mark, and one
// function for every reader. Rows stored before the identity keyed the
// hash hold xxhash64 of the full path; readers meet them by the identity
// of the name and module stored with them (tree.Frames.Intern). The
// program's process frame (profile.ProgramModule) hashes its name too:
// one identity whatever the build named it, but a row of its own per
// name, so that each program's runs export under their own process name.
func FrameHash(name, module string, inlined bool) uint64 {
	id := profile.FrameIdentity(name, module)
	if module == profile.ProgramModule {
		id.Name = name
	}
	d := xxhash.New()
	_, _ = d.WriteString(id.Name)
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(id.Module)
	if inlined {
		_, _ = d.WriteString("\x00i")
	}
	return d.Sum64()
}

// FunctionHash is a function's key in the run functions table: xxhash64
// of its name (a function is a frame name, whatever its module, as
// over-time queries count them). 0 is the runs' totals row, which no
// name is expected to hash to.
func FunctionHash(name string) uint64 { return xxhash.Sum64String(name) }

// StackSetHash is a run's set of distinct stacks as one key: StackHash of
// their hashes in ascending order. Runs with the same key have the same
// stacks (Store.StackRuns reads one of them for all).
func StackSetHash(stacks []uint64) uint64 {
	return StackHash(slices.Sorted(slices.Values(stacks)))
}

// StackHash is a stack's key in the stacks table: xxhash64 of its frame
// hashes (root first) as little-endian 8-byte words.
func StackHash(frameHashes []uint64) uint64 {
	var buf [8 * 64]byte
	d := xxhash.New()
	for len(frameHashes) > 0 {
		n := min(len(frameHashes), 64)
		for i, h := range frameHashes[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], h)
		}
		_, _ = d.Write(buf[:8*n])
		frameHashes = frameHashes[n:]
	}
	return d.Sum64()
}
