package storage

import (
	"context"
	"errors"
	"fmt"
)

// Frame is one frame of a stack read back from storage.
type Frame struct {
	Hash   uint64 // FrameHash(Name, Module): a stable key for caching
	Name   string
	Module string
}

// grouping maps the runs of a read to the caller's groups. The server
// groups by a key per ingest id; keys[k] lists the caller's groups that
// key k feeds. When no run is in two groups the key is the group itself,
// so ClickHouse sums each group (far fewer rows than per run).
type grouping struct {
	app  string
	ids  []uint64 // distinct ingest ids
	key  []uint32 // server key of ids[i]
	keys [][]int  // groups per server key
}

func newGrouping(groups [][]Run) (*grouping, error) {
	g := &grouping{}
	groupsOf := map[uint64][]int{}
	for gi, runs := range groups {
		for _, r := range runs {
			if r.IngestID == 0 {
				return nil, fmt.Errorf("run %s/%s/%s has no ingest id (take runs from Store.Runs)", r.App, r.Build, r.Run)
			}
			if g.app == "" {
				g.app = r.App
			} else if r.App != g.app {
				return nil, fmt.Errorf("runs of two apps (%q and %q) in one read", g.app, r.App)
			}
			if _, ok := groupsOf[r.IngestID]; !ok {
				g.ids = append(g.ids, r.IngestID)
			}
			groupsOf[r.IngestID] = append(groupsOf[r.IngestID], gi)
		}
	}
	if len(g.ids) == 0 {
		return nil, ErrNoRuns
	}
	shared := false
	for _, gs := range groupsOf {
		shared = shared || len(gs) > 1
	}
	if shared { // one key per run, fanned out to each of its groups
		for i, id := range g.ids {
			g.key = append(g.key, uint32(i))
			g.keys = append(g.keys, groupsOf[id])
		}
		return g, nil
	}
	for gi := range groups {
		g.keys = append(g.keys, []int{gi})
	}
	for _, id := range g.ids {
		g.key = append(g.key, uint32(groupsOf[id][0]))
	}
	return g, nil
}

// keyExpr is the SQL of the server key, with its bound arguments.
func (g *grouping) keyExpr() (string, []any) {
	return "toUInt32(transform(ingest_id, ?, ?, 0))", []any{g.ids, g.key}
}

// scanRows runs a grouped query and calls row for each result row with
// its server key, failing with ErrTooManyRows past the cap.
func (s *Store) scanRows(ctx context.Context, what, query string, args []any, dest []any, row func(key uint32) error) error {
	rows, err := s.conn.Query(ctx, query, append(args, s.maxRows+1)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var key uint32
	dest = append([]any{&key}, dest...)
	n := 0
	for rows.Next() {
		if n++; n > s.maxRows {
			return fmt.Errorf("%s: %w: more than %d rows; select fewer runs or raise the cap", what, ErrTooManyRows, s.maxRows)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := row(key); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// StackValues sums, in ClickHouse, the samples of each group of runs per
// stack, and calls visit once per (group, stack) with the sum and the
// earliest first-seen key (Profile.FirstSeen) among them. Pass one group
// per run for per-run values, or one group per side of a diff to let the
// server add the runs up. A run may be in several groups. Rows stream in
// no particular order; more than Options.MaxRows of them fail with
// ErrTooManyRows. An error from visit stops the read and is returned.
func (s *Store) StackValues(ctx context.Context, groups [][]Run,
	visit func(group int, stackHash uint64, value int64, firstSeen uint64) error) error {
	g, err := newGrouping(groups)
	if err != nil {
		return fmt.Errorf("read stack values: %w", err)
	}
	key, args := g.keyExpr()
	q := "SELECT " + key + " AS k, stack_hash, sum(value), min(first_seen) FROM " + s.q.samples +
		" WHERE app = ? AND ingest_id IN ? GROUP BY k, stack_hash LIMIT ?"
	var hash, seen uint64
	var value int64
	return s.scanRows(ctx, "read stack values", q, append(args, g.app, groupSet(g.ids)), []any{&hash, &value, &seen},
		func(k uint32) error {
			for _, gi := range g.keys[k] {
				if err := visit(gi, hash, value, seen); err != nil {
					return err
				}
			}
			return nil
		})
}

// Timeline is StackValues per time frame: visit gets each (group, stack,
// time frame) sum, frames numbered 0..TimeFrames-1 within each run (see
// Run.TimeFrameNs for what a frame spans). Same cap and errors.
func (s *Store) Timeline(ctx context.Context, groups [][]Run,
	visit func(group int, stackHash uint64, timeFrame int, value int64) error) error {
	g, err := newGrouping(groups)
	if err != nil {
		return fmt.Errorf("read timeline: %w", err)
	}
	key, args := g.keyExpr()
	q := "SELECT " + key + " AS k, stack_hash, time_frame, sum(value) FROM " + s.q.samples +
		" WHERE app = ? AND ingest_id IN ? GROUP BY k, stack_hash, time_frame LIMIT ?"
	var hash uint64
	var frame uint8
	var value int64
	return s.scanRows(ctx, "read timeline", q, append(args, g.app, groupSet(g.ids)), []any{&hash, &frame, &value},
		func(k uint32) error {
			for _, gi := range g.keys[k] {
				if err := visit(gi, hash, int(frame), value); err != nil {
					return err
				}
			}
			return nil
		})
}

// ErrMissingFrame means a stack refers to a frame the frames table lacks:
// the tables were changed by hand or an ingest was cut short in a way
// Ingest never leaves behind.
var ErrMissingFrame = errors.New("stack refers to a missing frame")

// Stacks calls visit once for every distinct stack in the samples of runs,
// with its frames root first. The stack and frame texts are fetched once
// each, selected by subqueries over the same runs (no hash lists sent),
// the two queries running at once on two connections. The frames slice is
// reused between calls: copy what you keep.
func (s *Store) Stacks(ctx context.Context, runs []Run, visit func(stackHash uint64, frames []Frame) error) error {
	g, err := newGrouping([][]Run{runs})
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	inSamples := "stack_hash " + s.in + " (SELECT stack_hash FROM " + s.q.samples + " WHERE app = ? AND ingest_id IN ?)"
	sampleArgs := []any{g.app, groupSet(g.ids)}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type frameRows struct {
		frames map[uint64]Frame
		err    error
	}
	framesDone := make(chan frameRows, 1)
	go func() {
		frames := map[uint64]Frame{}
		rows, err := s.conn.Query(ctx, "SELECT frame_hash, any(name), any(module) FROM "+s.q.frames+
			" WHERE app = ? AND frame_hash "+s.in+" (SELECT arrayJoin(frame_hashes) FROM "+s.q.stacks+
			" WHERE app = ? AND "+inSamples+") GROUP BY frame_hash", append([]any{g.app, g.app}, sampleArgs...)...)
		if err != nil {
			framesDone <- frameRows{err: fmt.Errorf("read frames: %w", err)}
			return
		}
		_, err = collect(rows, "read frames", func(scan func(...any) error) (struct{}, error) {
			var f Frame
			err := scan(&f.Hash, &f.Name, &f.Module)
			frames[f.Hash] = f
			return struct{}{}, err
		})
		framesDone <- frameRows{frames, err}
	}()

	// Stacks are kept as frame hashes until the frame texts are in. The
	// stacks table may hold a stack twice until ClickHouse merges its
	// parts: duplicates are dropped here, which is much cheaper than a
	// GROUP BY over arrays on the server.
	seen := map[uint64]bool{}
	var stackHashes []uint64
	var frameHashes []uint64
	var ends []int
	rows, err := s.conn.Query(ctx, "SELECT stack_hash, frame_hashes FROM "+s.q.stacks+
		" WHERE app = ? AND "+inSamples, append([]any{g.app}, sampleArgs...)...)
	if err == nil {
		var hash uint64
		var hashes []uint64
		_, err = collect(rows, "read stacks", func(scan func(...any) error) (struct{}, error) {
			err := scan(&hash, &hashes)
			if seen[hash] {
				return struct{}{}, err
			}
			seen[hash] = true
			stackHashes, frameHashes = append(stackHashes, hash), append(frameHashes, hashes...)
			ends = append(ends, len(frameHashes))
			return struct{}{}, err
		})
	} else {
		err = fmt.Errorf("read stacks: %w", err)
	}
	if err != nil {
		cancel()
		<-framesDone
		return err
	}
	fr := <-framesDone
	if fr.err != nil {
		return fr.err
	}
	var stack []Frame
	start := 0
	for i, hash := range stackHashes {
		stack = stack[:0]
		for _, h := range frameHashes[start:ends[i]] {
			f, ok := fr.frames[h]
			if !ok {
				return fmt.Errorf("read stacks: stack %x: %w %x", hash, ErrMissingFrame, h)
			}
			stack = append(stack, f)
		}
		start = ends[i]
		if err := visit(hash, stack); err != nil {
			return err
		}
	}
	return nil
}
