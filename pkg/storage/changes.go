package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/flamediff/flamediff/pkg/changes"
)

// SaveChanges records the source changes of a build (see `flamediff
// changes`). Each call adds a recording; the newest one per build wins.
func (s *Store) SaveChanges(ctx context.Context, app, build string, c changes.Changes) error {
	err := checkText("app", app, true)
	if err == nil {
		err = checkText("build", build, true)
	}
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		err = s.insert(ctx, s.q.changes, &changesSchema, 1, nil, func(b driver.Batch, _, _ int) error {
			return b.Append(app, build, unixNanos(time.Now()), nonNil(c.Modified), nonNil(c.Added), nonNil(c.Removed))
		})
	}
	if err != nil {
		return fmt.Errorf("save changes of %s/%s: %w", app, build, err)
	}
	return nil
}

// Changes returns the newest recorded changes of each of builds (empty:
// every build) of app that has any; builds without changes are absent.
func (s *Store) Changes(ctx context.Context, app string, builds []string) (map[string]changes.Changes, error) {
	q := "SELECT build, argMax(modified, recorded_ns), argMax(added, recorded_ns), argMax(removed, recorded_ns) FROM " +
		s.q.changes + " WHERE app = ?"
	args := []any{app}
	if len(builds) > 0 {
		q += " AND build IN ?"
		args = append(args, groupSet(builds))
	}
	rows, err := s.conn.Query(ctx, q+" GROUP BY build", args...)
	if err != nil {
		return nil, fmt.Errorf("read changes of %q: %w", app, err)
	}
	out := map[string]changes.Changes{}
	_, err = collect(rows, "read changes", func(scan func(...any) error) (struct{}, error) {
		var b string
		var c changes.Changes
		err := scan(&b, &c.Modified, &c.Added, &c.Removed)
		out[b] = c
		return struct{}{}, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
