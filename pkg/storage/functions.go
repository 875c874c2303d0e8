package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
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
			" WHERE app = ? AND ingest_id IN ? AND function_hash != 0 LIMIT ?"
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
// function timelines rows: those that say so (Run.FunctionsSummed), and
// the others when migrate has written their totals row (hash 0, written
// after the rest).
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
			" WHERE app = ? AND ingest_id IN ? AND function_hash = 0", runs[0].App, groupSet(part)).Scan(&n)
		if err != nil {
			return false, fmt.Errorf("read function values: %w", err)
		}
		total += n
	}
	return total == uint64(len(ids)), nil
}

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
		" WHERE app = ? AND function_hash IN ? AND ingest_id IN ? LIMIT ?"
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

// EveryRun is the run StackRuns gives a stack that every run has.
const EveryRun = -1

// StackRuns calls visit with each stack of runs and the runs that have
// it: once with EveryRun for a stack that every run has, else once per
// run (the index in runs) that has it. Runs of the same stack set
// (Run.StackSet: the same stacks, as repeated runs of a deterministic
// workload have) are read once, from one of them, when that halves the
// runs to read at least: a year of builds of the same stacks is 20,000
// rows, not 36.5M. Otherwise ClickHouse counts each stack's runs, so
// that only the stacks some run lacks come back run by run. Duplicate run
// stacks rows (two migrates at once) may make a stack every run has come
// back run by run, never the other way round.
func (s *Store) StackRuns(ctx context.Context, runs []Run, visit func(run int, stack uint64) error) error {
	sets := map[uint64]int{} // stack set -> its place in reps
	var reps []Run
	var members [][]int // per place in reps: its runs
	for i, r := range runs {
		at, ok := sets[r.StackSet]
		if !ok || r.StackSet == 0 {
			at = len(reps)
			reps, members = append(reps, r), append(members, nil)
			if r.StackSet != 0 {
				sets[r.StackSet] = at
			}
		}
		members[at] = append(members[at], i)
	}
	if 2*len(reps) <= len(runs) {
		return s.stackSetRuns(ctx, reps, members, visit)
	}
	g, where, args, ids, err := s.stackPairs(ctx, runs)
	if err != nil {
		return err
	}
	rows, err := s.conn.Query(clickhouse.Context(ctx, clickhouse.WithExternalTable(ids...)),
		"SELECT stack_hash, count() FROM "+where+" GROUP BY stack_hash", args...)
	if err != nil {
		return fmt.Errorf("count stack runs: %w", err)
	}
	var some []uint64
	_, err = collect(rows, "count stack runs", func(scan func(...any) error) (struct{}, error) {
		var stack, n uint64
		if err := scan(&stack, &n); err != nil {
			return struct{}{}, err
		}
		if n == uint64(len(g.ids)) {
			return struct{}{}, visit(EveryRun, stack)
		}
		some = append(some, stack)
		return struct{}{}, nil
	})
	if err != nil || len(some) == 0 {
		return err
	}
	t, err := hashTable("_stack_hashes", some)
	if err != nil {
		return fmt.Errorf("read stack runs: %w", err)
	}
	var stack uint64
	return s.pairRows(clickhouse.Context(ctx, clickhouse.WithExternalTable(append(ids, t)...)), g, where, args,
		"stack_hash "+s.in(ctx)+" _stack_hashes", &stack, func(r int) error { return visit(r, stack) })
}

// pairRows reads the (run, stack) pairs of stackPairs that match cond
// into stack, a list of ingests (idLists) at a time, and calls visit with
// each pair's run.
func (s *Store) pairRows(ctx context.Context, all *grouping, where string, args []any, cond string,
	stack *uint64, visit func(run int) error) error {
	for _, g := range all.parts() {
		key, keyArgs := g.keyExpr()
		err := s.scanRows(ctx, "read stack runs", "SELECT "+key+" AS k, stack_hash FROM "+where+" WHERE "+cond+" AND ingest_id IN ? LIMIT ?",
			append(append(keyArgs, args...), groupSet(g.ids)), []any{stack}, func(k uint32) error {
				for _, r := range g.keys[k] {
					if err := visit(r); err != nil {
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

// stackSetRuns is StackRuns from one run of each stack set: reps[i]'s
// stacks are those of the runs members[i].
func (s *Store) stackSetRuns(ctx context.Context, reps []Run, members [][]int, visit func(run int, stack uint64) error) error {
	g, where, args, ids, err := s.stackPairs(ctx, reps)
	if err != nil {
		return err
	}
	in := map[uint64][]int{} // stack -> the places in reps that have it
	var stack uint64
	err = s.pairRows(clickhouse.Context(ctx, clickhouse.WithExternalTable(ids...)), g, where, args, "1", &stack, func(r int) error {
		in[stack] = append(in[stack], r)
		return nil
	})
	if err != nil {
		return err
	}
	for stack, sets := range in {
		slices.Sort(sets)
		if sets = slices.Compact(sets); len(sets) == len(reps) { // a run's rows may be there twice
			if err := visit(EveryRun, stack); err != nil {
				return err
			}
			continue
		}
		for _, set := range sets {
			for _, r := range members[set] {
				if err := visit(r, stack); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// stackPairs groups runs one per group (the key is the run) and gives the
// SQL of their (ingest_id, stack_hash) pairs, with its arguments and the
// external tables of ingest ids it reads (so that it holds no list): the
// run stacks rows of the ingests with sums, the samples of the others (as
// StackValues reads them).
func (s *Store) stackPairs(ctx context.Context, runs []Run) (*grouping, string, []any, []*ext.Table, error) {
	g, err := newGrouping(EachRun(runs))
	if err != nil {
		return nil, "", nil, nil, fmt.Errorf("read stack runs: %w", err)
	}
	summed, rest, err := s.summedIngests(ctx, g)
	if err != nil {
		return nil, "", nil, nil, fmt.Errorf("read stack runs: %w", err)
	}
	var parts []string
	var args []any
	var tables []*ext.Table
	from := func(name, sql string, ids []uint64) error {
		t, err := hashTable(name, ids)
		if err != nil {
			return fmt.Errorf("read stack runs: %w", err)
		}
		parts, args, tables = append(parts, sql+" "+s.in(ctx)+" "+name), append(args, g.app), append(tables, t)
		return nil
	}
	if len(summed) > 0 {
		if err := from("_summed_ids", "SELECT ingest_id, stack_hash FROM "+s.q.runStacks+" WHERE app = ? AND first_seen != "+unsummedSQL+" AND ingest_id", summed); err != nil {
			return nil, "", nil, nil, err
		}
	}
	if len(rest) > 0 {
		if err := from("_rest_ids", "SELECT DISTINCT ingest_id, stack_hash FROM "+s.q.samples+" WHERE app = ? AND ingest_id", rest); err != nil {
			return nil, "", nil, nil, err
		}
	}
	return g, "(" + strings.Join(parts, " UNION ALL ") + ")", args, tables, nil
}

// backfillFunctions writes the run functions and function timelines rows
// of the visible ingests that have no run functions totals row: those
// written before the tables existed. They are summed here from the
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
		" AND ingest_id "+s.notIn(ctx)+" (SELECT ingest_id FROM "+s.q.runFunctions+" WHERE function_hash = 0)"+
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
			" WHERE app = ? AND function_hash = 0 AND ingest_id IN ?", runs[0].App, groupSet(part))
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

// functionSums adds up one run's rows per function (FunctionHash): the
// function's inclusive sum over the whole run and in each time bucket, a
// stack that holds it counting once. Id 0 is the run's total (hash 0).
type functionSums struct {
	ids    map[uint64]int32
	hash   []uint64             // by id
	whole  []int64              // by id, once done
	bucket [TimeBuckets][]int64 // by bucket, then id (nil: no row in the bucket)
	inB    [TimeBuckets][]bool
	rows   []timelineRow // the (bucket, id) pairs with rows, once listed
}

type timelineRow struct {
	bucket uint8
	id     int32
}

func newFunctionSums() *functionSums {
	return &functionSums{ids: map[uint64]int32{0: 0}, hash: []uint64{0}}
}

// id numbers a function by its hash.
func (s *functionSums) id(hash uint64) int32 {
	if id, ok := s.ids[hash]; ok {
		return id
	}
	id := int32(len(s.hash)) // #nosec G115 -- fewer functions than frames, which are uint32
	s.ids[hash] = id
	s.hash = append(s.hash, hash)
	return id
}

// add adds a row of a stack that holds functions (ids, each once) to
// bucket.
func (s *functionSums) add(functions []int32, bucket uint8, value int64) {
	if n := len(s.hash); len(s.bucket[bucket]) < n {
		s.bucket[bucket] = append(s.bucket[bucket], make([]int64, n-len(s.bucket[bucket]))...)
		s.inB[bucket] = append(s.inB[bucket], make([]bool, n-len(s.inB[bucket]))...)
	}
	b, in := s.bucket[bucket], s.inB[bucket]
	b[0], in[0] = b[0]+value, true
	for _, f := range functions {
		b[f], in[f] = b[f]+value, true
	}
}

// done adds the buckets up into the whole run's sums, once every row is
// in.
func (s *functionSums) done() {
	s.whole = make([]int64, len(s.hash))
	for _, b := range s.bucket {
		for id, v := range b {
			s.whole[id] += v
		}
	}
}

// timelineRows is the number of (bucket, function) rows, and lists them.
func (s *functionSums) timelineRows() int {
	if s.rows == nil {
		s.rows = []timelineRow{}
		for b, in := range s.inB {
			for id, ok := range in {
				if ok {
					s.rows = append(s.rows, timelineRow{uint8(b), int32(id)}) // #nosec G115 -- b < TimeBuckets; ids are int32
				}
			}
		}
	}
	return len(s.rows)
}

// timelineColumns are rows of the run functions or function timelines
// tables, column by column.
type timelineColumns struct {
	apps           []string
	functions, ids []uint64
	buckets        []uint8
	values         []int64
}

// writeTimelines appends the rows to a batch of the function timelines
// table, writeWhole to one of the run functions table: each in its
// table's column order.
func (c *timelineColumns) writeTimelines(b driver.Batch) error {
	return appendColumns(b, c.apps, c.functions, c.ids, c.buckets, c.values)
}

func (c *timelineColumns) writeWhole(b driver.Batch) error {
	return appendColumns(b, c.apps, c.ids, c.functions, c.values)
}

// appendWhole appends the run functions rows [a, z) (by id) of the run.
func (s *functionSums) appendWhole(c *timelineColumns, app string, ingestID uint64, a, z int) {
	for id := a; id < z; id++ {
		c.apps, c.ids, c.functions, c.values = append(c.apps, app), append(c.ids, ingestID), append(c.functions, s.hash[id]), append(c.values, s.whole[id])
	}
}

// appendTimeline appends the function timelines rows [a, z) of the run.
func (s *functionSums) appendTimeline(c *timelineColumns, app string, ingestID uint64, a, z int) {
	s.timelineRows()
	for _, r := range s.rows[a:z] {
		c.apps, c.functions, c.ids = append(c.apps, app), append(c.functions, s.hash[r.id]), append(c.ids, ingestID)
		c.buckets, c.values = append(c.buckets, r.bucket), append(c.values, s.bucket[r.bucket][r.id])
	}
}
