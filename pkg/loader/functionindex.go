package loader

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// FunctionIndex numbers the distinct functions of a selection's stacks
// (frame identities, profile.FrameIdentity: two modules' functions of one
// name are two) and lists each stack's functions by number, so that
// over-time queries sum rows into slices instead of hashing names per
// row. Functions are known by their titles (tree.Frames.Title's rule:
// the name, and the module's identity after it when another function of
// the selection has that name). Stack texts come through the stack cache.
//
// A stack's functions are kept in call order, root first, one per frame:
// the call edges are the adjacent pairs. A function's second and later
// occurrences in a stack (recursion) are stored complemented (^id, so
// negative): inclusive sums skip them and count each function once per
// stack, while edges read them back with ^.
type FunctionIndex struct {
	names   []string // titles by number, once indexed
	plain   []string // names by number
	modules []string // module identities by number
	fhash   []uint64 // storage.FunctionHash by number
	// stack finds a stack hash's number k; stack k's frames are
	// calls[start[k]:start[k+1]]. Stacks are numbered in the order of
	// the selection's hashes (ascending; any the cache lost meanwhile
	// last), and hashes[k] is stack k's.
	stack  hashindex.Index
	hashes []uint64
	calls  []int32
	start  []uint32

	ids        map[profile.Identity]int32
	frameNames []int32 // frame of the current frame table -> function + 1
	table      *frameTable
	stamp      []uint32 // function -> 1 + the stack it was last seen in
}

// IndexFunctions indexes the stacks of runs, read through the cache (nil:
// one of this call's own).
func IndexFunctions(ctx context.Context, store *storage.Store, cache *Cache, runs []storage.Run) (*FunctionIndex, error) {
	cache = cache.orOwn()
	hashes := cache.selection(runs)
	if hashes == nil {
		var err error
		if hashes, err = cache.fillRuns(ctx, store, runs, nil); err != nil {
			return nil, err
		}
		cache.remember(runs, hashes)
	}
	x := &FunctionIndex{stack: hashindex.New(len(hashes)), start: make([]uint32, 1, len(hashes)+1),
		hashes: make([]uint64, 0, len(hashes)), ids: map[profile.Identity]int32{}}
	lacking := cache.resolve(hashes, x.add)
	if len(lacking) > 0 { // the cache started over meanwhile: read them into one of this query's own
		own := NewCache(math.MaxInt)
		if err := own.fill(ctx, store, runs[0].App, lacking); err != nil {
			return nil, err
		}
		lacking = own.resolve(lacking, x.add)
	}
	if len(lacking) > 0 {
		return nil, x.missing(lacking[0])
	}
	x.title()
	x.ids, x.frameNames, x.table, x.stamp = nil, nil, nil, nil
	return x, nil
}

// title titles the functions once all are in.
func (x *FunctionIndex) title() {
	named := make(map[string]int, len(x.plain))
	for _, name := range x.plain {
		named[name]++
	}
	x.names = make([]string, len(x.plain))
	for f, name := range x.plain {
		x.names[f] = name
		if named[name] > 1 {
			x.names[f] = x.qualified(f)
		}
	}
}

// qualified is function f's name with its module's identity after it
// (the name alone for a module of no identity, an executable's).
func (x *FunctionIndex) qualified(f int) string {
	if m := x.modules[f]; m != "" {
		return x.plain[f] + " (" + m + ")"
	}
	return x.plain[f]
}

// add numbers one stack's functions.
func (x *FunctionIndex) add(hash uint64, frames []uint32, table *frameTable) {
	if x.table != table {
		x.table, x.frameNames = table, nil
	}
	if n := len(table.frames); len(x.frameNames) < n {
		x.frameNames = append(x.frameNames, make([]int32, n-len(x.frameNames))...)
	}
	// A selection's stacks are alike in depth: once some are in, make
	// room for all (append would copy and drop about four times the
	// final size on the way there).
	if k := len(x.hashes); k == 1024 && cap(x.hashes) > 2*k {
		want := len(x.calls) * cap(x.hashes) / k
		x.calls = slices.Grow(x.calls, want+want/32-len(x.calls))
	}
	for _, f := range frames {
		id := x.frameNames[f] - 1
		if id < 0 {
			fr := &table.frames[f]
			k := profile.FrameIdentity(fr.Name, fr.Module)
			var ok bool
			if id, ok = x.ids[k]; !ok {
				id = int32(len(x.plain)) // #nosec G115 -- function ids are int32 by design
				x.ids[k] = id
				x.plain, x.modules = append(x.plain, fr.Name), append(x.modules, k.Module)
				x.fhash = append(x.fhash, storage.FunctionHash(fr.Name, fr.Module))
			}
			x.frameNames[f] = id + 1
		}
		if int(id) >= len(x.stamp) {
			x.stamp = append(x.stamp, make([]uint32, int(id)+1-len(x.stamp))...)
		}
		// inclusive: once per stack
		stack := uint32(len(x.start)) // #nosec G115 -- a stack number + 1: stack numbers are uint32
		if x.stamp[id] == stack {
			id = ^id
		} else {
			x.stamp[id] = stack
		}
		x.calls = append(x.calls, id)
	}
	x.hashes = append(x.hashes, hash)
	x.stack.Put(hash, uint32(len(x.start)-1), x.hashes) // #nosec G115 -- stack numbers fit: the store caps rows far below 2^32
	x.start = append(x.start, uint32(len(x.calls)))     // #nosec G115 -- as above
}

// Titles lists the functions' titles by number.
func (x *FunctionIndex) Titles() []string { return x.names }

// Match returns the functions a query names by function: the one it
// titles, or whose name and module identity it is ("stringify
// (qs/lib/stringify.js)", whatever the selection's titles), else every
// function of that name (more than one when the name is shared).
func (x *FunctionIndex) Match(function string) []int32 {
	var named []int32
	for f, name := range x.plain {
		if x.names[f] == function || x.qualified(f) == function {
			return []int32{int32(f)} // #nosec G115 -- function ids are int32 by design
		}
		if name == function {
			named = append(named, int32(f)) // #nosec G115 -- as above
		}
	}
	return named
}

// Lookup returns the number of the stack of hash, or an error: a sample
// row whose stack has no text must not be counted under no function.
func (x *FunctionIndex) Lookup(hash uint64) (uint32, error) {
	k, ok := x.stack.Get(hash, x.hashes)
	if !ok {
		return 0, x.missing(hash)
	}
	return k, nil
}

// Cursor is Lookup for rows that come in ascending hash order, as the
// run stacks and samples tables return each run's (Store.StackValues,
// Store.Timeline: a stack's time buckets one after another): it tries the
// stack it found last and the few that follow before the table. Each
// reader takes its own.
type Cursor struct {
	x  *FunctionIndex
	at int // the stack found last
}

// Cursor returns a cursor at the first stack.
func (x *FunctionIndex) Cursor() *Cursor { return &Cursor{x: x} }

// Cursors returns n cursors at the first stack: one per run, whose rows
// come in hash order run by run.
func (x *FunctionIndex) Cursors(n int) []*Cursor {
	out := make([]*Cursor, n)
	for i := range out {
		out[i] = x.Cursor()
	}
	return out
}

func (c *Cursor) Find(hash uint64) (uint32, error) {
	hs := c.x.hashes
	for k := c.at; k < min(c.at+4, len(hs)); k++ {
		if hs[k] == hash {
			c.at = k
			return uint32(k), nil // #nosec G115 -- a stack number
		}
	}
	k, err := c.x.Lookup(hash)
	c.at = int(k)
	return k, err
}

func (x *FunctionIndex) missing(hash uint64) error {
	return fmt.Errorf("%w: stack %x has samples but no text, or lacks a frame", storage.ErrMissingFrame, hash)
}

// Functions returns stack k's functions root first, repeats complemented
// (see FunctionIndex).
func (x *FunctionIndex) Functions(k uint32) []int32 { return x.calls[x.start[k]:x.start[k+1]] }

// Stacks is the number of stacks indexed.
func (x *FunctionIndex) Stacks() int { return len(x.start) - 1 }

// edgeKey is the caller<<32 | callee of the edge from frame i-1 to frame i
// of fs (i > 0).
func edgeKey(fs []int32, i int) uint64 {
	caller, callee := fs[i-1], fs[i]
	if caller < 0 {
		caller = ^caller
	}
	if callee < 0 {
		callee = ^callee
	}
	return uint64(caller)<<32 | uint64(callee) // #nosec G115 -- both are non-negative here
}

// BuildSet records which builds each stack has rows in: one bit per build.
type BuildSet struct {
	words int // per stack
	bits  []uint64
}

func NewBuildSet(stacks, builds int) BuildSet {
	w := (builds + 63) / 64
	return BuildSet{words: w, bits: make([]uint64, stacks*w)}
}

func (b BuildSet) Add(k uint32, g int) { b.bits[int(k)*b.words+g/64] |= 1 << (g % 64) }

func (b BuildSet) of(k uint32) []uint64 { return b.bits[int(k)*b.words : int(k+1)*b.words] }

// ChangedEdges gives each build the call edges that differ between some
// two consecutive builds, among those it has (a build has the edges of
// the stacks it has rows in, as seen records): evolution only reports the
// edges each build added or removed, and as every build gets the same
// subset, those come out exactly.
//
// Edges are not numbered all at once (random stacks over a few thousand
// functions have tens of millions): an edge of a stack that every build
// has is in every build, so only the edges of the other stacks can have
// changed. Those are collected with the builds of their stacks; the
// stacks of every build then only strike out the candidates they hold
// too, and what is left is compared build by build.
func (x *FunctionIndex) ChangedEdges(seen BuildSet, builds int) []map[evolution.Edge]struct{} {
	out := make([]map[evolution.Edge]struct{}, builds)
	for g := range out {
		out[g] = map[evolution.Edge]struct{}{}
	}
	if builds < 2 {
		return out
	}
	w := seen.words
	all := make([]uint64, w)
	for g := range builds {
		all[g/64] |= 1 << (g % 64)
	}
	kind := func(k uint32) int { // 0: no build, 1: some, 2: every build
		none, every := true, true
		for i, b := range seen.of(k) {
			none = none && b == 0
			every = every && b == all[i]
		}
		switch {
		case none:
			return 0
		case every:
			return 2
		}
		return 1
	}
	candidates := map[uint64]int32{} // edge -> index into keys
	var keys []uint64
	var in []uint64         // builds of candidate i: in[i*w:(i+1)*w]
	n := uint32(x.Stacks()) // #nosec G115 -- stack numbers are uint32
	for k := range n {
		if kind(k) != 1 {
			continue
		}
		fs, bs := x.Functions(k), seen.of(k)
		for i := 1; i < len(fs); i++ {
			e := edgeKey(fs, i)
			c, ok := candidates[e]
			if !ok {
				c = int32(len(keys)) // #nosec G115 -- fewer edges than frames
				candidates[e] = c
				keys = append(keys, e)
				in = append(in, make([]uint64, w)...)
			}
			for j, b := range bs {
				in[int(c)*w+j] |= b
			}
		}
	}
	if len(keys) == 0 {
		return out
	}
	for k := range n {
		if kind(k) != 2 {
			continue
		}
		fs := x.Functions(k)
		for i := 1; i < len(fs); i++ {
			if c, ok := candidates[edgeKey(fs, i)]; ok {
				copy(in[int(c)*w:], all)
			}
		}
	}
	has := func(c, g int) bool { return in[c*w+g/64]&(1<<(g%64)) != 0 }
	for c, e := range keys {
		changed := false
		for g := 1; g < builds && !changed; g++ {
			changed = has(c, g) != has(c, g-1)
		}
		if !changed {
			continue
		}
		edge := evolution.Edge{Caller: x.names[e>>32], Callee: x.names[uint32(e)]} // #nosec G115 -- the low half of a packed pair
		for g := range builds {
			if has(c, g) {
				out[g][edge] = struct{}{}
			}
		}
	}
	return out
}

// Sums accumulates values by function number.
type Sums struct {
	Total float64
	fn    []float64
	// seen marks the functions of a stack that was present, even if its
	// value was 0. Rows of positive value leave it to finish (a function
	// with a non-zero sum was present), which saves a store per frame.
	seen []bool
}

func (x *FunctionIndex) NewSums() *Sums {
	return &Sums{fn: make([]float64, len(x.names)), seen: make([]bool, len(x.names))}
}

// AddTo adds stack k's value to s, and to run (a run's sums by function):
// to each function of the stack once (FunctionIndex's inclusive sums), in
// one pass over its functions for both.
func (x *FunctionIndex) AddTo(s *Sums, run []float64, k uint32, value float64) {
	s.Total += value
	if value > 0 {
		for _, f := range x.Functions(k) {
			if f >= 0 {
				s.fn[f] += value
				run[f] += value
			}
		}
		return
	}
	for _, f := range x.Functions(k) {
		if f >= 0 {
			s.fn[f] += value
			run[f] += value
			s.seen[f] = true
		}
	}
}

// Add adds v to function f's sum and marks f present, even when v is 0.
func (s *Sums) Add(f int32, v float64) {
	s.fn[f] += v
	s.seen[f] = true
}

// AddSums adds the sums of t to s.
func (s *Sums) AddSums(t *Sums) {
	s.Total += t.Total
	for f, v := range t.fn {
		s.fn[f] += v
	}
	for f, ok := range t.seen {
		s.seen[f] = s.seen[f] || ok
	}
}

// Finish completes seen and divides the sums by runs, giving per-run
// values. Sample values are integers, so sums below 2^53 are exact
// whatever order the rows came in, and so are the per-run values.
func (s *Sums) Finish(runs int) {
	n := float64(max(runs, 1)) // a build without runs has no rows either
	s.Total /= n
	for f, v := range s.fn {
		if v != 0 {
			s.seen[f] = true
			s.fn[f] = v / n
		}
	}
}

// ByTitle turns sums into the map evolution takes.
func (x *FunctionIndex) ByTitle(s *Sums) map[string]float64 { return x.ByTitleOf(s, nil) }

// ByTitleOf is ByTitle of the functions that keep marks (all when nil).
func (x *FunctionIndex) ByTitleOf(s *Sums, keep []bool) map[string]float64 {
	m := map[string]float64{}
	for f, ok := range s.seen {
		if ok && (keep == nil || keep[f]) {
			m[x.names[f]] = s.fn[f]
		}
	}
	return m
}

// RunValues calls visit with each run's inclusive sum of each function f
// it has (a number of x; runs indexed as given): from the run functions
// table (Store.RunFunctionValues), or, when some run has no rows there
// yet, summed here from its run stacks rows, one row per (run, stack).
// The two agree: each stack holding a function counts once.
func (x *FunctionIndex) RunValues(ctx context.Context, store *storage.Store, runs []storage.Run, visit func(run int, f int32, value float64)) error {
	number := make(map[uint64]int32, len(x.fhash))
	for f, h := range x.fhash {
		number[h] = int32(f) // #nosec G115 -- function ids are int32 by design
	}
	summed, err := store.RunFunctionValues(ctx, runs, len(x.names), func(r int, hash uint64, value int64) error {
		f, ok := number[hash]
		if !ok {
			return fmt.Errorf("%w: run %s/%s/%s has a function (%x) that none of the selection's stacks names",
				storage.ErrMissingFrame, runs[r].App, runs[r].Build, runs[r].Run, hash)
		}
		visit(r, f, float64(value))
		return nil
	})
	if summed || err != nil {
		return err
	}
	cursors := x.Cursors(len(runs))
	return store.RunStackValues(ctx, runs, func(r int, hash uint64, value int64) error {
		k, err := cursors[r].Find(hash)
		if err != nil {
			return err
		}
		for _, f := range x.Functions(k) {
			if f >= 0 {
				visit(r, f, float64(value))
			}
		}
		return nil
	})
}
