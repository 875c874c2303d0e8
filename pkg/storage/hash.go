package storage

import (
	"encoding/binary"
	"slices"
	"strconv"

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
	if inlined {
		id.Module += "\x00i"
	}
	return identityHash(id)
}

// FunctionHash is a function's key in the run functions and function
// timelines tables: xxhash64 of name + "\x00" + module of its identity
// (profile.FrameIdentity), as FrameHash's, so that two modules' functions
// of one name are two functions over time, and one function is one at any
// path (the program's process frame, whatever its name, is one). 0 is the
// runs' totals row, which no identity is expected to hash to. Rows of
// FunctionsVersion below 2 hold xxhash64 of the name alone.
func FunctionHash(name, module string) uint64 {
	return identityHash(profile.FrameIdentity(name, module))
}

// FunctionsVersion is what an ingest writes in the runs table's
// functions_summed and the function tables' key_version: 2 says their
// rows are keyed by FunctionHash. Runs ingested before (1, name-keyed
// rows; 0, none) are read from their stacks until migrate writes rows of
// this version for them (docs/SCHEMA.md).
const FunctionsVersion = 2

var functionsVersionSQL = strconv.Itoa(FunctionsVersion) // in a query

func identityHash(id profile.Identity) uint64 {
	d := xxhash.New()
	_, _ = d.WriteString(id.Name)
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(id.Module)
	return d.Sum64()
}

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
