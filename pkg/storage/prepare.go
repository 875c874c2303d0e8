package storage

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

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

// RunProfile is one run to store.
type RunProfile struct {
	Meta    RunMeta
	Profile *profile.Profile
}

// Check says why WriteRuns would refuse in, for a caller that must tell
// bad input from a failing store (the OTLP receiver: 400, not 503).
func (in RunProfile) Check() error {
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
func (in RunProfile) start() time.Time {
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

// writeSet is the runs of one WriteRuns, prepared for writing.
type writeSet struct {
	runs     []RunProfile
	prepared []*prepared
	starts   []time.Time
	ids      []uint64
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
				fn[f] = sums.id(FunctionHash(p.Frames[f].Name, p.Frames[f].Module)) + 1
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

// stackRef is one distinct stack of a run: run index and stack index.
type stackRef struct{ run, stack int }

// rowCounts is how many rows of each per-run table a writeSet writes.
type rowCounts struct{ samples, runStacks, runFunctions, timelines int }

// distinct lists the frames of the runs (run and index into its
// Profile.Frames) and their stacks by app, each once per app, and counts
// their rows of the per-run tables.
func (w *writeSet) distinct() (frames []stackRef, byApp map[string][]stackRef, n rowCounts) {
	// Frames and stacks are per app: each written once however many runs
	// have them, and stacks only when the table lacks them.
	type appKey struct {
		app  string
		hash uint64
	}
	frameSeen := map[appKey]bool{}
	byApp = map[string][]stackRef{}
	stackSeen := map[appKey]bool{}
	for i, in := range w.runs {
		r, app := w.prepared[i], in.Meta.App
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
		n.samples += len(r.sStack)
		n.runStacks += len(r.stackHash)
		n.runFunctions += len(r.functions.hash)
		n.timelines += r.functions.timelineRows()
	}
	return frames, byApp, n
}
