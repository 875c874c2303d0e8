package storage

import (
	"context"
	"fmt"
)

// Timeline reads the samples per time bucket: visit gets each (group,
// stack, bucket) value of each run of the group, buckets numbered
// 0..TimeBuckets-1 within each run (see Run.BucketNs for what a bucket
// spans; the column is time_frame); a group's values of one stack and
// bucket may come in several rows: add them up. Nothing is summed in
// ClickHouse (the sample rows of a run are its sums per stack and bucket
// already), and the groups are read as StackValues' runs are (see
// reads): only a group with more rows than Options.MaxRows on its own
// fails, with ErrTooManyRows.
func (s *Store) Timeline(ctx context.Context, groups [][]Run,
	visit func(group int, stackHash uint64, bucket int, value int64) error) error {
	rows := func(r Run) uint64 { // a run's sample rows at most
		return min(r.Samples, r.Stacks*uint64(max(1, r.Buckets))) // #nosec G115 -- a small positive count
	}
	if len(groups) == 0 {
		return fmt.Errorf("read timeline: %w", ErrNoRuns)
	}
	// a group's rows may come in several reads: they add up
	return s.eachRead(groups, rows, "read timeline", func(read []int, g *grouping) error {
		key, args := g.keyExpr()
		q := "SELECT " + key + " AS k, stack_hash, time_frame, value FROM " + s.q.samples +
			" WHERE app = ? AND ingest_id IN ? LIMIT ?"
		var hash uint64
		var frame uint8
		var value int64
		return s.scanRows(ctx, "read timeline", q, append(args, g.app, groupSet(g.ids)), []any{&hash, &frame, &value},
			func(k uint32) error {
				for _, gi := range g.keys[k] {
					if err := visit(read[gi], hash, int(frame), value); err != nil {
						return err
					}
				}
				return nil
			})
	})
}
