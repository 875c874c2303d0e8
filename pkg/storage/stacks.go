package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"

	"github.com/flamediff/flamediff/pkg/internal/hashindex"
)

// stackTexts calls visit once for every distinct stack in the samples of runs,
// with its frames root first (RunStackFrames, then Frames). The frames
// slice is reused between calls: copy what you keep.
func (s *Store) stackTexts(ctx context.Context, runs []Run, visit func(stackHash uint64, frames []Frame) error) error {
	var set StackSet
	if err := s.RunStackFrames(ctx, runs, set.Add); err != nil {
		return err
	}
	if len(set.Hashes) == 0 {
		return nil
	}
	text := make([]Frame, len(set.FrameHashes))
	found := make([]bool, len(set.FrameHashes))
	if err := s.Frames(ctx, runs[0].App, set.FrameHashes, func(f Frame) error {
		if i, ok := set.frameAt(f.Hash); ok {
			text[i], found[i] = f, true
		}
		return nil
	}); err != nil {
		return err
	}
	var stack []Frame
	seen := hashindex.NewSet(len(set.Hashes))
	for i, hash := range set.Hashes {
		if !seen.Add(hash) { // a copy (see RunStackFrames)
			continue
		}
		stack = stack[:0]
		for _, f := range set.Frames[i] {
			if !found[f] {
				return fmt.Errorf("read stacks: stack %x: %w %x", hash, ErrMissingFrame, set.FrameHashes[f])
			}
			stack = append(stack, text[f])
		}
		if err := visit(hash, stack); err != nil {
			return err
		}
	}
	return nil
}

// RunStackFrames calls visit for every distinct stack in the samples of
// runs, with its frame hashes root first. The stacks are selected by a
// subquery over the runs' stack lists (the run stacks table; no hash list
// sent). The frames slice is reused between calls.
//
// A stack may come twice: the stacks table holds a stack twice when two
// ingests at once both wrote it (or when older versions wrote it, which
// wrote every stack of every ingest) until ClickHouse merges their parts.
// Callers drop the copies where it matters (a sorted list of hashes
// shows them side by side), which costs less than a set of every hash
// read, and much less than a LIMIT 1 BY on the server (0.15 s of its CPU
// per 500k stacks on merged parts).
func (s *Store) RunStackFrames(ctx context.Context, runs []Run, visit func(stackHash uint64, frames []uint64) error) error {
	g, err := newGrouping([][]Run{runs})
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	t, err := hashTable("_ingest_ids", g.ids) // any number of runs in one query
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	in := s.in(ctx)
	return s.readStacks(ctx, "stack_hash "+in+" (SELECT stack_hash FROM "+s.q.runStacks+" WHERE app = ? AND ingest_id "+in+" _ingest_ids)",
		[]any{g.app, g.app}, t, visit)
}

// AppStackCount is the number of rows the stacks table holds for app:
// its stacks, and copies not merged yet (see RunStackFrames).
func (s *Store) AppStackCount(ctx context.Context, app string) (uint64, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.q.stacks+" WHERE app = ?", app).Scan(&n); err != nil {
		return 0, fmt.Errorf("count stacks: %w", err)
	}
	return n, nil
}

// AppStackFrames is RunStackFrames for every stack of app.
func (s *Store) AppStackFrames(ctx context.Context, app string, visit func(stackHash uint64, frames []uint64) error) error {
	return s.readStacks(ctx, "", []any{app}, nil, visit)
}

// StackFrames calls visit with the frame hashes (root first) of each
// stack of app among hashes (a stack may come twice, as in
// RunStackFrames); a hash the stacks table does not hold is skipped. The
// hashes travel as an external table, so the lookup is one query whatever
// their number, and the frames slice is reused between calls.
func (s *Store) StackFrames(ctx context.Context, app string, hashes []uint64, visit func(stackHash uint64, frames []uint64) error) error {
	if len(hashes) == 0 {
		return nil
	}
	t, err := hashTable("_stack_hashes", hashes)
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	return s.readStacks(ctx, "stack_hash "+s.in(ctx)+" _stack_hashes", []any{app}, t, visit)
}

// packFrames renders a stack's frame hashes as the stacks table stores
// them for reading: frameBytes holds 8 little-endian bytes per hash, each
// with its top bit set, and frameTops says which of them have it ('1') or
// not ('0'). clickhouse-go decodes an Array(UInt64) row by reflection,
// one element at a time, which costs several times what the server spends
// on the whole read; a String is one copy. frameBytesSQL and frameTopsSQL
// compute the same from frame_hashes on the server, where
// reinterpretAsString drops a number's trailing zero bytes (a set top bit
// leaves none).
func packFrames(frames []uint64) (frameBytes, frameTops string) {
	b := make([]byte, 8*len(frames))
	tops := make([]byte, len(frames))
	for i, h := range frames {
		binary.LittleEndian.PutUint64(b[8*i:], h|1<<63)
		tops[i] = '0'
		if h >= 1<<63 {
			tops[i] = '1'
		}
	}
	return string(b), string(tops)
}

const (
	frameBytesSQL = "arrayStringConcat(arrayMap(h -> reinterpretAsString(bitOr(h, 9223372036854775808)), frame_hashes))"
	frameTopsSQL  = "arrayStringConcat(arrayMap(h -> if(h >= 9223372036854775808, '1', '0'), frame_hashes))"
)

// readStacks reads the stack rows of app that match where (all: ""), passing ext
// along as external data. The frames slice is reused.
func (s *Store) readStacks(ctx context.Context, where string, args []any, ext *ext.Table, row func(hash uint64, frames []uint64) error) error {
	if ext != nil {
		ctx = clickhouse.Context(ctx, clickhouse.WithExternalTable(ext))
	}
	if where != "" {
		where = " AND " + where
	}
	rows, err := s.conn.Query(ctx, "SELECT stack_hash, frame_bytes, frame_tops FROM "+s.q.stacks+" WHERE app = ?"+where, args...)
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	var hash uint64
	var raw, tops []byte
	var frames []uint64
	_, err = collect(rows, "read stacks", func(scan func(...any) error) (struct{}, error) {
		if err := scan(&hash, &raw, &tops); err != nil {
			return struct{}{}, err
		}
		if len(raw) != 8*len(tops) {
			return struct{}{}, fmt.Errorf("stack %x: %d bytes for %d frame hashes", hash, len(raw), len(tops))
		}
		frames = frames[:0]
		for i, top := range tops {
			h := binary.LittleEndian.Uint64(raw[8*i:])
			if top != '1' {
				h &^= 1 << 63
			}
			frames = append(frames, h)
		}
		return struct{}{}, row(hash, frames)
	})
	return err
}

// StackSet collects stacks read from storage (RunStackFrames,
// StackFrames) with their frames numbered in order of first appearance,
// so that each distinct frame is looked up once however many stacks use
// it. A stack read twice is in it twice, with the same frames.
type StackSet struct {
	Hashes []uint64
	// Frames[i] lists the frames of stack Hashes[i], root first, as
	// indexes into FrameHashes. Callers may renumber them in place.
	Frames      [][]uint32
	FrameHashes []uint64
	// Refs is the number of frame references of all stacks.
	Refs int

	frameIndex hashindex.Index // of FrameHashes
	buf        []uint32
	chunks     [][]uint32
}

// Reserve makes room for n stacks.
func (s *StackSet) Reserve(n int) {
	s.Hashes = slices.Grow(s.Hashes, n)
	s.Frames = slices.Grow(s.Frames, n)
}

// frameAt returns the place of a frame hash in FrameHashes.
func (s *StackSet) frameAt(hash uint64) (uint32, bool) {
	return s.frameIndex.Get(hash, s.FrameHashes)
}

// setChunk is the size of the blocks stack frame lists are carved from:
// sets hold millions of stacks, and one allocation each would dominate.
const setChunk = 1 << 16

// Add adds one stack; it fits the visit argument of the readers.
func (s *StackSet) Add(hash uint64, frames []uint64) error {
	if s.FrameHashes == nil { // sized for a program's functions at once
		s.frameIndex = hashindex.New(1 << 10)
	}
	s.buf = s.buf[:0]
	for _, h := range frames {
		i, ok := s.frameAt(h)
		if !ok {
			i = uint32(len(s.FrameHashes)) // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
			s.FrameHashes = append(s.FrameHashes, h)
			s.frameIndex.Put(h, i, s.FrameHashes)
		}
		s.buf = append(s.buf, i)
	}
	n := len(s.chunks)
	if n == 0 || cap(s.chunks[n-1])-len(s.chunks[n-1]) < len(s.buf) {
		s.chunks = append(s.chunks, make([]uint32, 0, max(setChunk, len(s.buf))))
		n++
	}
	c := s.chunks[n-1]
	start := len(c)
	c = append(c, s.buf...)
	s.chunks[n-1] = c
	s.Hashes = append(s.Hashes, hash)
	s.Frames = append(s.Frames, c[start:len(c):len(c)])
	s.Refs += len(s.buf)
	return nil
}
