package tree

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"unsafe"

	"github.com/flamediff/flamediff/pkg/profile"
)

// Side says which build a value belongs to in a comparison.
type Side uint8

const (
	// Base is the reference build (the left side of a diff).
	Base Side = iota
	// Head is the build under test; a plain flame graph uses Head only.
	Head
)

// StackID identifies a distinct stack interned by Builder.Stack.
type StackID uint32

// notSeen marks a (side, stack) that never received an Add.
const notSeen = math.MaxUint64

// Builder collects the per-run values of distinct stacks for both sides and
// builds trees from them. Stacks are interned once; Add is O(1), so feeding
// one value per run and stack (tens of millions of calls) stays cheap. Build
// and Functions do not modify the Builder: they can be called any number of
// times, with different Options, and concurrently with each other (but not
// with Stack, Add, SetRuns, AddRunProfile or Frames.Intern).
type Builder struct {
	frames *Frames

	// Stack i is stackFrames[stackStart[i]:stackStart[i+1]], root first.
	stackFrames []uint32
	stackStart  []int
	stackKey    []stackKey
	// table is an open-addressing hash set of StackID+1 (0 = empty slot).
	table []uint32
	seeds [2]maphash.Seed

	value [2][]int64
	first [2][]uint64
	runs  [2]int
	// runValue[s] holds side s's per-run values (AddRun), run-major: run
	// r's value of stack id at r*runCap[s]+id, so that one run's rows,
	// which storage sends in stack order, fill memory in order. stride[s]
	// is the side's run count at its first AddRun (0: no AddRun yet).
	runValue [2]RunTable
	runCap   [2]int
	stride   [2]int
	// counted[s] is the runs of side s added from exact profiles
	// (profile.Exact), sampled whether any other was added.
	counted [2]int
	sampled bool
	stop    stopper // StopWhen
}

// NewBuilder returns an empty Builder whose stacks refer to frames of f.
func NewBuilder(f *Frames) *Builder {
	return &Builder{
		frames:     f,
		stackStart: []int{0},
		table:      make([]uint32, 1024),
		seeds:      [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
	}
}

// stackKey identifies a stack by two independently seeded 64-bit hashes of
// its frames. Comparing keys instead of frames spares a lookup a cache
// miss on the stored frames (a third of the cost of interning profiles);
// two distinct stacks share a key with odds below 1e-24 even among ten
// million stacks, far less likely than a memory error.
type stackKey [2]uint64

func (b *Builder) key(frames []uint32) stackKey {
	bs := frameBytes(frames)
	return stackKey{maphash.Bytes(b.seeds[0], bs), maphash.Bytes(b.seeds[1], bs)}
}

// Frames returns the interner the Builder's stacks refer to.
func (b *Builder) Frames() *Frames { return b.frames }

// Stack interns a stack of frame ids (root first, ids from the Builder's
// Frames) and returns its id; the same sequence always gets the same id. The
// slice is copied, so the caller may reuse it. An empty stack is allowed: its
// value counts as the root's self.
func (b *Builder) Stack(frames []uint32) StackID {
	k := b.key(frames)
	mask := uint32(len(b.table) - 1) // #nosec G115 -- the table doubles at half full under uint32 stack ids: its length is at most 2^32
	start := uint32(k[0]) & mask     // #nosec G115 -- the low 32 bits of the hash are the intent
	for i := start; ; i = (i + 1) & mask {
		slot := b.table[i]
		if slot == 0 {
			return b.newStack(i, k, frames)
		}
		if b.stackKey[slot-1] == k {
			return StackID(slot - 1)
		}
	}
}

func (b *Builder) newStack(slot uint32, k stackKey, frames []uint32) StackID {
	id := uint32(len(b.stackKey)) // #nosec G115 -- stack ids are uint32 by design: 2^32 distinct stacks do not fit in memory
	b.stackFrames = append(b.stackFrames, frames...)
	b.stackStart = append(b.stackStart, len(b.stackFrames))
	b.stackKey = append(b.stackKey, k)
	for s := range b.value {
		b.value[s] = append(b.value[s], 0)
		b.first[s] = append(b.first[s], notSeen)
	}
	b.table[slot] = id + 1
	if 2*len(b.stackKey) >= len(b.table) {
		b.grow()
	}
	return StackID(id)
}

// grow doubles the hash table, keeping the load factor under one half so
// that probe sequences stay short.
func (b *Builder) grow() {
	b.table = make([]uint32, 2*len(b.table))
	mask := uint32(len(b.table) - 1) // #nosec G115 -- the table doubles at half full under uint32 stack ids: its length is at most 2^32
	for id, k := range b.stackKey {
		i := uint32(k[0]) & mask // #nosec G115 -- the low 32 bits of the hash are the intent
		for b.table[i] != 0 {
			i = (i + 1) & mask
		}
		b.table[i] = uint32(id) + 1 // #nosec G115 -- stack ids are uint32 by design: 2^32 distinct stacks do not fit in memory
	}
}

func (b *Builder) stack(id uint32) []uint32 {
	return b.stackFrames[b.stackStart[id]:b.stackStart[id+1]]
}

func frameBytes(frames []uint32) []byte {
	if len(frames) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&frames[0])), 4*len(frames))
}

// Reserve makes room for stacks more stacks of frames frame ids in all, so
// that interning a known number of stacks does not regrow the Builder.
func (b *Builder) Reserve(stacks, frames int) {
	b.stackFrames = slices.Grow(b.stackFrames, frames)
	b.stackStart = slices.Grow(b.stackStart, stacks)
	b.stackKey = slices.Grow(b.stackKey, stacks)
	for s := range b.value {
		b.value[s] = slices.Grow(b.value[s], stacks)
		b.first[s] = slices.Grow(b.first[s], stacks)
	}
	for 2*(len(b.stackKey)+stacks) >= len(b.table) {
		b.grow()
	}
}

// Stacks is the number of distinct stacks interned so far.
func (b *Builder) Stacks() int { return len(b.stackKey) }

// FrameRefs is the number of frames of all stacks: no tree of the
// builder has more nodes than this plus one per parent ("other").
func (b *Builder) FrameRefs() int { return len(b.stackFrames) }

// Add adds one run's value for stack s on a side. firstSeen orders siblings
// in averaged trees: a node is ordered by the smallest firstSeen among the
// stacks through it. s must come from b.Stack. Values should be
// non-negative (pprof semantics); maxNodes pruning relies on it.
func (b *Builder) Add(side Side, s StackID, value int64, firstSeen uint64) {
	b.value[side][s] += value
	if firstSeen < b.first[side][s] {
		b.first[side][s] = firstSeen
	}
}

// AddRun adds run's value for stack s on a side, as Add does, and keeps
// it apart per run so that Build and Functions can test every node's
// change across runs (see NodeStats). SetRuns(side, n) must come before
// the side's first AddRun and not change after it; run is in [0, n).
// Callers that have no run index use Add and get no statistics.
func (b *Builder) AddRun(side Side, run int, s StackID, value int64, firstSeen uint64) {
	stride := b.stride[side]
	if stride == 0 {
		stride = b.runs[side]
		b.stride[side] = stride
	}
	if run < 0 || run >= stride {
		panic(fmt.Sprintf("tree: AddRun of run %d on a side of %d runs", run, stride))
	}
	if int(s) >= b.runCap[side] {
		// room for every stack interned so far, or twice as many stacks
		// as before: interned stack by stack, the runs move rarely
		b.growRuns(side, max(len(b.stackKey), 2*b.runCap[side]))
	}
	b.runValue[side].Add(run*b.runCap[side]+int(s), value)
	b.Add(side, s, value, firstSeen)
}

// RunTable is a side's per-run values, run-major (run r's value of stack
// id at r*n+id, n stacks): in 32 bits while every value fits, as a
// selection's (run, stack) sums nearly always do, which halves the
// largest table a query holds (80 MB at 100 runs a side over 50,000
// stacks); in 64 once one does not.
type RunTable struct {
	narrow []int32
	wide   []int64
}

// NewRunTable returns a table of n zeros, in 32 bits.
func NewRunTable(n int) RunTable { return RunTable{narrow: make([]int32, n)} }

// Add adds v to the value at i, widening the table when the sum needs it.
func (t *RunTable) Add(i int, v int64) {
	if t.narrow != nil {
		if sum := int64(t.narrow[i]) + v; sum >= math.MinInt32 && sum <= math.MaxInt32 {
			t.narrow[i] = int32(sum) // #nosec G115 -- it fits, as just checked
			return
		}
		t.widen()
	}
	t.wide[i] += v
}

// At is the value at i.
func (t RunTable) At(i int) int64 {
	if t.narrow != nil {
		return int64(t.narrow[i])
	}
	return t.wide[i]
}

// Len is the number of values.
func (t RunTable) Len() int { return len(t.narrow) + len(t.wide) }

// widen turns a 32-bit table into a 64-bit one.
func (t *RunTable) widen() {
	if t.narrow == nil {
		return
	}
	t.wide = make([]int64, len(t.narrow))
	for i, v := range t.narrow {
		t.wide[i] = int64(v)
	}
	t.narrow = nil
}

// runSlice is one run's values of a RunTable, indexed by stack id: one
// of the two is set.
type runSlice struct {
	narrow []int32
	wide   []int64
}

func (t RunTable) row(lo, hi int) runSlice {
	if t.narrow != nil {
		return runSlice{narrow: t.narrow[lo:hi]}
	}
	return runSlice{wide: t.wide[lo:hi]}
}

// AddRunTable adds every run's value of every stack of a side at once:
// t.At(r*n+id) is run r's value of stack id, for the n = Stacks() =
// len(first) stacks interned so far, and first[id] the smallest
// first-seen key among them (math.MaxUint64 where the side never saw the
// stack). It is AddRun for callers that gathered a side's values before
// the stacks were interned; the side must have had no AddRun yet, and the
// Builder keeps t as its per-run table.
func (b *Builder) AddRunTable(side Side, t RunTable, first []uint64) {
	runs, n := b.runs[side], len(b.stackKey)
	if b.stride[side] != 0 || len(first) != n || t.Len() != runs*n {
		panic(fmt.Sprintf("tree: AddRunTable of %d values, %d first-seen keys on a side of %d runs over %d stacks (after AddRun: %v)",
			t.Len(), len(first), runs, n, b.stride[side] != 0))
	}
	b.runValue[side], b.runCap[side], b.stride[side] = t, n, runs
	if t.narrow != nil {
		addRunSums(b.value[side], t.narrow, runs, n)
	} else {
		addRunSums(b.value[side], t.wide, runs, n)
	}
	seen := b.first[side]
	for id, f := range first {
		seen[id] = min(seen[id], f)
	}
}

// addRunSums adds each stack's values over the runs to sum.
func addRunSums[T int32 | int64](sum []int64, values []T, runs, n int) {
	for r := range runs {
		for id, v := range values[r*n : (r+1)*n] {
			sum[id] += int64(v)
		}
	}
}

// growRuns makes room in a side's per-run values for capacity stacks.
func (b *Builder) growRuns(side Side, capacity int) {
	b.runValue[side].widen()
	old, oldCap := b.runValue[side].wide, b.runCap[side]
	rv := make([]int64, b.stride[side]*capacity)
	for r := range b.stride[side] {
		copy(rv[r*capacity:], old[r*oldCap:(r+1)*oldCap])
	}
	b.runValue[side], b.runCap[side] = RunTable{wide: rv}, capacity
}

// SetRuns sets the number of runs of a side, the divisor that turns sums into
// per-run averages. A side with 0 runs takes no part in Build or Functions;
// Build makes a diff exactly when Base has runs. Negative n counts as 0.
func (b *Builder) SetRuns(side Side, n int) {
	b.runs[side] = max(n, 0)
}

// Runs is the number of runs of a side (SetRuns).
func (b *Builder) Runs(side Side) int { return b.runs[side] }

// AddRunProfile adds every sample of run run's profile to a side (see
// AddRun): it interns the profile's frames and stacks and uses p.FirstSeen
// as the ordering key. It does not change the side's run count (call
// SetRuns). A profile that fails p.CheckValid is refused with that error
// and nothing is added.
func (b *Builder) AddRunProfile(side Side, run int, p *profile.Profile) error {
	if err := b.addProfile(p, func(s StackID, value int64, first uint64) { b.AddRun(side, run, s, value, first) }); err != nil {
		return err
	}
	if p.Exact {
		b.counted[side]++
	} else {
		b.sampled = true
	}
	return nil
}

// counts says whether every run was added from an exact profile
// (profile.Exact): then a side of one run is known not to vary.
func (b *Builder) counts() bool {
	return !b.sampled && b.counted[Head] >= b.runs[Head] && b.counted[Base] >= b.runs[Base]
}

// exact says whether the runs compare exactly (docs/STATISTICS.md): every
// run of a side holds the same value of every stack, and a side of one run
// is of exact profiles (counts).
func (b *Builder) exact() bool {
	col := 0
	for _, s := range []Side{Head, Base} {
		n := b.runs[s]
		if n == 1 && !b.counts() {
			return false
		}
		first := b.runRow(col)
		for r := 1; r < n; r++ {
			if row := b.runRow(col + r); !slices.Equal(first.narrow, row.narrow) || !slices.Equal(first.wide, row.wide) {
				return false
			}
		}
		col += n
	}
	return true
}

func (b *Builder) addProfile(p *profile.Profile, add func(s StackID, value int64, first uint64)) error {
	if err := p.CheckValid(); err != nil {
		return err
	}
	ids := make([]uint32, len(p.Frames))
	for i, f := range p.Frames {
		ids[i] = b.frames.Intern(f.Name, f.Module)
		b.frames.SetSource(ids[i], f.File, f.Line)
	}
	var buf []uint32
	for i, s := range p.Samples {
		buf = buf[:0]
		for _, f := range s.Stack {
			buf = append(buf, ids[f])
		}
		add(b.Stack(buf), s.Value, p.FirstSeen(i))
	}
	return nil
}
