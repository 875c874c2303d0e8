package storage

import (
	"context"
	"fmt"
)

// RunFunctionValues calls visit with each run's inclusive sum of each of
// its functions (FunctionHash; each stack holding the function counted
// once), run being the index in runs, from the run functions table: about
// a tenth of the rows RunStackValues reads for the same sums. It reads
// nothing and returns false when some run has no such rows (an ingest
// written before the table existed that migrate has not filled in yet):
// the caller then sums the run stacks itself. functions bounds the
// functions of a run (the selection's: its stacks' distinct names), which
// splits the reads to Options.MaxRows.
func (s *Store) RunFunctionValues(ctx context.Context, runs []Run, functions int,
	visit func(run int, function uint64, value int64) error) (bool, error) {
	ok, err := s.FunctionsSummed(ctx, runs)
	if err != nil || !ok {
		return false, err
	}
	groups := EachRun(runs)
	perRun := uint64(max(functions, 1)) // #nosec G115 -- a positive count
	err = s.eachRead(groups, func(Run) uint64 { return perRun }, "read function values", func(read []int, g *grouping) error {
		key, args := g.keyExpr()
		q := "SELECT " + key + " AS k, function_hash, value FROM " + s.q.runFunctions +
			" WHERE app = ? AND ingest_id IN ? AND function_hash != 0 AND key_version = " + functionsVersionSQL + " LIMIT ?"
		var hash uint64
		var value int64
		return s.scanRows(ctx, "read function values", q, append(args, g.app, groupSet(g.ids)), []any{&hash, &value},
			func(k uint32) error {
				for _, gi := range g.keys[k] {
					if err := visit(read[gi], hash, value); err != nil {
						return err
					}
				}
				return nil
			})
	})
	return err == nil, err
}

// FunctionsSummed reports whether every run has its run functions and
// function timelines rows of FunctionsVersion: those that say so
// (Run.FunctionsSummed), and the others when migrate has written their
// totals row (hash 0, written after the rest).
func (s *Store) FunctionsSummed(ctx context.Context, runs []Run) (bool, error) {
	if len(runs) == 0 {
		return false, fmt.Errorf("read function values: %w", ErrNoRuns)
	}
	check := map[uint64]bool{}
	for _, r := range runs {
		if !r.FunctionsSummed {
			check[r.IngestID] = true
		}
	}
	if len(check) == 0 {
		return true, nil
	}
	ids := make([]uint64, 0, len(check))
	for id := range check {
		ids = append(ids, id)
	}
	var total uint64
	for _, part := range idLists(ids) { // disjoint: their counts add up
		var n uint64
		err := s.conn.QueryRow(ctx, "SELECT uniqExact(ingest_id) FROM "+s.q.runFunctions+
			" WHERE app = ? AND ingest_id IN ? AND function_hash = 0 AND key_version = "+functionsVersionSQL, runs[0].App, groupSet(part)).Scan(&n)
		if err != nil {
			return false, fmt.Errorf("read function values: %w", err)
		}
		total += n
	}
	return total == uint64(len(ids)), nil
}
