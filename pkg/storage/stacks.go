package storage

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"

	"github.com/flamediff/flamediff/pkg/internal/hashindex"
)

// Frame is one frame of a stack read back from storage.
type Frame struct {
	Hash   uint64 // FrameHash(Name, Module, Inlined): a stable key for caching
	Name   string
	Module string
	// File and Line locate the function's source ("" and 0: unknown).
	File string
	Line int64
	// Inlined: its caller inlined the call (profile.Frame.Inlined).
	Inlined bool
}

// grouping maps the runs of a read to the caller's groups. The server
// groups by a key per ingest id; keys[k] lists the caller's groups that
// key k feeds. When no run is in two groups the key is the group itself,
// so ClickHouse sums each group (far fewer rows than per run).
type grouping struct {
	app    string
	ids    []uint64 // distinct ingest ids
	stacks []uint64 // distinct stacks of ids[i] (Run.Stacks)
	summed []bool   // Run.StacksSummed of ids[i]
	key    []uint32 // server key of ids[i]
	keys   [][]int  // groups per server key
}

func newGrouping(groups [][]Run) (*grouping, error) {
	g := &grouping{}
	groupsOf := map[uint64][]int{}
	for gi, runs := range groups {
		for _, r := range runs {
			if r.IngestID == 0 {
				return nil, fmt.Errorf("run %s/%s/%s has no ingest id (take runs from Store.Runs)", r.App, r.Build, r.Run)
			}
			if g.app == "" {
				g.app = r.App
			} else if r.App != g.app {
				return nil, fmt.Errorf("runs of two apps (%q and %q) in one read", g.app, r.App)
			}
			if _, ok := groupsOf[r.IngestID]; !ok {
				g.ids = append(g.ids, r.IngestID)
				g.stacks = append(g.stacks, r.Stacks)
				g.summed = append(g.summed, r.StacksSummed)
			}
			groupsOf[r.IngestID] = append(groupsOf[r.IngestID], gi)
		}
	}
	if len(g.ids) == 0 {
		return nil, ErrNoRuns
	}
	shared := false
	for _, gs := range groupsOf {
		shared = shared || len(gs) > 1
	}
	if shared { // one key per run, fanned out to each of its groups
		for i, id := range g.ids {
			g.key = append(g.key, uint32(i)) // #nosec G115 -- an index of the query's runs: far below 2^32
			g.keys = append(g.keys, groupsOf[id])
		}
		return g, nil
	}
	for gi := range groups {
		g.keys = append(g.keys, []int{gi})
	}
	for _, id := range g.ids {
		g.key = append(g.key, uint32(groupsOf[id][0])) // #nosec G115 -- a group index, below the query's few selections
	}
	return g, nil
}

// perIngest reports whether every server key stands for one ingest (one
// run per group, or runs shared between groups).
func (g *grouping) perIngest() bool {
	seen := make([]bool, len(g.keys))
	for _, k := range g.key {
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// parts splits g into groupings of one id list each (idLists), keeping
// the server keys: a key's ingests may then be in several parts.
func (g *grouping) parts() []*grouping {
	ls := idLists(g.ids)
	if len(ls) == 1 {
		return []*grouping{g}
	}
	out := make([]*grouping, len(ls))
	lo := 0
	for i, ids := range ls {
		hi := lo + len(ids)
		out[i] = &grouping{app: g.app, ids: ids, stacks: g.stacks[lo:hi], summed: g.summed[lo:hi], key: g.key[lo:hi], keys: g.keys}
		lo = hi
	}
	return out
}

// keyExpr is the SQL of the server key, with its bound arguments.
func (g *grouping) keyExpr() (string, []any) {
	return "toUInt32(transform(ingest_id, ?, ?, 0))", []any{g.ids, g.key}
}

// scanRows runs a grouped query and calls row for each result row with
// its server key, failing with ErrTooManyRows past the cap.
func (s *Store) scanRows(ctx context.Context, what, query string, args []any, dest []any, row func(key uint32) error) error {
	rows, err := s.conn.Query(ctx, query, append(args, s.maxRows+1)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var key uint32
	dest = append([]any{&key}, dest...)
	n := 0
	for rows.Next() {
		if n++; n > s.maxRows {
			return fmt.Errorf("%s: %w: more than %d rows; select fewer runs or raise the cap", what, ErrTooManyRows, s.maxRows)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := row(key); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
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

// EachRun makes each run a group of its own, for per-run reads
// (StackValues, Timeline).
func EachRun(runs []Run) [][]Run {
	groups := make([][]Run, len(runs))
	for i := range runs {
		groups[i] = runs[i : i+1 : i+1]
	}
	return groups
}

// reads splits groups into reads, each a list of places in groups: in the
// order of their runs' ingest ids, as many at a time as their rows (at
// most rows(run) for each run) fit Options.MaxRows. The run stacks and
// samples tables are ordered by ingest id, so that each read spans about
// one key range of them: one read per build instead selects a few
// granules all over the table, reading up to 3x the rows it returns. A
// group over the cap on its own is a read of its own (which fails with
// ErrTooManyRows).
func (s *Store) reads(groups [][]Run, rows func(Run) uint64) [][]int {
	first := func(g []Run) uint64 {
		if len(g) == 0 {
			return 0
		}
		return slices.MinFunc(g, func(a, b Run) int { return cmp.Compare(a.IngestID, b.IngestID) }).IngestID
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(first(groups[a]), first(groups[b])) })
	size := func(g int) (n uint64) {
		for _, r := range groups[g] {
			n += rows(r)
		}
		return n
	}
	maxRows := uint64(s.maxRows) // #nosec G115 -- a positive cap
	var out [][]int
	for len(order) > 0 {
		n, total := 1, size(order[0])
		for n < len(order) && total+size(order[n]) <= maxRows {
			total += size(order[n])
			n++
		}
		out, order = append(out, order[:n:n]), order[n:]
	}
	return out
}

// pick lists groups[at[0]], groups[at[1]], ...
func pick(groups [][]Run, at []int) [][]Run {
	out := make([][]Run, len(at))
	for i, g := range at {
		out[i] = groups[g]
	}
	return out
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

// eachRead calls read with each read of groups (see reads), a list of
// ingests (grouping.parts) at a time: the places in groups its grouping's
// groups stand for, and the grouping.
func (s *Store) eachRead(groups [][]Run, rows func(Run) uint64, what string, read func(at []int, g *grouping) error) error {
	for _, at := range s.reads(groups, rows) {
		all, err := newGrouping(pick(groups, at))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, g := range all.parts() {
			if err := read(at, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// ErrMissingFrame means a stack refers to a frame the frames table lacks:
// the tables were changed by hand or an ingest was cut short in a way
// Ingest never leaves behind.
var ErrMissingFrame = errors.New("stack refers to a missing frame")

// Stacks calls visit once for every distinct stack in the samples of runs,
// with its frames root first (RunStackFrames, then Frames). The frames
// slice is reused between calls: copy what you keep.
func (s *Store) Stacks(ctx context.Context, runs []Run, visit func(stackHash uint64, frames []Frame) error) error {
	var set StackSet
	if err := s.RunStackFrames(ctx, runs, set.Add); err != nil {
		return err
	}
	if len(set.Hashes) == 0 {
		return nil
	}
	text := make([]Frame, len(set.FrameHashes))
	found := make([]bool, len(set.FrameHashes))
	if err := s.Frames(ctx, runs[0].App, set.FrameHashes, func(f Frame) error {
		if i, ok := set.frameAt(f.Hash); ok {
			text[i], found[i] = f, true
		}
		return nil
	}); err != nil {
		return err
	}
	var stack []Frame
	seen := hashindex.NewSet(len(set.Hashes))
	for i, hash := range set.Hashes {
		if !seen.Add(hash) { // a copy (see RunStackFrames)
			continue
		}
		stack = stack[:0]
		for _, f := range set.Frames[i] {
			if !found[f] {
				return fmt.Errorf("read stacks: stack %x: %w %x", hash, ErrMissingFrame, set.FrameHashes[f])
			}
			stack = append(stack, text[f])
		}
		if err := visit(hash, stack); err != nil {
			return err
		}
	}
	return nil
}

// RunStackFrames calls visit for every distinct stack in the samples of
// runs, with its frame hashes root first. The stacks are selected by a
// subquery over the runs' stack lists (the run stacks table; no hash list
// sent). The frames slice is reused between calls.
//
// A stack may come twice: the stacks table holds a stack twice when two
// ingests at once both wrote it (or when older versions wrote it, which
// wrote every stack of every ingest) until ClickHouse merges their parts.
// Callers drop the copies where it matters (a sorted list of hashes
// shows them side by side), which costs less than a set of every hash
// read, and much less than a LIMIT 1 BY on the server (0.15 s of its CPU
// per 500k stacks on merged parts).
func (s *Store) RunStackFrames(ctx context.Context, runs []Run, visit func(stackHash uint64, frames []uint64) error) error {
	g, err := newGrouping([][]Run{runs})
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	t, err := hashTable("_ingest_ids", g.ids) // any number of runs in one query
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	in := s.in(ctx)
	return s.readStacks(ctx, "stack_hash "+in+" (SELECT stack_hash FROM "+s.q.runStacks+" WHERE app = ? AND ingest_id "+in+" _ingest_ids)",
		[]any{g.app, g.app}, t, visit)
}

// AppStackCount is the number of rows the stacks table holds for app:
// its stacks, and copies not merged yet (see RunStackFrames).
func (s *Store) AppStackCount(ctx context.Context, app string) (uint64, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.q.stacks+" WHERE app = ?", app).Scan(&n); err != nil {
		return 0, fmt.Errorf("count stacks: %w", err)
	}
	return n, nil
}

// AppStackFrames is RunStackFrames for every stack of app.
func (s *Store) AppStackFrames(ctx context.Context, app string, visit func(stackHash uint64, frames []uint64) error) error {
	return s.readStacks(ctx, "", []any{app}, nil, visit)
}

// StackFrames calls visit with the frame hashes (root first) of each
// stack of app among hashes (a stack may come twice, as in
// RunStackFrames); a hash the stacks table does not hold is skipped. The
// hashes travel as an external table, so the lookup is one query whatever
// their number, and the frames slice is reused between calls.
func (s *Store) StackFrames(ctx context.Context, app string, hashes []uint64, visit func(stackHash uint64, frames []uint64) error) error {
	if len(hashes) == 0 {
		return nil
	}
	t, err := hashTable("_stack_hashes", hashes)
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	return s.readStacks(ctx, "stack_hash "+s.in(ctx)+" _stack_hashes", []any{app}, t, visit)
}

// Frames calls visit with the text of each frame of app among hashes
// (sent as an external table), once per frame.
func (s *Store) Frames(ctx context.Context, app string, hashes []uint64, visit func(Frame) error) error {
	if len(hashes) == 0 {
		return nil
	}
	t, err := hashTable("_frame_hashes", hashes)
	if err != nil {
		return fmt.Errorf("read frames: %w", err)
	}
	rows, err := s.conn.Query(clickhouse.Context(ctx, clickhouse.WithExternalTable(t)),
		"SELECT frame_hash, any(name), any(module), anyIf(file, file != ''), anyIf(line, file != ''), max(inlined) FROM "+s.q.frames+
			" WHERE app = ? AND frame_hash "+s.in(ctx)+" _frame_hashes GROUP BY frame_hash", app)
	if err != nil {
		return fmt.Errorf("read frames: %w", err)
	}
	_, err = collect(rows, "read frames", func(scan func(...any) error) (struct{}, error) {
		var f Frame
		var inlined uint8
		if err := scan(&f.Hash, &f.Name, &f.Module, &f.File, &f.Line, &inlined); err != nil {
			return struct{}{}, err
		}
		f.Inlined = inlined != 0
		return struct{}{}, visit(f)
	})
	return err
}

// packFrames renders a stack's frame hashes as the stacks table stores
// them for reading: frameBytes holds 8 little-endian bytes per hash, each
// with its top bit set, and frameTops says which of them have it ('1') or
// not ('0'). clickhouse-go decodes an Array(UInt64) row by reflection,
// one element at a time, which costs several times what the server spends
// on the whole read; a String is one copy. frameBytesSQL and frameTopsSQL
// compute the same from frame_hashes on the server, where
// reinterpretAsString drops a number's trailing zero bytes (a set top bit
// leaves none).
func packFrames(frames []uint64) (frameBytes, frameTops string) {
	b := make([]byte, 8*len(frames))
	tops := make([]byte, len(frames))
	for i, h := range frames {
		binary.LittleEndian.PutUint64(b[8*i:], h|1<<63)
		tops[i] = '0'
		if h >= 1<<63 {
			tops[i] = '1'
		}
	}
	return string(b), string(tops)
}

const (
	frameBytesSQL = "arrayStringConcat(arrayMap(h -> reinterpretAsString(bitOr(h, 9223372036854775808)), frame_hashes))"
	frameTopsSQL  = "arrayStringConcat(arrayMap(h -> if(h >= 9223372036854775808, '1', '0'), frame_hashes))"
)

// readStacks reads the stack rows of app that match where (all: ""), passing ext
// along as external data. The frames slice is reused.
func (s *Store) readStacks(ctx context.Context, where string, args []any, ext *ext.Table, row func(hash uint64, frames []uint64) error) error {
	if ext != nil {
		ctx = clickhouse.Context(ctx, clickhouse.WithExternalTable(ext))
	}
	if where != "" {
		where = " AND " + where
	}
	rows, err := s.conn.Query(ctx, "SELECT stack_hash, frame_bytes, frame_tops FROM "+s.q.stacks+" WHERE app = ?"+where, args...)
	if err != nil {
		return fmt.Errorf("read stacks: %w", err)
	}
	var hash uint64
	var raw, tops []byte
	var frames []uint64
	_, err = collect(rows, "read stacks", func(scan func(...any) error) (struct{}, error) {
		if err := scan(&hash, &raw, &tops); err != nil {
			return struct{}{}, err
		}
		if len(raw) != 8*len(tops) {
			return struct{}{}, fmt.Errorf("stack %x: %d bytes for %d frame hashes", hash, len(raw), len(tops))
		}
		frames = frames[:0]
		for i, top := range tops {
			h := binary.LittleEndian.Uint64(raw[8*i:])
			if top != '1' {
				h &^= 1 << 63
			}
			frames = append(frames, h)
		}
		return struct{}{}, row(hash, frames)
	})
	return err
}

// hashTable is an external table of one UInt64 column h.
func hashTable(name string, hashes []uint64) (*ext.Table, error) {
	t, err := ext.NewTable(name, ext.Column("h", "UInt64"))
	if err != nil {
		return nil, err
	}
	if _, err := t.Block().Columns[0].Append(hashes); err != nil {
		return nil, err
	}
	return t, nil
}

// StackSet collects stacks read from storage (RunStackFrames,
// StackFrames) with their frames numbered in order of first appearance,
// so that each distinct frame is looked up once however many stacks use
// it. A stack read twice is in it twice, with the same frames.
type StackSet struct {
	Hashes []uint64
	// Frames[i] lists the frames of stack Hashes[i], root first, as
	// indexes into FrameHashes. Callers may renumber them in place.
	Frames      [][]uint32
	FrameHashes []uint64
	// Refs is the number of frame references of all stacks.
	Refs int

	frameIndex hashindex.Index // of FrameHashes
	buf        []uint32
	chunks     [][]uint32
}

// Reserve makes room for n stacks.
func (s *StackSet) Reserve(n int) {
	s.Hashes = slices.Grow(s.Hashes, n)
	s.Frames = slices.Grow(s.Frames, n)
}

// frameAt returns the place of a frame hash in FrameHashes.
func (s *StackSet) frameAt(hash uint64) (uint32, bool) {
	return s.frameIndex.Get(hash, s.FrameHashes)
}

// setChunk is the size of the blocks stack frame lists are carved from:
// sets hold millions of stacks, and one allocation each would dominate.
const setChunk = 1 << 16

// Add adds one stack; it fits the visit argument of the readers.
func (s *StackSet) Add(hash uint64, frames []uint64) error {
	if s.FrameHashes == nil { // sized for a program's functions at once
		s.frameIndex = hashindex.New(1 << 10)
	}
	s.buf = s.buf[:0]
	for _, h := range frames {
		i, ok := s.frameAt(h)
		if !ok {
			i = uint32(len(s.FrameHashes)) // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
			s.FrameHashes = append(s.FrameHashes, h)
			s.frameIndex.Put(h, i, s.FrameHashes)
		}
		s.buf = append(s.buf, i)
	}
	n := len(s.chunks)
	if n == 0 || cap(s.chunks[n-1])-len(s.chunks[n-1]) < len(s.buf) {
		s.chunks = append(s.chunks, make([]uint32, 0, max(setChunk, len(s.buf))))
		n++
	}
	c := s.chunks[n-1]
	start := len(c)
	c = append(c, s.buf...)
	s.chunks[n-1] = c
	s.Hashes = append(s.Hashes, hash)
	s.Frames = append(s.Frames, c[start:len(c):len(c)])
	s.Refs += len(s.buf)
	return nil
}
