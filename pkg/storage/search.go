package storage

import (
	"context"
	"fmt"
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
