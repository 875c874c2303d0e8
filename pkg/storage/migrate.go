package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// backfillFunctions writes the run functions and function timelines rows
// of the visible ingests that have no run functions totals row of
// FunctionsVersion: those written before the tables existed, or with
// rows keyed by name (which stay, unread). They are summed here from the
// ingests' samples and stack texts (ClickHouse 18.16 cannot hash frame
// names as FunctionHash does), a few runs at a time, each table's rows of
// a batch in one INSERT, timelines first: the totals row says both are
// whole, and timelines an earlier migrate wrote before it stopped are not
// written twice. Finding them reads the runs table and the totals rows
// only, so a migrate with nothing to do stays cheap. Run one migrate at a
// time (as for the run stacks).
func (s *Store) backfillFunctions(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, "SELECT app, ingest_id, any(samples), any(stacks) FROM "+s.q.runs+" WHERE deleted = 0"+
		" AND ingest_id "+s.in(ctx)+" (SELECT argMax(ingest_id, committed_ns) FROM "+s.q.runs+" GROUP BY app, build, run)"+
		" AND ingest_id "+s.notIn(ctx)+" (SELECT ingest_id FROM "+s.q.runFunctions+" WHERE function_hash = 0 AND key_version = "+functionsVersionSQL+")"+
		" GROUP BY app, ingest_id ORDER BY app, ingest_id")
	if err != nil {
		return fmt.Errorf("find ingests without function sums: %w", err)
	}
	runs, err := collect(rows, "find ingests without function sums", func(scan func(...any) error) (Run, error) {
		r := Run{Buckets: TimeBuckets}
		return r, scan(&r.App, &r.IngestID, &r.Samples, &r.Stacks)
	})
	if err != nil {
		return err
	}
	const batch = 64
	for lo := 0; lo < len(runs); {
		hi := lo + 1
		for hi < len(runs) && hi-lo < batch && runs[hi].App == runs[lo].App {
			hi++
		}
		if err := s.sumFunctions(ctx, runs[lo:hi]); err != nil {
			return fmt.Errorf("sum the functions of %d earlier ingests of %q: %w", hi-lo, runs[lo].App, err)
		}
		lo = hi
	}
	return nil
}

// sumFunctions writes the function rows of runs (of one app) from their
// samples.
func (s *Store) sumFunctions(ctx context.Context, runs []Run) error {
	functions := map[uint64][]uint64{} // stack -> its distinct function hashes
	err := s.stackTexts(ctx, runs, func(stack uint64, frames []Frame) error {
		var fs []uint64
		for _, f := range frames {
			if h := FunctionHash(f.Name, f.Module); !slices.Contains(fs, h) {
				fs = append(fs, h)
			}
		}
		functions[stack] = fs
		return nil
	})
	if err != nil {
		return err
	}
	sums := make([]*functionSums, len(runs))
	ids := make([]map[uint64][]int32, len(runs)) // per run: stack -> function ids
	for i := range runs {
		sums[i], ids[i] = newFunctionSums(), map[uint64][]int32{}
	}
	err = s.Timeline(ctx, EachRun(runs), func(run int, stack uint64, bucket int, value int64) error {
		of, ok := ids[run][stack]
		if !ok {
			fs, known := functions[stack]
			if !known {
				return fmt.Errorf("%w: stack %x has samples but no text", ErrMissingFrame, stack)
			}
			for _, h := range fs {
				of = append(of, sums[run].id(h))
			}
			ids[run][stack] = of
		}
		sums[run].add(of, uint8(bucket), value) // #nosec G115 -- a time_frame column value
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range sums {
		f.done()
	}
	written, err := s.timelinesWritten(ctx, runs)
	if err != nil {
		return err
	}
	var timelines, whole timelineColumns
	for i, r := range runs {
		if !written[r.IngestID] {
			sums[i].appendTimeline(&timelines, r.App, r.IngestID, 0, sums[i].timelineRows())
		}
		sums[i].appendWhole(&whole, r.App, r.IngestID, 0, len(sums[i].hash))
	}
	err = s.insertBatches(ctx, s.q.functionTimelines, &functionTimelinesSchema, len(timelines.ids), max(1, len(timelines.ids)), nil,
		func(b driver.Batch, _, _ int) error {
			return timelines.writeTimelines(b)
		})
	if err != nil {
		return err
	}
	return s.insertBatches(ctx, s.q.runFunctions, &runFunctionsSchema, len(whole.ids), max(1, len(whole.ids)), nil,
		func(b driver.Batch, _, _ int) error {
			return whole.writeWhole(b)
		})
}

// timelinesWritten returns which of runs have function timelines rows.
func (s *Store) timelinesWritten(ctx context.Context, runs []Run) (map[uint64]bool, error) {
	ids := make([]uint64, len(runs))
	for i, r := range runs {
		ids[i] = r.IngestID
	}
	written := map[uint64]bool{}
	for _, part := range idLists(ids) {
		rows, err := s.conn.Query(ctx, "SELECT DISTINCT ingest_id FROM "+s.q.functionTimelines+
			" WHERE app = ? AND function_hash = 0 AND key_version = "+functionsVersionSQL+" AND ingest_id IN ?", runs[0].App, groupSet(part))
		if err != nil {
			return nil, fmt.Errorf("find written timelines: %w", err)
		}
		_, err = collect(rows, "find written timelines", func(scan func(...any) error) (struct{}, error) {
			var id uint64
			err := scan(&id)
			written[id] = true
			return struct{}{}, err
		})
		if err != nil {
			return nil, err
		}
	}
	return written, nil
}

// Migrate creates the database named in the connection options (if any)
// and every missing table, adds the columns an existing table lacks (an
// upgrade), and fills in the run stacks rows of visible ingests written
// before their columns existed. It is idempotent; CheckTables reports what
// it could not fix.
func (s *Store) Migrate(ctx context.Context) error {
	if db := s.opts.Auth.Database; db != "" {
		// The main connection cannot open before its database exists.
		q, _ := quoteIdent(db) // checked by Open
		err := withoutDatabase(s.opts, func(conn driver.Conn) error { return conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+q) })
		if err != nil {
			return fmt.Errorf("migrate: create database %s: %w", db, err)
		}
	}
	ddl, err := s.tables.DDL()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, stmt := range ddl {
		if err := s.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: %s: %w", strings.SplitN(stmt, "(", 2)[0], err)
		}
	}
	var current string
	if err := s.conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := addMissingColumns(ctx, s.conn, s.tableRefs(current)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.backfillRunStacks(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.backfillFunctions(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// backfillRunStacks writes the run stacks rows (stack sums) of the visible
// ingests that have none with sums: those written before the table or its
// sum columns existed, or by an older CLI since. Finding them reads only
// the runs table and two columns of run stacks, so a migrate with nothing
// to do stays cheap. The rows listed without sums stay; readers skip them.
// Run one migrate at a time: two at once may both fill an ingest in, and
// readers then take that ingest from the samples (they check the number
// of rows against the run's stack count).
func (s *Store) backfillRunStacks(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, "SELECT ingest_id FROM "+s.q.runs+" WHERE deleted = 0"+
		" AND ingest_id "+s.in(ctx)+" (SELECT argMax(ingest_id, committed_ns) FROM "+s.q.runs+" GROUP BY app, build, run)"+
		" AND ingest_id "+s.notIn(ctx)+" (SELECT ingest_id FROM "+s.q.runStacks+" WHERE first_seen != "+unsummedSQL+")"+
		" GROUP BY ingest_id")
	if err != nil {
		return fmt.Errorf("find ingests without stack sums: %w", err)
	}
	ids, err := collect(rows, "find ingests without stack sums", func(scan func(...any) error) (uint64, error) {
		var id uint64
		err := scan(&id)
		return id, err
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	for _, part := range idLists(ids) {
		err = s.conn.Exec(syncInserts(ctx), "INSERT INTO "+s.q.runStacks+" ("+runStacksSchema.columnList()+
			") SELECT app, ingest_id, stack_hash, sum(value), min(first_seen) FROM "+
			s.q.samples+" WHERE ingest_id IN ? GROUP BY app, ingest_id, stack_hash", groupSet(part))
		if err != nil {
			return fmt.Errorf("sum the stacks of %d earlier ingests: %w", len(ids), err)
		}
	}
	return nil
}
