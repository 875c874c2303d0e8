package loader

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flamediff/flamediff/pkg/internal/fault"
	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/tree"
)

// valueRow is one (run, stack) sum read from ClickHouse.
type valueRow struct {
	group     int
	hash      uint64
	value     int64
	firstSeen uint64
}

// Load fills an engine with the value of every stack in every head and
// base run (one row per run and stack, summed at ingest; see
// Store.StackValues), each run under its index in chronological order, so
// that the engine can test each node across runs.
//
// Two connections share the work. The side line lists the selection's
// stacks, ascending by hash (those of a selection seen before from the
// cache at once, else every stack of the runs the cache lacks, read from
// ClickHouse and cached), then interns them in the engine in that order.
// Meanwhile the values stream in; once the list is out, each row goes to
// its run's slot of its stack's place in the list (rows that come before
// wait, and go there while the side line reads frame texts and interns).
// Each run's rows arrive in ascending hash order (the run stacks table's
// sort key), so finding a row's place is a step forward in the list and
// its value lands next to the last one's. Once interned, stack k of the
// list is engine stack k: the staged values become the engine's per-run
// table as they are. Rows of stacks not in the list are read by hash and
// added one by one.
//
// A nil cache stands for a fresh one of this load's own.
func Load(ctx context.Context, store *storage.Store, cache *Cache, head, base []storage.Run) (*tree.Builder, error) {
	all := append(head[:len(head):len(head)], base...) // Store.Runs lists them by start time
	groups := storage.EachRun(all)
	app := head[0].App
	cache = cache.orOwn()
	in := newInterner(tree.NewBuilder(tree.NewFrames()))
	known := cache.selection(all)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The side line sends one listing (the hashes, or why there are
	// none), then its result: the error it ended with, if any.
	listed := make(chan listing, 1)
	sideline := make(chan error, 1)
	go func() {
		sent := false
		end := func(err error) {
			if !sent {
				listed <- listing{err: err}
			}
			sideline <- err
		}
		defer func() { // a panic here would kill the process, out of the caller's reach
			if p := recover(); p != nil {
				end(fmt.Errorf("stack reader panicked: %v", p))
			}
		}()
		fault.Point("query.stackreader")
		list := func(hashes []uint64) {
			listed <- listing{hashes: hashes}
			sent = true
		}
		hashes := known
		if missing := cache.uncached(all); known == nil && len(missing) > 0 {
			// listed before the frame texts are read: the waiting
			// values need only the list
			var err error
			if hashes, err = cache.fillRuns(ctx, store, missing, list); err != nil {
				end(err)
				return
			}
		} else {
			list(hashes)
		}
		end(intern(ctx, store, cache, in, app, hashes))
	}()
	b := in.b
	b.SetRuns(tree.Head, len(head))
	b.SetRuns(tree.Base, len(base))

	var stage *staging
	var pending waiting
	// take stages rows from the moment the side line has listed the
	// stacks (waiting for that, or only if it has already), or keeps
	// why it could not in listErr.
	var listErr error
	take := func(wait bool) {
		var l listing
		if wait {
			l = <-listed
		} else {
			select {
			case l = <-listed:
			default:
				return
			}
		}
		if listErr = l.err; listErr == nil {
			stage = newStaging(l.hashes, len(head), len(base))
		}
	}
	err := store.StackValues(ctx, groups, func(g int, hash uint64, value int64, firstSeen uint64) error {
		r := valueRow{g, hash, value, firstSeen}
		if stage == nil && listErr == nil && pending.n%1024 == 0 { // a look per row would cost more than the row
			if take(false); listErr != nil {
				return listErr
			}
		}
		if stage == nil || !stage.add(r) {
			pending.add(r)
		}
		return nil
	})
	if err == nil && stage == nil && listErr == nil {
		take(true)
	}
	if err != nil || listErr != nil {
		cancel()
		sideErr := <-sideline
		return nil, cmp.Or(err, sideErr)
	}
	rest := pending.drain(stage) // rows of stacks not in the list
	if err := <-sideline; err != nil {
		return nil, err
	}
	stage.into(b, in)

	var missing []uint64
	seen := map[uint64]bool{}
	for _, r := range rest {
		if _, ok := in.id(r.hash); !ok && !seen[r.hash] {
			seen[r.hash] = true
			missing = append(missing, r.hash)
		}
	}
	if err := intern(ctx, store, cache, in, app, missing); err != nil {
		return nil, err
	}
	for _, r := range rest {
		side, run := stage.sideRun(r.group)
		id, _ := in.id(r.hash)
		b.AddRun(side, run, id, r.value, r.firstSeen)
	}
	if known == nil {
		cache.remember(all, slices.Clone(in.hashes))
	}
	return b, nil
}

// waiting holds the value rows that come before the stack list, in
// blocks allocated as the rows come: a query whose stacks are listed
// early holds few, and none is copied as they grow (a slice sized for
// every row of the selection took 32 bytes a row, zeroed).
type waiting struct {
	blocks [][]valueRow
	n      int
}

const waitingBlock = 1 << 14 // rows (512 KB)

func (w *waiting) add(r valueRow) {
	if w.n%waitingBlock == 0 {
		w.blocks = append(w.blocks, make([]valueRow, 0, waitingBlock))
	}
	last := &w.blocks[len(w.blocks)-1]
	*last = append(*last, r)
	w.n++
}

// drain stages the waiting rows, freeing each block once staged, and
// returns those whose stacks are not in the list.
func (w *waiting) drain(s *staging) []valueRow {
	var rest []valueRow
	for i, block := range w.blocks {
		for _, r := range block {
			if !s.add(r) {
				rest = append(rest, r)
			}
		}
		w.blocks[i] = nil
	}
	w.blocks, w.n = nil, 0
	return rest
}

// listing is the side line's list of a selection's stacks (ascending
// hashes), or why it has none.
type listing struct {
	hashes []uint64
	err    error
}

// staging holds the values of a selection's stacks by their place in its
// list of hashes until the stacks are interned: per side, run-major (run
// r's value of stack k at r*n+k) as the engine keeps them (a
// tree.RunTable, 32-bit while the values fit), and the smallest
// first-seen key of each stack.
type staging struct {
	hashes []uint64 // ascending
	at     int      // where the last search ended
	head   int      // head runs: groups from here on are base runs
	values [2]tree.RunTable
	first  [2][]uint64
}

func newStaging(hashes []uint64, head, base int) *staging {
	n := len(hashes)
	s := &staging{hashes: hashes, head: head}
	for side, runs := range [2]int{tree.Head: head, tree.Base: base} {
		s.values[side] = tree.NewRunTable(runs * n)
		s.first[side] = make([]uint64, n)
		for k := range s.first[side] {
			s.first[side][k] = math.MaxUint64
		}
	}
	return s
}

// add stages r, or reports that its stack is not in the list.
func (s *staging) add(r valueRow) bool {
	k, ok := s.find(r.hash)
	if !ok {
		return false
	}
	side, run := s.sideRun(r.group)
	s.values[side].Add(run*len(s.hashes)+k, r.value)
	s.first[side][k] = min(s.first[side][k], r.firstSeen)
	return true
}

// sideRun is the side and run of a group of the values read: head runs,
// then base runs.
func (s *staging) sideRun(group int) (tree.Side, int) {
	if group >= s.head {
		return tree.Base, group - s.head
	}
	return tree.Head, group
}

// find returns the place of hash in the list, starting from where the
// last search ended: a stream of ascending hashes costs a step or two
// each. The next 8 places are counted without a branch each: rows skip a
// few stacks each, and a loop stepping to the place mispredicted its exit
// on nearly every row.
func (s *staging) find(hash uint64) (int, bool) {
	hs, i := s.hashes, s.at
	if i >= len(hs) || hs[i] > hash { // a new run of ascending hashes
		i = 0
	}
	if i+8 <= len(hs) {
		n := 0
		for _, h := range hs[i : i+8 : i+8] {
			n += below(h, hash)
		}
		i += n
	}
	if i < len(hs) && hs[i] < hash { // a gap, or near the end: search what is left
		j, _ := slices.BinarySearch(hs[i:], hash)
		i += j
	}
	s.at = i
	return i, i < len(hs) && hs[i] == hash
}

// below is 1 if a < b, else 0, without a branch.
func below(a, b uint64) int {
	if a < b {
		return 1
	}
	return 0
}

// into puts the staged values into the engine whose interner interned the
// list (and nothing else yet): as its per-run table when stack k of the
// list is engine stack k, as it is when every stack is new, else (stacks
// that came out equal in the engine, such as names equal once made valid
// UTF-8) value by value.
func (s *staging) into(b *tree.Builder, in *interner) {
	n := len(s.hashes)
	same := b.Stacks() == n
	ids := make([]tree.StackID, n)
	for k, h := range s.hashes {
		if k < len(in.hashes) && in.hashes[k] == h { // interned in list order
			ids[k] = in.ids[k]
		} else {
			ids[k], _ = in.id(h)
		}
		same = same && ids[k] == tree.StackID(k) // #nosec G115 -- k < n, a number of engine stacks
	}
	for _, side := range []tree.Side{tree.Head, tree.Base} {
		runs := s.values[side].Len() / max(n, 1)
		if same {
			b.AddRunTable(side, s.values[side], s.first[side])
			continue
		}
		for r := range runs {
			for k := range n {
				if v, first := s.values[side].At(r*n+k), s.first[side][k]; v != 0 || first != math.MaxUint64 {
					b.AddRun(side, r, ids[k], v, first)
				}
			}
		}
	}
}

// orOwn returns c, or a fresh cache for one query when c is nil.
func (c *Cache) orOwn() *Cache {
	if c == nil {
		return NewCache(math.MaxInt)
	}
	return c
}

// Rows is how many (run, stack) rows runs have: what a read of their
// per-run values returns.
func Rows(runs []storage.Run) int {
	n := 0
	for _, r := range runs {
		n += int(r.Stacks) // #nosec G115 -- a run's distinct stacks, far below 2^63
	}
	return n
}

// intern puts the stacks of hashes that the interner lacks into it, from
// the cache, reading into it those it lacks. Stacks the cache lost
// meanwhile (it starts over when full) are read again into a cache of this
// query's own. A hash without a stack row or frame texts (tables edited
// by hand) is an error.
func intern(ctx context.Context, store *storage.Store, cache *Cache, in *interner, app string, hashes []uint64) error {
	todo := hashes
	if len(in.hashes) == 0 { // the first stacks: sized for them at once
		in.index = hashindex.New(len(hashes))
		in.hashes, in.ids = make([]uint64, 0, len(hashes)), make([]tree.StackID, 0, len(hashes))
	} else {
		todo = nil
		for _, h := range hashes {
			if _, ok := in.id(h); !ok {
				todo = append(todo, h)
			}
		}
	}
	in.b.Reserve(len(todo), 16*len(todo))
	lacking := cache.resolve(todo, in.add)
	for _, c := range []*Cache{cache, NewCache(math.MaxInt)} {
		if len(lacking) == 0 {
			return nil
		}
		if err := c.fill(ctx, store, app, lacking); err != nil {
			return err
		}
		lacking = c.resolve(lacking, in.add)
	}
	if len(lacking) > 0 {
		return fmt.Errorf("%w: stack %x has samples but no text, or lacks a frame", storage.ErrMissingFrame, lacking[0])
	}
	return nil
}

// interner puts stacks into an engine and maps storage stack hashes to
// engine stacks. Each frame of the cache's frame table is interned once.
type interner struct {
	b *tree.Builder
	// hashes[i] is the storage hash of engine stack ids[i] (stacks equal
	// in the engine share one); index finds i by hash.
	hashes []uint64
	ids    []tree.StackID
	index  hashindex.Index
	// frameIDs[i] is 1 + the engine frame id of frame i of table, or 0.
	table    *frameTable
	frameIDs []uint32
	stack    []uint32
}

func newInterner(b *tree.Builder) *interner {
	return &interner{b: b, index: hashindex.New(0)}
}

// id returns the engine stack of a storage stack hash.
func (in *interner) id(hash uint64) (tree.StackID, bool) {
	i, ok := in.index.Get(hash, in.hashes)
	if !ok {
		return 0, false
	}
	return in.ids[i], true
}

// add interns a stack as the cache holds it. A new frame table (the
// cache started over, or another cache) only costs re-interning frame
// texts, which Frames.Intern maps to the same ids.
func (in *interner) add(hash uint64, frames []uint32, table *frameTable) {
	if in.table != table {
		in.table, in.frameIDs = table, nil
	}
	if n := len(table.frames); len(in.frameIDs) < n {
		in.frameIDs = append(in.frameIDs, make([]uint32, n-len(in.frameIDs))...)
	}
	in.stack = in.stack[:0]
	for _, f := range frames {
		id := in.frameIDs[f]
		if id == 0 {
			text := table.frames[f]
			id = in.b.Frames().Intern(text.Name, text.Module) + 1
			in.b.Frames().SetSource(id-1, text.File, text.Line)
			in.frameIDs[f] = id
		}
		in.stack = append(in.stack, id-1)
	}
	in.hashes = append(in.hashes, hash)
	in.ids = append(in.ids, in.b.Stack(in.stack))
	in.index.Put(hash, uint32(len(in.hashes)-1), in.hashes) // #nosec G115 -- engine stacks are uint32 by design
}
