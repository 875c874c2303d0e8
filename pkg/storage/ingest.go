package storage

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	formats "github.com/flamediff/flamediff/pkg/ingest" // named apart from the tests' ingest helper
	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/profile"
)

// TimeBuckets is the number of time buckets a run is divided into for its
// coarse time histogram (the evolution matrix's execution timeline). The
// tables call a bucket a time frame (columns time_frame, time_frames,
// time_frame_ns), names kept so that stored data need no migration.
const TimeBuckets = 32

// RunMeta identifies a run and carries what the profile itself may not say.
type RunMeta struct {
	// App, Build and Run are the run's key: non-empty, valid UTF-8.
	App, Build, Run string
	// Start is when the run started; zero means the profile's Start, or the
	// time of ingestion when the profile has none either. Seconds since
	// 1970 must fit a ClickHouse DateTime (years 1970-2105).
	Start time.Time
	// Duration is the run's wall time; zero means the profile's Duration,
	// or for a timed profile the time of its last sample.
	Duration time.Duration
	// Commit, Branch and Labels are optional; label keys are non-empty.
	Commit, Branch string
	Labels         map[string]string
}

func checkText(what, s string, required bool) error {
	if required && s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	return nil
}

func (m RunMeta) validate() error {
	for _, f := range []struct {
		what, s  string
		required bool
	}{{"app", m.App, true}, {"build", m.Build, true}, {"run", m.Run, true}, {"commit", m.Commit, false}, {"branch", m.Branch, false}} {
		if err := checkText(f.what, f.s, f.required); err != nil {
			return err
		}
	}
	for k, v := range m.Labels {
		if err := checkText("label key", k, true); err != nil {
			return err
		}
		if err := checkText("label "+k, v, false); err != nil {
			return err
		}
	}
	if m.Duration < 0 {
		return fmt.Errorf("negative duration %v", m.Duration)
	}
	return nil
}

// Check says why IngestRuns would refuse in, for a caller that must tell
// bad input from a failing store (the OTLP receiver: 400, not 503).
func (in Ingestion) Check() error {
	if err := in.Meta.validate(); err != nil {
		return err
	}
	if err := validateProfile(in.Profile); err != nil {
		return err
	}
	return CheckStart(in.start())
}

// start is when the run started: its meta's Start, else its profile's,
// else now.
func (in Ingestion) start() time.Time {
	start := in.Meta.Start
	if start.IsZero() {
		start = in.Profile.Start
	}
	if start.IsZero() {
		start = time.Now()
	}
	return start
}

// CheckStart says why a run cannot start at t: a ClickHouse DateTime
// holds the years 1970-2105.
func CheckStart(t time.Time) error {
	if y := t.UTC().Year(); y < 1970 || y > 2105 {
		return fmt.Errorf("start time %v is outside 1970-2105", t)
	}
	return nil
}

// validateProfile adds to profile.CheckValid what the tables need.
func validateProfile(p *profile.Profile) error {
	if p == nil || len(p.Samples) == 0 {
		return errors.New("profile has no samples")
	}
	if err := p.CheckValid(); err != nil {
		return err
	}
	if p.Duration < 0 {
		return fmt.Errorf("negative profile duration %v", p.Duration)
	}
	if err := checkText("sample type", p.SampleType, false); err != nil {
		return err
	}
	if err := checkText("unit", p.Unit, false); err != nil {
		return err
	}
	for i, f := range p.Frames {
		if err := checkText(fmt.Sprintf("frame %d name", i), f.Name, false); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("frame %d module", i), f.Module, false); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("frame %d file", i), f.File, false); err != nil {
			return err
		}
		if f.Line < 0 {
			return fmt.Errorf("frame %d line %d is negative", i, f.Line)
		}
	}
	return nil
}

// prepared is one run's rows, aggregated and ready to insert.
type prepared struct {
	frames []uint32 // indices into Profile.Frames of the frames in use
	fHash  []uint64 // frame hash per Profile.Frames index

	stackHash   []uint64   // distinct stacks
	stackFrames [][]uint64 // their frame hashes, root first
	stackValue  []int64    // their sums over the run
	stackFirst  []uint64   // and earliest FirstSeen

	// The run's inclusive sums per function, whole and per time bucket.
	functions *functionSums

	// Sample rows, one per (stack, time bucket).
	sStack     []uint64
	sFrame     []uint8
	sFirstSeen []uint64
	sValue     []int64

	total    int64
	bucketNs uint64 // 0: untimed, buckets split the samples by position
	duration time.Duration
}

// prepare hashes frames and stacks and sums the samples per stack and per
// (stack, time bucket), keeping the earliest FirstSeen.
func prepare(p *profile.Profile, duration time.Duration) *prepared {
	r := &prepared{fHash: make([]uint64, len(p.Frames)), duration: duration}
	for i, f := range p.Frames {
		r.fHash[i] = FrameHash(f.Name, f.Module, f.Inlined)
	}
	timed := p.Timed()
	if timed {
		var last int64
		for _, s := range p.Samples {
			last = max(last, s.Time)
		}
		if r.duration == 0 {
			r.duration = time.Duration(last)
		}
		span := max(uint64(r.duration), uint64(last)+1) // #nosec G115 -- durations are checked non-negative, a timed profile's times too
		r.bucketNs = (span + TimeBuckets - 1) / TimeBuckets
	}
	type key struct {
		stack uint64
		frame uint8
	}
	rows := make(map[key]int, len(p.Samples)/4)
	stacks := make(map[uint64]int) // index in stackHash
	var stackOf []int              // a sample of each stack
	var rowStack []int             // the stack of each sample row
	used := make([]bool, len(p.Frames))
	var scratch []uint64
	n := uint64(len(p.Samples))
	for i, s := range p.Samples {
		scratch = scratch[:0]
		for _, f := range s.Stack {
			scratch = append(scratch, r.fHash[f])
		}
		h := StackHash(scratch)
		seen := p.FirstSeen(i)
		si, ok := stacks[h]
		if ok {
			r.stackValue[si] += s.Value
			r.stackFirst[si] = min(r.stackFirst[si], seen)
		} else {
			si = len(r.stackHash)
			stacks[h] = si
			r.stackHash = append(r.stackHash, h)
			r.stackFrames = append(r.stackFrames, append([]uint64(nil), scratch...))
			r.stackValue = append(r.stackValue, s.Value)
			r.stackFirst = append(r.stackFirst, seen)
			stackOf = append(stackOf, i)
			for _, f := range s.Stack {
				used[f] = true
			}
		}
		var tf uint8
		if timed {
			tf = uint8(uint64(s.Time) / r.bucketNs) // #nosec G115 -- a timed profile's times are in [0, span): the quotient is below TimeBuckets
		} else {
			tf = uint8(uint64(i) * TimeBuckets / n) // #nosec G115 -- i < n: the quotient is below TimeBuckets
		}
		k := key{h, tf}
		if j, ok := rows[k]; ok {
			r.sValue[j] += s.Value
			r.sFirstSeen[j] = min(r.sFirstSeen[j], seen)
		} else {
			rows[k] = len(r.sStack)
			rowStack = append(rowStack, si)
			r.sStack = append(r.sStack, h)
			r.sFrame = append(r.sFrame, tf)
			r.sFirstSeen = append(r.sFirstSeen, seen)
			r.sValue = append(r.sValue, s.Value)
		}
		r.total += s.Value
	}
	for i, u := range used {
		if u {
			r.frames = append(r.frames, uint32(i)) // #nosec G115 -- an index of the profile's frames, which are uint32 by design
		}
	}
	r.functions = sumProfileFunctions(p, stackOf, rowStack, r.sFrame, r.sValue)
	return r
}

// sumProfileFunctions sums a run's functions from its sample rows (the
// stack of each, its time bucket and value); stackOf gives a sample of
// each stack, whose frames name its functions.
func sumProfileFunctions(p *profile.Profile, stackOf, rowStack []int, buckets []uint8, values []int64) *functionSums {
	sums := newFunctionSums()
	fn := make([]int32, len(p.Frames))  // frame -> function id + 1
	of := make([][]int32, len(stackOf)) // stack -> its functions, once each
	for k, i := range stackOf {
		for _, f := range p.Samples[i].Stack {
			if fn[f] == 0 {
				fn[f] = sums.id(FunctionHash(p.Frames[f].Name)) + 1
			}
			if id := fn[f] - 1; !slices.Contains(of[k], id) {
				of[k] = append(of[k], id)
			}
		}
	}
	for j, k := range rowStack {
		sums.add(of[k], buckets[j], values[j])
	}
	sums.done()
	return sums
}

// newIngestID returns a random non-zero 63-bit id (positive as Int64 too,
// so it survives JSON and signed tooling).
func newIngestID() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
		if id := binary.LittleEndian.Uint64(b[:]) >> 1; id != 0 {
			return id
		}
	}
}

// Ingest stores p as run meta.App/Build/Run. Frames and stacks are
// interned, samples are summed per (stack, time bucket) and written under a
// fresh ingest id with the sums of its stacks (run stacks), and the runs row that makes
// them visible is written last: a run is either entirely visible or
// absent, whatever fails or is cancelled on the way. Re-ingesting a run replaces it (its newest commit
// wins); the old rows stay, invisible. progress, if not nil, is called
// after each INSERT with rows written so far and rows to write.
func (s *Store) Ingest(ctx context.Context, meta RunMeta, p *profile.Profile, progress func(done, total int)) error {
	return s.IngestRuns(ctx, []Ingestion{{Meta: meta, Profile: p}}, progress)
}

// Ingestion is one run to store.
type Ingestion struct {
	Meta    RunMeta
	Profile *profile.Profile
}

// Ingestions makes the runs a file or a request names (the format table's
// OTLP rows) what IngestRuns takes, each with meta (commit, branch,
// labels, time) and its own app, build and run.
func Ingestions(runs []formats.Run, meta RunMeta) []Ingestion {
	out := make([]Ingestion, len(runs))
	for i, r := range runs {
		m := meta
		m.App, m.Build, m.Run = r.App, r.Build, r.Run
		out[i] = Ingestion{Meta: m, Profile: r.Profile}
	}
	return out
}

// IngestRuns stores several runs as Ingest stores one, and commits them
// together: their runs rows are written last, in one INSERT, so that all of
// them become visible or none (on one server; through a Distributed table
// the rows of each shard commit together). The rows of all runs share
// their INSERTs and look-ups, so that many small runs (spans of traces)
// cost about what one run of their size does. Two ingestions of one run are
// an error.
func (s *Store) IngestRuns(ctx context.Context, runs []Ingestion, progress func(done, total int)) error {
	fail := func(meta RunMeta, err error) error {
		return fmt.Errorf("ingest %s/%s/%s: %w", meta.App, meta.Build, meta.Run, err)
	}
	failAll := func(err error) error {
		if len(runs) == 1 {
			return fail(runs[0].Meta, err)
		}
		return fmt.Errorf("ingest %d runs: %w", len(runs), err)
	}
	st := staging{runs: runs, prepared: make([]*prepared, len(runs)), starts: make([]time.Time, len(runs)),
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
		st.prepared[i], st.starts[i], st.ids[i] = prepare(p, duration), start, newIngestID()
	}
	if err := s.stage(ctx, &st, progress); err != nil {
		return failAll(err)
	}
	return nil
}

// staging is the rows of the runs of one IngestRuns.
type staging struct {
	runs     []Ingestion
	prepared []*prepared
	starts   []time.Time
	ids      []uint64
}

// stackRef is one distinct stack of a run: run index and stack index.
type stackRef struct{ run, stack int }

// stage writes the runs' frames, new stacks, samples and run stacks under
// their ingest ids — rows no reader sees before the runs rows commit them
// — and then the runs rows.
func (s *Store) stage(ctx context.Context, st *staging, progress func(done, total int)) error {
	// Frames and stacks are per app: each written once however many runs
	// have them, and stacks only when the table lacks them.
	type appKey struct {
		app  string
		hash uint64
	}
	frameSeen := map[appKey]bool{}
	var frames []stackRef // run and index into its Profile.Frames
	var stacks []stackRef
	byApp := map[string][]stackRef{}
	stackSeen := map[appKey]bool{}
	samples, runStacks, runFunctions, timelines := 0, 0, 0, 0
	for i, in := range st.runs {
		r, app := st.prepared[i], in.Meta.App
		for _, fi := range r.frames {
			if k := (appKey{app, r.fHash[fi]}); !frameSeen[k] {
				frameSeen[k] = true
				frames = append(frames, stackRef{i, int(fi)})
			}
		}
		for k, h := range r.stackHash {
			if key := (appKey{app, h}); !stackSeen[key] {
				stackSeen[key] = true
				byApp[app] = append(byApp[app], stackRef{i, k})
			}
		}
		samples += len(r.sStack)
		runStacks += len(r.stackHash)
		runFunctions += len(r.functions.hash)
		timelines += r.functions.timelineRows()
	}
	apps := make([]string, 0, len(byApp))
	for app := range byApp {
		apps = append(apps, app)
	}
	sort.Strings(apps)
	for _, app := range apps {
		refs := byApp[app]
		hashes := make([]uint64, len(refs))
		for j, ref := range refs {
			hashes[j] = st.prepared[ref.run].stackHash[ref.stack]
		}
		fresh, err := s.unstoredStacks(ctx, app, hashes)
		if err != nil {
			return err
		}
		for _, j := range fresh {
			stacks = append(stacks, refs[j])
		}
	}
	total := len(frames) + len(stacks) + samples + runStacks + runFunctions + timelines + 1
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
			f := st.runs[ref.run].Profile.Frames[ref.stack]
			apps[i], hashes[i] = st.runs[ref.run].Meta.App, st.prepared[ref.run].fHash[ref.stack]
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
				r := st.prepared[ref.run]
				apps[i], hashes[i], fs[i] = st.runs[ref.run].Meta.App, r.stackHash[ref.stack], r.stackFrames[ref.stack]
				packed[i], tops[i] = packFrames(fs[i])
			}
			return appendColumns(b, apps, hashes, fs, packed, tops)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.samples, &samplesSchema, samples, report, func(b driver.Batch, lo, hi int) error {
			var c sampleColumns
			st.rows(lo, hi, func(i int, r *prepared) int { return len(r.sStack) }, func(i int, r *prepared, a, z int) {
				m, n := st.runs[i].Meta, z-a
				c.apps, c.builds = append(c.apps, repeat(m.App, n)...), append(c.builds, repeat(m.Build, n)...)
				c.runs, c.ids = append(c.runs, repeat(m.Run, n)...), append(c.ids, repeat(st.ids[i], n)...)
				c.stacks, c.frames = append(c.stacks, r.sStack[a:z]...), append(c.frames, r.sFrame[a:z]...)
				c.first, c.values = append(c.first, r.sFirstSeen[a:z]...), append(c.values, r.sValue[a:z]...)
			})
			return appendColumns(b, c.apps, c.builds, c.runs, c.ids, c.stacks, c.frames, c.first, c.values)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.runStacks, &runStacksSchema, runStacks, report, func(b driver.Batch, lo, hi int) error {
			var apps []string
			var ids, hashes, first []uint64
			var values []int64
			st.rows(lo, hi, func(i int, r *prepared) int { return len(r.stackHash) }, func(i int, r *prepared, a, z int) {
				apps, ids = append(apps, repeat(st.runs[i].Meta.App, z-a)...), append(ids, repeat(st.ids[i], z-a)...)
				hashes, values = append(hashes, r.stackHash[a:z]...), append(values, r.stackValue[a:z]...)
				first = append(first, r.stackFirst[a:z]...)
			})
			return appendColumns(b, apps, ids, hashes, values, first)
		})
	}
	if err == nil {
		// Timelines first: a run's totals row in run functions says both
		// are whole (see backfillFunctions).
		err = s.insert(ctx, s.q.functionTimelines, &functionTimelinesSchema, timelines, report, func(b driver.Batch, lo, hi int) error {
			var c timelineColumns
			st.rows(lo, hi, func(i int, r *prepared) int { return r.functions.timelineRows() }, func(i int, r *prepared, a, z int) {
				r.functions.appendTimeline(&c, st.runs[i].Meta.App, st.ids[i], a, z)
			})
			return c.writeTimelines(b)
		})
	}
	if err == nil {
		err = s.insert(ctx, s.q.runFunctions, &runFunctionsSchema, runFunctions, report, func(b driver.Batch, lo, hi int) error {
			var c timelineColumns
			st.rows(lo, hi, func(i int, r *prepared) int { return len(r.functions.hash) }, func(i int, r *prepared, a, z int) {
				r.functions.appendWhole(&c, st.runs[i].Meta.App, st.ids[i], a, z)
			})
			return c.writeWhole(b)
		})
	}
	if err != nil {
		return err
	}
	rows, err := s.runRows(ctx, st)
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
func (st *staging) rows(lo, hi int, count func(i int, r *prepared) int, add func(i int, r *prepared, a, z int)) {
	off := 0
	for i, r := range st.prepared {
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

// runRows are the runs rows that make the staged ingests visible. A
// row's version (committed_ns) is above every earlier commit of its run
// even if clocks went back, so the newest ingest always wins.
func (s *Store) runRows(ctx context.Context, st *staging) ([]runRow, error) {
	rows := make([]runRow, len(st.runs))
	versions := map[[3]string]uint64{}
	byApp := map[string][]string{}
	for _, in := range st.runs {
		byApp[in.Meta.App] = append(byApp[in.Meta.App], in.Meta.Run)
	}
	for app, runs := range byApp {
		if err := s.lastVersions(ctx, app, runs, versions); err != nil {
			return nil, err
		}
	}
	now := unixNanos(time.Now())
	for i, in := range st.runs {
		meta, p, r := in.Meta, in.Profile, st.prepared[i]
		keys := make([]string, 0, len(meta.Labels))
		for k := range meta.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		values := make([]string, len(keys))
		for j, k := range keys {
			values[j] = meta.Labels[k]
		}
		rows[i] = runRow{
			meta: meta, ingestID: st.ids[i], version: max(now, versions[[3]string{meta.App, meta.Build, meta.Run}]+1),
			start: st.starts[i], duration: r.duration,
			labelKeys: keys, labelValues: values, sampleType: p.SampleType, unit: p.Unit,
			total: r.total, samples: uint64(len(p.Samples)), stacks: uint64(len(r.stackHash)), stackSet: StackSetHash(r.stackHash),
			bucketNs: r.bucketNs,
		}
	}
	return rows, nil
}

// lastVersions adds the last commit version of app's runs named runs (of
// any build) to versions, keyed by app, build and run. The names go in
// lists of at most listBytes, so that a commit of any number of runs stays
// under ClickHouse's max_query_size.
func (s *Store) lastVersions(ctx context.Context, app string, runs []string, versions map[[3]string]uint64) error {
	for _, part := range nameLists(runs) {
		rows, err := s.conn.Query(ctx, "SELECT build, run, max(committed_ns) FROM "+s.q.runs+
			" WHERE app = ? AND run IN ? GROUP BY build, run", app, groupSet(part))
		if err != nil {
			return fmt.Errorf("read the runs' last commits: %w", err)
		}
		_, err = collect(rows, "read the runs' last commits", func(scan func(...any) error) (struct{}, error) {
			var build, run string
			var v uint64
			err := scan(&build, &run, &v)
			versions[[3]string{app, build, run}] = v
			return struct{}{}, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// listBytes bounds the values of one IN list or array argument: ClickHouse's
// max_query_size is 256 KiB by default (and a readonly user cannot raise
// it), and a query holds a list's ids at most three times over (its IN
// lists and the key arrays of grouping.keyExpr; docs/SCHEMA.md, "Reads").
const listBytes = 64 << 10

// lists splits vals into lists whose SQL text (cost each, with its
// separator) fits listBytes; a longer value goes alone.
func lists[T any](vals []T, cost func(T) int) [][]T {
	var out [][]T
	lo, size := 0, 0
	for i, v := range vals {
		c := cost(v)
		if i > lo && size+c > listBytes {
			out = append(out, vals[lo:i])
			lo, size = i, 0
		}
		size += c
	}
	if lo < len(vals) {
		out = append(out, vals[lo:])
	}
	return out
}

// nameLists splits names into lists that fit listBytes quoted.
func nameLists(names []string) [][]string {
	return lists(names, func(n string) int { return 2*len(n) + 4 }) // every byte escaped at worst, quotes, comma
}

// idLists splits ingest ids (or hashes) into lists that fit listBytes.
func idLists(ids []uint64) [][]uint64 {
	return lists(ids, func(uint64) int { return 22 }) // 20 digits at most, comma, space
}

// nextVersion returns a commit version above every earlier one of the run.
func (s *Store) nextVersion(ctx context.Context, app, build, run string) (uint64, error) {
	versions := map[[3]string]uint64{}
	if err := s.lastVersions(ctx, app, []string{run}, versions); err != nil {
		return 0, err
	}
	return max(unixNanos(time.Now()), versions[[3]string{app, build, run}]+1), nil
}

// unixNanos is t as the versions (committed_ns) store it: nanoseconds
// since 1970, none before.
func unixNanos(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano())) // #nosec G115 -- not negative
}

type runRow struct {
	meta                   RunMeta
	ingestID, version      uint64
	deleted                bool
	start                  time.Time
	duration               time.Duration
	labelKeys, labelValues []string
	sampleType, unit       string
	total                  int64
	samples, stacks        uint64
	stackSet               uint64
	bucketNs               uint64
}

func (s *Store) insertRun(ctx context.Context, r runRow) error {
	return s.insertRuns(ctx, []runRow{r})
}

// insertRuns writes runs rows in one INSERT (one block: all or none).
func (s *Store) insertRuns(ctx context.Context, rows []runRow) error {
	return s.insertBatches(ctx, s.q.runs, &runsSchema, len(rows), max(1, len(rows)), nil, func(b driver.Batch, lo, hi int) error {
		for _, r := range rows[lo:hi] {
			deleted, buckets, summed := uint8(0), uint8(TimeBuckets), uint8(1)
			if r.deleted {
				deleted, buckets, summed = 1, 0, 0
			}
			// Stack and function sums are written together.
			m := r.meta
			err := b.Append(m.App, m.Build, m.Run, r.ingestID, r.version, deleted,
				time.Unix(r.start.Unix(), 0), uint32(r.start.Nanosecond()), uint64(r.duration), // #nosec G115 -- Nanosecond is in [0, 1e9); durations are checked non-negative
				m.Commit, m.Branch, r.labelKeys, r.labelValues, r.sampleType, r.unit,
				r.total, r.samples, r.stacks, buckets, r.bucketNs, summed, summed, r.stackSet)
			if err != nil {
				return err
			}
		}
		return nil
	})
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

// DeleteRun hides a run by committing a tombstone for it; its rows stay,
// invisible, like those of a replaced ingest. Ingesting the run again
// brings it back. A run that is not visible gives ErrUnknownRun.
func (s *Store) DeleteRun(ctx context.Context, app, build, run string) error {
	if _, err := s.Runs(ctx, app, []string{build}, []string{run}); err != nil {
		return fmt.Errorf("delete run: %w", err)
	}
	version, err := s.nextVersion(ctx, app, build, run)
	if err == nil {
		err = s.insertRun(ctx, runRow{
			meta: RunMeta{App: app, Build: build, Run: run}, ingestID: newIngestID(), version: version,
			deleted: true, start: time.Unix(0, 0),
		})
	}
	if err != nil {
		return fmt.Errorf("delete run %s/%s/%s: %w", app, build, run, err)
	}
	return nil
}
