package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// GCResult says what GC removed.
type GCResult struct {
	// Superseded counts the ingests whose rows were removed because a
	// newer ingest of their run, or its deletion, committed before the
	// grace period.
	Superseded int
	// Uncommitted counts the ingests that never committed (killed or
	// failed) and wrote nothing within the grace period.
	Uncommitted int
	// SampleRows is the number of sample rows removed.
	SampleRows uint64
}

// GC deletes the rows no reader can see and waits until the server has
// removed them:
//   - the samples and stack lists of superseded ingests (a newer ingest of
//     the run, or a deletion, committed more than grace ago) and their
//     runs rows; the newest runs row of every run stays, so versions keep
//     growing and a deleted run stays deleted;
//   - the samples and stack lists of ingests that never committed, unless
//     a part holding any of their rows is younger than grace (a running
//     ingest writes new parts, and a merge or mutation only makes a part
//     younger).
//
// So that readers and ingests stay safe, grace must exceed the longest
// ingest and the longest query. Rows are removed with ALTER TABLE ...
// DELETE, the one way both 18.16 and current servers delete rows of a
// MergeTree; frames and stacks are shared between ingests and stay. On a
// cluster, parts, mutations and deletions are those of each host's local
// tables (a Distributed table has none).
func (s *Store) GC(ctx context.Context, grace time.Duration) (GCResult, error) {
	var res GCResult
	superseded, runRows, err := s.supersededIngests(ctx, grace)
	if err != nil {
		return res, fmt.Errorf("gc: %w", err)
	}
	res.Superseded = len(superseded)
	uncommitted := map[uint64]bool{}
	garbage := map[string][]uint64{}
	for _, t := range []string{s.tables.Samples, s.tables.RunStacks, s.tables.RunFunctions, s.tables.FunctionTimelines} {
		err := s.eachStored(ctx, t, func(st storedTable) error {
			ids, err := s.uncommittedIngests(ctx, st, grace)
			for _, id := range ids {
				uncommitted[id] = true
			}
			garbage[t] = append(garbage[t], ids...)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("gc: %w", err)
		}
		garbage[t] = append(garbage[t], superseded...)
	}
	res.Uncommitted = len(uncommitted)
	if res.SampleRows, err = s.countIngestRows(ctx, garbage[s.tables.Samples]); err != nil {
		return res, fmt.Errorf("gc: %w", err)
	}
	// Samples before runs rows: if gc stops midway, what is left is still
	// found by the next run.
	garbage[s.tables.Runs] = runRows
	for _, t := range []string{s.tables.Samples, s.tables.RunStacks, s.tables.RunFunctions, s.tables.FunctionTimelines, s.tables.Runs} {
		err := s.eachStored(ctx, t, func(st storedTable) error { return s.deleteIngests(ctx, st, garbage[t]) })
		if err != nil {
			return res, fmt.Errorf("gc: %w", err)
		}
	}
	return res, nil
}

// supersededIngests returns the ingest ids no reader can see any more
// (every ingest of a run but its newest; all of them when the newest is a
// deletion), and the runs rows to delete with them (all but the newest),
// for runs whose newest commit is older than grace.
func (s *Store) supersededIngests(ctx context.Context, grace time.Duration) (ingests, runRows []uint64, err error) {
	cutoff := unixNanos(time.Now().Add(-grace))
	rows, err := s.conn.Query(ctx, "SELECT argMax(ingest_id, committed_ns), groupArray(ingest_id) FROM "+
		s.q.runs+" GROUP BY app, build, run HAVING count() > 1 AND max(committed_ns) <= ?", cutoff)
	if err != nil {
		return nil, nil, fmt.Errorf("find superseded ingests: %w", err)
	}
	type run struct {
		latest uint64
		ids    []uint64
	}
	runs, err := collect(rows, "find superseded ingests", func(scan func(...any) error) (run, error) {
		var r run
		return r, scan(&r.latest, &r.ids)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, r := range runs {
		for _, id := range r.ids {
			if id != r.latest {
				ingests = append(ingests, id)
				runRows = append(runRows, id)
			}
		}
	}
	return ingests, runRows, nil
}

// uncommittedIngests returns the ingest ids of a table (samples or run
// stacks) that no runs row names and whose rows all lie in parts older
// than grace. The ids are read first, then the old parts: a part merged
// meanwhile has a new name, is not among them and so counts as young.
func (s *Store) uncommittedIngests(ctx context.Context, st storedTable, grace time.Duration) ([]uint64, error) {
	all, err := ingestIDs(ctx, st.conn, "SELECT ingest_id FROM "+st.quoted+" GROUP BY ingest_id")
	if err != nil || len(all) == 0 {
		return nil, err
	}
	where, args := systemTable(st.name)
	rows, err := st.conn.Query(ctx, "SELECT name FROM system.parts WHERE "+where+" AND active AND modification_time <= now() - ?",
		append(args, int64(grace/time.Second))...)
	if err != nil {
		return nil, fmt.Errorf("list the parts of %s: %w", st.name, err)
	}
	old, err := collect(rows, "list parts", func(scan func(...any) error) (string, error) {
		var p string
		return p, scan(&p)
	})
	if err != nil || len(old) == 0 {
		return nil, err
	}
	young, err := ingestIDs(ctx, st.conn, "SELECT ingest_id FROM "+st.quoted+" WHERE _part NOT IN ? GROUP BY ingest_id", groupSet(old))
	if err != nil {
		return nil, err
	}
	committed, err := ingestIDs(ctx, s.conn, "SELECT ingest_id FROM "+s.q.runs+" GROUP BY ingest_id")
	if err != nil {
		return nil, err
	}
	keep := make(map[uint64]bool, len(young)+len(committed))
	for _, id := range append(young, committed...) {
		keep[id] = true
	}
	var out []uint64
	for _, id := range all {
		if !keep[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func ingestIDs(ctx context.Context, conn driver.Conn, query string, args ...any) ([]uint64, error) {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list ingest ids: %w", err)
	}
	return collect(rows, "list ingest ids", func(scan func(...any) error) (uint64, error) {
		var id uint64
		return id, scan(&id)
	})
}

// countIngestRows counts the sample rows of ingests.
func (s *Store) countIngestRows(ctx context.Context, ids []uint64) (uint64, error) {
	var total uint64
	for _, part := range idLists(ids) {
		var n uint64
		err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.q.samples+" WHERE ingest_id IN ?", groupSet(part)).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("count sample rows: %w", err)
		}
		total += n
	}
	return total, nil
}

// deleteIngests deletes a table's rows of ingests and waits until they are
// gone (mutations run in the background). The ids are literal: 18.16 does
// not finish a mutation whose IN holds a subquery.
func (s *Store) deleteIngests(ctx context.Context, st storedTable, ids []uint64) error {
	for _, part := range idLists(ids) {
		chunk := groupSet(part)
		if err := st.conn.Exec(ctx, "ALTER TABLE "+st.quoted+" DELETE WHERE ingest_id IN ?", chunk); err != nil {
			return fmt.Errorf("delete from %s: %w", st.name, err)
		}
		for {
			var left uint64
			if err := st.conn.QueryRow(ctx, "SELECT count() FROM "+st.quoted+" WHERE ingest_id IN ?", chunk).Scan(&left); err != nil {
				return fmt.Errorf("wait for the deletion from %s: %w", st.name, err)
			}
			if left == 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("wait for the deletion from %s: %w", st.name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// systemTable is the condition that picks a table's rows in system.parts,
// with its arguments; an unqualified name is in the connection's database.
func systemTable(name string) (where string, args []any) {
	if db, table, ok := strings.Cut(name, "."); ok {
		return "database = ? AND table = ?", []any{db, table}
	}
	return "database = currentDatabase() AND table = ?", []any{name}
}
