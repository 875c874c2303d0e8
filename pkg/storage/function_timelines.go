package storage

import (
	"context"
	"fmt"
	"slices"
)

// FunctionTimeline calls visit with each run's inclusive sum of each of
// functions (FunctionHash) in each time bucket it has a row in, and with
// each bucket's total (function 0), from the function timelines table:
// the rows of those functions only. Take runs that FunctionsSummed
// accepts; the others have no rows.
func (s *Store) FunctionTimeline(ctx context.Context, runs []Run, functions []uint64,
	visit func(run int, function uint64, bucket int, value int64) error) error {
	all, err := newGrouping(EachRun(runs)) // the key is the run
	if err != nil {
		return fmt.Errorf("read function timelines: %w", err)
	}
	for _, g := range all.parts() {
		if err := s.functionTimeline(ctx, g, functions, visit); err != nil {
			return err
		}
	}
	return nil
}

// functionTimeline is FunctionTimeline for the runs of g.
func (s *Store) functionTimeline(ctx context.Context, g *grouping, functions []uint64,
	visit func(run int, function uint64, bucket int, value int64) error) error {
	// The table is ordered by function: reads of a few functions each
	// (as many as Options.MaxRows allows: every run may have every
	// bucket) take disjoint key ranges.
	functions = append([]uint64{0}, functions...)
	perRead := max(1, s.maxRows/(len(g.ids)*TimeBuckets))
	key, keyArgs := g.keyExpr()
	q := "SELECT " + key + " AS k, function_hash, time_frame, value FROM " + s.q.functionTimelines +
		" WHERE app = ? AND function_hash IN ? AND ingest_id IN ? AND key_version = " + functionsVersionSQL + " LIMIT ?"
	var hash uint64
	var bucket uint8
	var value int64
	for lo := 0; lo < len(functions); lo += perRead {
		fs := functions[lo:min(len(functions), lo+perRead)]
		err := s.scanRows(ctx, "read function timelines", q, append(slices.Clone(keyArgs), g.app, groupSet(fs), groupSet(g.ids)),
			[]any{&hash, &bucket, &value}, func(k uint32) error {
				for _, r := range g.keys[k] {
					if err := visit(r, hash, int(bucket), value); err != nil {
						return err
					}
				}
				return nil
			})
		if err != nil {
			return err
		}
	}
	return nil
}
