package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
)

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

// StackValues sums, in ClickHouse, the values of each group of runs per
// stack, and calls visit once per (group, stack) with the sum and the
// earliest first-seen key (Profile.FirstSeen) among them. Pass one group
// per run for per-run values, or one group per side of a diff to let the
// server add the runs up. A run may be in several groups (then visit gets
// a group's stacks once per run: add the values up). Rows stream in no
// particular order; more than Options.MaxRows of them fail with
// ErrTooManyRows. An error from visit stops the read and is returned.
//
// The sums are whole runs': they come from the run stacks table (one row
// per ingest and stack, read as they are when each group is one run) for
// the ingests that have a summed row for each of their stacks, and from
// the samples for the others (not yet migrated).
func (s *Store) StackValues(ctx context.Context, groups [][]Run,
	visit func(group int, stackHash uint64, value int64, firstSeen uint64) error) error {
	return s.stackValues(ctx, groups, true, visit)
}

// stackValues is StackValues; without firstSeen the rows leave the
// first-seen keys out (visit gets 0): an eighth of the bytes a reader
// that does not order stacks decodes for nothing.
func (s *Store) stackValues(ctx context.Context, groups [][]Run, firstSeen bool,
	visit func(group int, stackHash uint64, value int64, firstSeen uint64) error) error {
	all, err := newGrouping(groups)
	if err != nil {
		return fmt.Errorf("read stack values: %w", err)
	}
	fanOut := func(k uint32, hash uint64, value int64, seen uint64) error {
		for _, gi := range all.keys[k] {
			if err := visit(gi, hash, value, seen); err != nil {
				return err
			}
		}
		return nil
	}
	parts := all.parts()
	if len(parts) == 1 || all.perIngest() { // no key in two parts
		for _, g := range parts {
			if err := s.keyStackValues(ctx, g, firstSeen, fanOut); err != nil {
				return err
			}
		}
		return nil
	}
	type sum struct {
		value int64
		seen  uint64
	}
	type keyStack struct {
		key   uint32
		stack uint64
	}
	sums := map[keyStack]sum{} // a key's sums over the parts, by key and stack
	for _, g := range parts {
		err := s.keyStackValues(ctx, g, firstSeen, func(k uint32, hash uint64, value int64, seen uint64) error {
			at := keyStack{k, hash}
			was, ok := sums[at]
			if ok {
				value, seen = value+was.value, min(seen, was.seen)
			} else if len(sums) == s.maxRows {
				return fmt.Errorf("read stack values: %w: more than %d rows; select fewer runs or raise the cap", ErrTooManyRows, s.maxRows)
			}
			sums[at] = sum{value, seen}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for at, v := range sums {
		if err := fanOut(at.key, at.stack, v.value, v.seen); err != nil {
			return err
		}
	}
	return nil
}

// keyStackValues is stackValues for the ingests of g: visit gets each
// server key's sums.
func (s *Store) keyStackValues(ctx context.Context, g *grouping, firstSeen bool,
	visit func(k uint32, stackHash uint64, value int64, firstSeen uint64) error) error {
	summed, rest, err := s.summedIngests(ctx, g)
	if err != nil {
		return fmt.Errorf("read stack values: %w", err)
	}
	first, minFirst, cols, sums := ", first_seen AS f", ", min(first_seen) AS f", "k, h, v, f", "k, h, sum(v), min(f)"
	if !firstSeen {
		first, minFirst, cols, sums = "", "", "k, h, v", "k, h, sum(v)"
	}
	var parts []string
	var args []any
	part := func(sql string, ids []uint64) {
		key, keyArgs := g.keyExpr()
		parts = append(parts, "SELECT "+key+" AS k, stack_hash AS h, "+sql)
		args = append(append(args, keyArgs...), g.app, groupSet(ids))
	}
	if len(summed) > 0 {
		where := " FROM " + s.q.runStacks + " WHERE app = ? AND ingest_id IN ? AND first_seen != " + unsummedSQL
		if g.perIngest() {
			part("value AS v"+first+where, summed)
		} else {
			part("sum(value) AS v"+minFirst+where+" GROUP BY k, h", summed)
		}
	}
	if len(rest) > 0 {
		part("sum(value) AS v"+minFirst+" FROM "+s.q.samples+" WHERE app = ? AND ingest_id IN ? GROUP BY k, h", rest)
	}
	q := "SELECT " + cols + " FROM (" + strings.Join(parts, " UNION ALL ") + ") LIMIT ?"
	if len(parts) > 1 && !g.perIngest() { // a group's runs in both parts
		q = "SELECT " + sums + " FROM (" + strings.Join(parts, " UNION ALL ") + ") GROUP BY k, h LIMIT ?"
	}
	var hash, seen uint64
	var value int64
	dest := []any{&hash, &value, &seen}
	if !firstSeen {
		dest = dest[:2]
	}
	return s.scanRows(ctx, "read stack values", q, args, dest,
		func(k uint32) error { return visit(k, hash, value, seen) })
}

// RunStackValues is StackValues with one group per run, for readers that
// add the rows up as they stream in (no cap on the whole): visit gets
// each (run, stack) value, run being the index in runs, in as few reads
// as Options.MaxRows allows (see reads).
func (s *Store) RunStackValues(ctx context.Context, runs []Run, visit func(run int, stackHash uint64, value int64) error) error {
	groups := EachRun(runs)
	for _, read := range s.reads(groups, func(r Run) uint64 { return r.Stacks }) {
		err := s.stackValues(ctx, pick(groups, read), false, func(g int, hash uint64, value int64, _ uint64) error {
			return visit(read[g], hash, value)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// summedIngests splits the ingests of g into those whose run stacks rows
// hold the sums of every stack and the rest. An ingest that committed
// with its sums written (Run.StacksSummed) has them; the others have them
// when they have as many summed rows as the run has stacks (filled in by
// migrate), which takes a scan of their rows to count.
func (s *Store) summedIngests(ctx context.Context, g *grouping) (summed, rest []uint64, err error) {
	var check []int // places in g.ids
	var checkIDs []uint64
	for i, id := range g.ids {
		if g.summed[i] {
			summed = append(summed, id)
		} else {
			check, checkIDs = append(check, i), append(checkIDs, id)
		}
	}
	if len(check) == 0 {
		return summed, nil, nil
	}
	count := map[uint64]uint64{}
	for _, part := range idLists(checkIDs) {
		rows, err := s.conn.Query(ctx, "SELECT ingest_id, count() FROM "+s.q.runStacks+
			" WHERE app = ? AND ingest_id IN ? AND first_seen != "+unsummedSQL+" GROUP BY ingest_id", g.app, groupSet(part))
		if err != nil {
			return nil, nil, err
		}
		_, err = collect(rows, "count summed stacks", func(scan func(...any) error) (struct{}, error) {
			var id, n uint64
			err := scan(&id, &n)
			count[id] = n
			return struct{}{}, err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for _, i := range check {
		if id := g.ids[i]; count[id] == g.stacks[i] {
			summed = append(summed, id)
		} else {
			rest = append(rest, id)
		}
	}
	return summed, rest, nil
}
