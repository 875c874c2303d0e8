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
// name. Names come from every ingest of the app, replaced or deleted runs
// included. limit 0 means DefaultSearchLimit; above MaxSearchLimit or
// negative is an error.
func (s *Store) SearchFunctions(ctx context.Context, app, q string, limit int) ([]string, error) {
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if limit < 0 || limit > MaxSearchLimit {
		return nil, fmt.Errorf("search functions: limit %d outside 1..%d", limit, MaxSearchLimit)
	}
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT name FROM "+s.q.frames+
		" WHERE app = ? AND positionCaseInsensitiveUTF8(name, ?) > 0 ORDER BY name LIMIT ?", app, q, limit)
	if err != nil {
		return nil, fmt.Errorf("search functions: %w", err)
	}
	return collect(rows, "search functions", func(scan func(...any) error) (string, error) {
		var n string
		return n, scan(&n)
	})
}
