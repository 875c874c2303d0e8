package storage

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/profile"
)

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
	return appendColumns(b, c.apps, c.functions, c.ids, c.buckets, c.values, repeat(uint8(FunctionsVersion), len(c.ids)))
}

func (c *timelineColumns) writeWhole(b driver.Batch) error {
	return appendColumns(b, c.apps, c.ids, c.functions, c.values, repeat(uint8(FunctionsVersion), len(c.ids)))
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

// Write stores p as run meta.App/Build/Run. Frames and stacks are
// interned, samples are summed per (stack, time bucket) and written under a
// fresh ingest id with the sums of its stacks (run stacks), and the runs row that makes
// them visible is written last: a run is either entirely visible or
// absent, whatever fails or is cancelled on the way. Re-ingesting a run replaces it (its newest commit
// wins); the old rows stay, invisible. progress, if not nil, is called
// after each INSERT with rows written so far and rows to write.
func (s *Store) Write(ctx context.Context, meta RunMeta, p *profile.Profile, progress func(done, total int)) error {
	return s.WriteRuns(ctx, []RunProfile{{Meta: meta, Profile: p}}, progress)
}

// WriteRuns stores several runs as Write stores one, and commits them
// together: their runs rows are written last, in one INSERT, so that all of
// them become visible or none (on one server; through a Distributed table
// the rows of each shard commit together). The rows of all runs share
// their INSERTs and look-ups, so that many small runs (spans of traces)
// cost about what one run of their size does. Two ingestions of one run are
// an error.
func (s *Store) WriteRuns(ctx context.Context, runs []RunProfile, progress func(done, total int)) error {
	fail := func(meta RunMeta, err error) error {
		return fmt.Errorf("ingest %s/%s/%s: %w", meta.App, meta.Build, meta.Run, err)
	}
	failAll := func(err error) error {
		if len(runs) == 1 {
			return fail(runs[0].Meta, err)
		}
		return fmt.Errorf("ingest %d runs: %w", len(runs), err)
	}
	w := writeSet{runs: runs, prepared: make([]*prepared, len(runs)), starts: make([]time.Time, len(runs)),
		ids: make([]uint64, len(runs))}
	seen := make(map[[3]string]bool, len(runs))
	for i, in := range runs {
		meta, p := in.Meta, in.Profile
		if err := in.Check(); err != nil {
			return fail(meta, err)
		}
		if k := [3]string{meta.App, meta.Build, meta.Run}; seen[k] {
			return fail(meta, errors.New("the run is given twice"))
		} else {
			seen[k] = true
		}
		start := in.start()
		duration := meta.Duration
		if duration == 0 {
			duration = p.Duration
		}
		w.prepared[i], w.starts[i], w.ids[i] = prepare(p, duration), start, newIngestID()
	}
	if err := s.commit(ctx, &w, progress); err != nil {
		return failAll(err)
	}
	return nil
}

// commit writes the runs' frames, new stacks, samples and run stacks under
// their ingest ids — rows no reader sees before the runs rows commit them
// — and then the runs rows.
func (s *Store) commit(ctx context.Context, w *writeSet, progress func(done, total int)) error {
	frames, byApp, n := w.distinct()
	var stacks []stackRef
	apps := make([]string, 0, len(byApp))
	for app := range byApp {
		apps = append(apps, app)
	}
	sort.Strings(apps)
	for _, app := range apps {
		refs := byApp[app]
		hashes := make([]uint64, len(refs))
		for j, ref := range refs {
			hashes[j] = w.prepared[ref.run].stackHash[ref.stack]
		}
		fresh, err := s.unstoredStacks(ctx, app, hashes)
		if err != nil {
			return err
		}
		for _, j := range fresh {
			stacks = append(stacks, refs[j])
		}
	}
	total := len(frames) + len(stacks) + n.samples + n.runStacks + n.runFunctions + n.timelines + 1
	done := 0
	report := func(n int) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	err := s.insert(ctx, s.q.frames, &framesSchema, len(frames), report, func(b driver.Batch, lo, hi int) error {
		n := hi - lo
		apps, names, modules, hashes := make([]string, n), make([]string, n), make([]string, n), make([]uint64, n)
		files, lines, inlined := make([]string, n), make([]int64, n), make([]uint8, n)
		for i, ref := range frames[lo:hi] {
			f := w.runs[ref.run].Profile.Frames[ref.stack]
			apps[i], hashes[i] = w.runs[ref.run].Meta.App, w.prepared[ref.run].fHash[ref.stack]
			names[i], modules[i], files[i], lines[i] = f.Name, f.Module, f.File, f.Line
			if f.Inlined {
				inlined[i] = 1
			}
		}
		return appendColumns(b, apps, hashes, names, modules, files, lines, inlined)
	})
	if err == nil {
		err = s.insert(ctx, s.q.stacks, &stacksSchema, len(stacks), report, func(b driver.Batch, lo, hi int) error {
			n := hi - lo
			apps, hashes, fs := make([]string, n), make([]uint64, n), make([][]uint64, n)
			packed, tops := make([]string, n), make([]string, n)
			for i, ref := range stacks[lo:hi] {
				r := w.prepared[ref.run]
				apps[i], hashes[i], fs[i] = w.runs[ref.run].Meta.App, r.stackHash[ref.stack], r.stackFrames[ref.stack]
				packed[i], tops[i] = packFrames(fs[i])
			}
			return appendColumns(b, apps, hashes, fs, packed, tops)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.samples, &samplesSchema, n.samples, report, func(b driver.Batch, lo, hi int) error {
			var c sampleColumns
			w.rows(lo, hi, func(i int, r *prepared) int { return len(r.sStack) }, func(i int, r *prepared, a, z int) {
				m, n := w.runs[i].Meta, z-a
				c.apps, c.builds = append(c.apps, repeat(m.App, n)...), append(c.builds, repeat(m.Build, n)...)
				c.runs, c.ids = append(c.runs, repeat(m.Run, n)...), append(c.ids, repeat(w.ids[i], n)...)
				c.stacks, c.frames = append(c.stacks, r.sStack[a:z]...), append(c.frames, r.sFrame[a:z]...)
				c.first, c.values = append(c.first, r.sFirstSeen[a:z]...), append(c.values, r.sValue[a:z]...)
			})
			return appendColumns(b, c.apps, c.builds, c.runs, c.ids, c.stacks, c.frames, c.first, c.values)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.runStacks, &runStacksSchema, n.runStacks, report, func(b driver.Batch, lo, hi int) error {
			var apps []string
			var ids, hashes, first []uint64
			var values []int64
			w.rows(lo, hi, func(i int, r *prepared) int { return len(r.stackHash) }, func(i int, r *prepared, a, z int) {
				apps, ids = append(apps, repeat(w.runs[i].Meta.App, z-a)...), append(ids, repeat(w.ids[i], z-a)...)
				hashes, values = append(hashes, r.stackHash[a:z]...), append(values, r.stackValue[a:z]...)
				first = append(first, r.stackFirst[a:z]...)
			})
			return appendColumns(b, apps, ids, hashes, values, first)
		})
	}
	if err == nil {
		// Timelines first: a run's totals row in run functions says both
		// are whole (see backfillFunctions).
		err = s.insert(ctx, s.q.functionTimelines, &functionTimelinesSchema, n.timelines, report, func(b driver.Batch, lo, hi int) error {
			var c timelineColumns
			w.rows(lo, hi, func(i int, r *prepared) int { return r.functions.timelineRows() }, func(i int, r *prepared, a, z int) {
				r.functions.appendTimeline(&c, w.runs[i].Meta.App, w.ids[i], a, z)
			})
			return c.writeTimelines(b)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.runFunctions, &runFunctionsSchema, n.runFunctions, report, func(b driver.Batch, lo, hi int) error {
			var c timelineColumns
			w.rows(lo, hi, func(i int, r *prepared) int { return len(r.functions.hash) }, func(i int, r *prepared, a, z int) {
				r.functions.appendWhole(&c, w.runs[i].Meta.App, w.ids[i], a, z)
			})
			return c.writeWhole(b)
		})
	}
	if err != nil {
		return err
	}
	rows, err := s.runRows(ctx, w)
	if err != nil {
		return err
	}
	if err := s.insertRuns(ctx, rows); err != nil {
		return err
	}
	report(1)
	return nil
}

type sampleColumns struct {
	apps, builds, runs []string
	ids, stacks, first []uint64
	frames             []uint8
	values             []int64
}

// rows calls add for the part of each run's rows that falls in rows
// [lo, hi) of all runs' rows laid end to end (count gives a run's rows).
func (w *writeSet) rows(lo, hi int, count func(i int, r *prepared) int, add func(i int, r *prepared, a, z int)) {
	off := 0
	for i, r := range w.prepared {
		n := count(i, r)
		if a, z := max(lo-off, 0), min(hi-off, n); a < z {
			add(i, r, a, z)
		}
		off += n
		if off >= hi {
			return
		}
	}
}

// unstoredStacks returns the indexes of the stacks of hashes that the
// stacks table lacks: a stack is stored once and shared by every run that
// has it (frames and stacks are never deleted), so an ingest writes only
// new ones. Writing all of them left a copy per ingest until ClickHouse
// merged the parts, which every stack read then had to drop (four copies
// of each of 500k stacks after ten ingests of them). Two ingests at once
// may both write a new stack; readers drop such copies.
func (s *Store) unstoredStacks(ctx context.Context, app string, hashes []uint64) ([]int, error) {
	stored := hashindex.NewSet(0)
	if len(hashes) > 0 {
		t, err := hashTable("_stack_hashes", hashes)
		if err != nil {
			return nil, fmt.Errorf("look up stored stacks: %w", err)
		}
		rows, err := s.conn.Query(clickhouse.Context(ctx, clickhouse.WithExternalTable(t)),
			"SELECT stack_hash FROM "+s.q.stacks+" WHERE app = ? AND stack_hash "+s.in(ctx)+" _stack_hashes", app)
		if err != nil {
			return nil, fmt.Errorf("look up stored stacks: %w", err)
		}
		_, err = collect(rows, "look up stored stacks", func(scan func(...any) error) (struct{}, error) {
			var h uint64
			err := scan(&h)
			stored.Add(h)
			return struct{}{}, err
		})
		if err != nil {
			return nil, err
		}
	}
	fresh := make([]int, 0, len(hashes))
	for k, h := range hashes {
		if !stored.Has(h) {
			fresh = append(fresh, k)
		}
	}
	return fresh, nil
}

// insert writes n rows into a table in INSERTs of at most batchRows rows;
// fill appends rows [lo, hi) to a batch, report (if not nil) gets the rows
// sent.
func (s *Store) insert(ctx context.Context, table string, ts *tableSchema, n int, report func(int),
	fill func(b driver.Batch, lo, hi int) error) error {
	return s.insertBatches(ctx, table, ts, n, s.batchRows, report, fill)
}

// insertBatches is insert with INSERTs of at most batch rows.
func (s *Store) insertBatches(ctx context.Context, table string, ts *tableSchema, n, batch int, report func(int),
	fill func(b driver.Batch, lo, hi int) error) error {
	ctx = syncInserts(ctx)
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+ts.columnList()+")")
		if err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		if err := fill(b, lo, hi); err != nil {
			_ = b.Abort()
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		if report != nil {
			report(hi - lo)
		}
	}
	return nil
}

// syncInserts makes an INSERT into a Distributed table return only once
// every shard has stored its rows, or fail: the runs row written last then
// commits rows that are all in place. By default the rows are queued and
// sent later, so a commit could be seen before them, and rows of a failed
// ingest could arrive after it. Local tables ignore the setting.
func syncInserts(ctx context.Context) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
}

// appendColumns appends one slice per column, in column order.
func appendColumns(b driver.Batch, cols ...any) error {
	for i, c := range cols {
		if err := b.Column(i).Append(c); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

func repeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}
