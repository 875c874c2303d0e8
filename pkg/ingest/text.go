package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/flamediff/flamediff/pkg/profile"
)

// maxLineSize bounds a text line; deeper stacks than this are not real.
const maxLineSize = 16 << 20

// lineScanner yields the lines of a text input with their numbers. Lines end
// at LF; a CR before it is dropped. A NUL byte means the input is binary.
type lineScanner struct {
	sc   *bufio.Scanner
	name string
	line int
	err  error
}

func newLineScanner(r io.Reader, name string) *lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineSize)
	return &lineScanner{sc: sc, name: name}
}

// next returns the next line (valid until the following call) or false at
// the end of the input or on error; see err.
func (s *lineScanner) next() ([]byte, bool) {
	if !s.sc.Scan() {
		switch err := s.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			s.err = lineError(s.name, s.line+1, "line longer than %d bytes", maxLineSize)
		case err != nil:
			s.err = err
		}
		return nil, false
	}
	s.line++
	b := s.sc.Bytes()
	if bytes.IndexByte(b, 0) >= 0 {
		s.err = lineError(s.name, s.line, "binary data in a text profile")
		return nil, false
	}
	return b, true
}

// frameTable interns frames by their bytes without allocating for frames
// already seen; new names are copied, so they do not pin input buffers.
type frameTable struct {
	p   *profile.Profile
	ids map[string]uint32
	key []byte
}

func newFrameTable(p *profile.Profile) *frameTable {
	return &frameTable{p: p, ids: make(map[string]uint32)}
}

func (t *frameTable) id(name, module []byte) uint32 {
	t.key = append(append(append(t.key[:0], name...), 0), module...)
	if id, ok := t.ids[string(t.key)]; ok {
		return id
	}
	id := t.p.Intern(profile.Frame{Name: string(name), Module: string(module)})
	t.ids[string(t.key)] = id
	return id
}

// arena hands out slices carved from large blocks, one allocation per
// block instead of one per slice.
type arena[T any] struct{ block []T }

// stackArena holds stacks, one a sample.
type stackArena = arena[uint32]

// recentStacks holds the stacks made lately, by a hash of their frames:
// samples that repeat a stack (a pprof profile's labelled samples) share
// its frames, at no cost when none repeat.
type recentStacks [1024][]uint32

// get returns a stack of frames: a recent one equal to it, else a copy
// made in arena.
func (r *recentStacks) get(frames []uint32, arena *stackArena) []uint32 {
	h := uint32(2166136261)
	for _, f := range frames {
		h = (h ^ f) * 16777619
	}
	slot := &r[h%uint32(len(r))]
	if !slices.Equal(*slot, frames) {
		*slot = arena.alloc(len(frames))
		copy(*slot, frames)
	}
	return *slot
}

// A block is twice the last, from 4Ki values to 64Ki: a small profile
// costs little.
const firstArenaBlock, arenaBlock = 4 << 10, 64 << 10

func (a *arena[T]) alloc(n int) []T {
	if cap(a.block)-len(a.block) < n {
		size := firstArenaBlock
		if a.block != nil {
			size = min(2*cap(a.block), arenaBlock)
		}
		a.block = make([]T, 0, max(n, size))
	}
	l := len(a.block)
	a.block = a.block[:l+n]
	return a.block[l : l+n : l+n]
}
