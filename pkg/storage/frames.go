package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// DefaultSearchLimit is the number of names SearchFunctions returns when
// its limit is 0; MaxSearchLimit is the most it returns.
const (
	DefaultSearchLimit = 100
	MaxSearchLimit     = 10_000
)

// SearchFunctions returns up to limit distinct frame names of app that
// contain q, case-insensitively (UTF-8 aware), sorted. q is a plain
// substring: % and _ have no special meaning; an empty q matches every
// name. Names come from the stacks of the app's visible runs only: not
// from replaced, deleted or uncommitted ingests. limit 0 means
// DefaultSearchLimit; above MaxSearchLimit or negative is an error.
func (s *Store) SearchFunctions(ctx context.Context, app, q string, limit int) ([]string, error) {
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if limit < 0 || limit > MaxSearchLimit {
		return nil, fmt.Errorf("search functions: limit %d outside 1..%d", limit, MaxSearchLimit)
	}
	in := s.in(ctx)
	committed := "SELECT arrayJoin(frame_hashes) FROM " + s.q.stacks + " WHERE app = ? AND stack_hash " + in +
		" (SELECT stack_hash FROM " + s.q.runStacks + " WHERE app = ? AND ingest_id " + in + " (" + s.visible(ctx) + "))"
	rows, err := s.conn.Query(ctx, "SELECT name FROM "+s.q.frames+" WHERE app = ? AND positionCaseInsensitiveUTF8(name, ?) > 0"+
		" AND frame_hash "+in+" ("+committed+") GROUP BY name ORDER BY name LIMIT ?", app, q, app, app, app, app, limit)
	if err != nil {
		return nil, fmt.Errorf("search functions: %w", err)
	}
	return collect(rows, "search functions", func(scan func(...any) error) (string, error) {
		var n string
		return n, scan(&n)
	})
}

// Frame is one frame of a stack read back from storage.
type Frame struct {
	Hash   uint64 // FrameHash(Name, Module, Inlined): a stable key for caching
	Name   string
	Module string
	// File and Line locate the function's source ("" and 0: unknown).
	File string
	Line int64
	// Inlined: its caller inlined the call (profile.Frame.Inlined).
	Inlined bool
}

// ErrMissingFrame means a stack refers to a frame the frames table lacks:
// the tables were changed by hand or an ingest was cut short in a way
// Write never leaves behind.
var ErrMissingFrame = errors.New("stack refers to a missing frame")

// Frames calls visit with the text of each frame of app among hashes
// (sent as an external table), once per frame.
func (s *Store) Frames(ctx context.Context, app string, hashes []uint64, visit func(Frame) error) error {
	if len(hashes) == 0 {
		return nil
	}
	t, err := hashTable("_frame_hashes", hashes)
	if err != nil {
		return fmt.Errorf("read frames: %w", err)
	}
	rows, err := s.conn.Query(clickhouse.Context(ctx, clickhouse.WithExternalTable(t)),
		"SELECT frame_hash, any(name), any(module), anyIf(file, file != ''), anyIf(line, file != ''), max(inlined) FROM "+s.q.frames+
			" WHERE app = ? AND frame_hash "+s.in(ctx)+" _frame_hashes GROUP BY frame_hash", app)
	if err != nil {
		return fmt.Errorf("read frames: %w", err)
	}
	_, err = collect(rows, "read frames", func(scan func(...any) error) (struct{}, error) {
		var f Frame
		var inlined uint8
		if err := scan(&f.Hash, &f.Name, &f.Module, &f.File, &f.Line, &inlined); err != nil {
			return struct{}{}, err
		}
		f.Inlined = inlined != 0
		return struct{}{}, visit(f)
	})
	return err
}
