package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// RunFunctionValues calls visit with each run's inclusive sum of each of
// its functions (FunctionHash; each stack holding the function counted
// once), run being the index in runs, from the run functions table: about
// a tenth of the rows RunStackValues reads for the same sums. It reads
// nothing and returns false when some run has no such rows (an ingest
// written before the table existed that migrate has not filled in yet):
// the caller then sums the run stacks itself.
func (s *Store) RunFunctionValues(ctx context.Context, runs []Run, visit func(run int, function uint64, value int64) error) (bool, error) {
	ok, err := s.functionsSummed(ctx, runs)
	if err != nil || !ok {
		return false, err
	}
	groups := make([][]Run, len(runs))
	for i, r := range runs {
		groups[i] = []Run{r}
	}
	// A run has at most as many functions as frames; its stacks bound
	// them closely enough to split the reads by.
	for _, read := range s.reads(groups, func(r Run) uint64 { return max(r.Stacks, 1) }) {
		g, err := newGrouping(pick(groups, read))
		if err != nil {
			return false, fmt.Errorf("read function values: %w", err)
		}
		key, args := g.keyExpr()
		q := "SELECT " + key + " AS k, function_hash, value FROM " + s.q.runFunctions +
			" WHERE app = ? AND ingest_id IN ? AND function_hash != 0 LIMIT ?"
		var hash uint64
		var value int64
		err = s.scanRows(ctx, "read function values", q, append(args, g.app, groupSet(g.ids)), []any{&hash, &value},
			func(k uint32) error {
				for _, gi := range g.keys[k] {
					if err := visit(read[gi], hash, value); err != nil {
						return err
					}
				}
				return nil
			})
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// functionsSummed reports whether every run has its run functions rows:
// those that say so (Run.FunctionsSummed), and the others when migrate
// has written their totals row (hash 0, written with the rest).
func (s *Store) functionsSummed(ctx context.Context, runs []Run) (bool, error) {
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
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT uniqExact(ingest_id) FROM "+s.q.runFunctions+
		" WHERE app = ? AND ingest_id IN ? AND function_hash = 0", runs[0].App, groupSet(ids)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read function values: %w", err)
	}
	return n == uint64(len(ids)), nil
}

// backfillRunFunctions writes the run functions rows of the visible
// ingests that have none: those written before the table existed. They
// are summed here from the ingests' stack sums and texts (ClickHouse 18.16
// cannot hash frame names as FunctionHash does), a few runs at a time, and
// each run's rows go in one INSERT with the others of its batch, so its
// totals row never stands without the rest. Finding them reads the runs
// table and the totals rows only, so a migrate with nothing to do stays
// cheap. Run one migrate at a time (as for the run stacks).
func (s *Store) backfillRunFunctions(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, "SELECT app, ingest_id, any(stacks), any(stacks_summed) FROM "+s.q.runs+" WHERE deleted = 0"+
		" AND ingest_id "+s.in(ctx)+" (SELECT argMax(ingest_id, committed_ns) FROM "+s.q.runs+" GROUP BY app, build, run)"+
		" AND ingest_id "+s.notIn(ctx)+" (SELECT ingest_id FROM "+s.q.runFunctions+" WHERE function_hash = 0)"+
		" GROUP BY app, ingest_id ORDER BY app, ingest_id")
	if err != nil {
		return fmt.Errorf("find ingests without function sums: %w", err)
	}
	runs, err := collect(rows, "find ingests without function sums", func(scan func(...any) error) (Run, error) {
		var r Run
		var summed uint8
		err := scan(&r.App, &r.IngestID, &r.Stacks, &summed)
		r.StacksSummed = summed == 1
		return r, err
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

// sumFunctions writes the run functions rows of runs (of one app) from
// their stack sums.
func (s *Store) sumFunctions(ctx context.Context, runs []Run) error {
	functions := map[uint64][]uint64{} // stack -> its distinct function hashes
	err := s.Stacks(ctx, runs, func(stack uint64, frames []Frame) error {
		var fs []uint64
		for _, f := range frames {
			if h := FunctionHash(f.Name); !slices.Contains(fs, h) {
				fs = append(fs, h)
			}
		}
		functions[stack] = fs
		return nil
	})
	if err != nil {
		return err
	}
	sums := make([]map[uint64]int64, len(runs)) // per run; 0 is the total
	for i := range sums {
		sums[i] = map[uint64]int64{0: 0}
	}
	err = s.RunStackValues(ctx, runs, func(run int, stack uint64, value int64) error {
		fs, ok := functions[stack]
		if !ok {
			return fmt.Errorf("%w: stack %x has samples but no text", ErrMissingFrame, stack)
		}
		sums[run][0] += value
		for _, f := range fs {
			sums[run][f] += value
		}
		return nil
	})
	if err != nil {
		return err
	}
	var apps []string
	var ids, hashes []uint64
	var values []int64
	for i, r := range runs {
		for h, v := range sums[i] {
			apps, ids, hashes, values = append(apps, r.App), append(ids, r.IngestID), append(hashes, h), append(values, v)
		}
	}
	return s.insertBatches(ctx, s.q.runFunctions, &runFunctionsSchema, len(ids), len(ids), nil, func(b driver.Batch, lo, hi int) error {
		return appendColumns(b, apps[lo:hi], ids[lo:hi], hashes[lo:hi], values[lo:hi])
	})
}
