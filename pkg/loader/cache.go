// Package loader loads stored runs into the engines: the streaming read
// of per-run stack values from ClickHouse into a tree (Load), the cache of
// stack texts shared by queries (Cache), the index of the functions of a
// selection's stacks that over-time queries sum by (FunctionIndex), and
// the evolution matrix's input (Evolution). pkg/query asks it and reads no
// stack, function or timeline table itself.
package loader

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/storage"
)

// DefaultCacheFrames bounds a Cache: frame references held (8
// bytes each plus map overhead, so about 200 MB at the bound).
const DefaultCacheFrames = 10_000_000

// Cache remembers stack texts across queries. A stack hash names its
// frames for good (storage derives it from them), so a cached stack never
// goes stale: a query reads from ClickHouse only the stacks (and frame
// texts) the cache lacks, which is most of a query's cost beyond the
// aggregation itself. Dashboards re-query the same builds on every refresh
// and toggle, and a new build shares most of its stacks with the last. It
// is safe for concurrent use; when full it starts over rather than
// tracking recency. Every stack it holds has all its frame texts.
type Cache struct {
	mu    sync.RWMutex
	limit int
	held  int
	gen   uint64 // counts resets: an ingest read across one may be incomplete
	// hashes[i] is a stack's hash and frames[i] its frames (root
	// first) as indexes into text, which stay valid until the cache
	// starts over; index finds i by hash.
	hashes  []uint64
	frames  [][]uint32
	index   hashindex.Index
	text    *frameTable
	ingests map[uint64]bool // ingests whose every stack is held
	// selections maps a set of ingests (selectionKey) to the hashes of
	// all its stacks; ingests never change, so neither does the set.
	selections map[string][]uint64
}

// frameTable holds frame texts by index, and the index of each frame hash.
type frameTable struct {
	index  map[uint64]uint32
	frames []storage.Frame
}

// NewCache returns an empty cache holding at most limit frame
// references (0 means DefaultCacheFrames).
func NewCache(limit int) *Cache {
	if limit <= 0 {
		limit = DefaultCacheFrames
	}
	c := &Cache{limit: limit}
	c.reset()
	return c
}

func (c *Cache) reset() {
	c.gen++
	c.held = 0
	c.ingests = map[uint64]bool{}
	c.hashes, c.frames, c.index = nil, nil, hashindex.New(0)
	c.text = &frameTable{index: map[uint64]uint32{}}
	c.selections = map[string][]uint64{}
}

// selectionKey names a set of runs by their ingest ids.
func selectionKey(runs []storage.Run) string {
	ids := make([]uint64, len(runs))
	for i, r := range runs {
		ids[i] = r.IngestID
	}
	slices.Sort(ids)
	key := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		key = binary.LittleEndian.AppendUint64(key, id)
	}
	return string(key)
}

// selection returns the stack hashes of runs, ascending, if a query over
// the same runs remembered them, else nil. Callers must not modify it.
func (c *Cache) selection(runs []storage.Run) []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.selections[selectionKey(runs)]
}

// remember records the stack hashes of runs (counted against the limit),
// sorting them in place.
func (c *Cache) remember(runs []storage.Run, hashes []uint64) {
	slices.Sort(hashes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held+len(hashes) > c.limit {
		return // keep the stacks; a selection is cheap to learn again
	}
	c.selections[selectionKey(runs)] = hashes
	c.held += len(hashes)
}

// uncached returns the runs whose stacks the cache may not all hold.
func (c *Cache) uncached(runs []storage.Run) []storage.Run {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []storage.Run
	for _, r := range runs {
		if !c.ingests[r.IngestID] {
			out = append(out, r)
		}
	}
	return out
}

// fillRuns reads every stack of runs into the cache (callers pass the
// uncached ones) and returns their hashes, ascending, each once, or every
// stack of their app when that costs less (wholeApp). listed,
// if not nil, gets the same list as soon as the stacks are read, before
// their frame texts are: a caller waiting for it works meanwhile.
func (c *Cache) fillRuns(ctx context.Context, store *storage.Store, runs []storage.Run, listed func([]uint64)) ([]uint64, error) {
	c.mu.RLock()
	gen := c.gen
	c.mu.RUnlock()
	var set storage.StackSet
	most := uint64(0) // the largest run's stacks: at least that many
	for _, r := range runs {
		most = max(most, r.Stacks)
	}
	set.Reserve(int(min(most, 1<<24))) // #nosec G115 -- bounded
	whole, err := wholeApp(ctx, store, runs, most)
	if err != nil {
		return nil, err
	}
	read := func() error { return store.RunStackFrames(ctx, runs, set.Add) }
	if whole {
		read = func() error { return store.AppStackFrames(ctx, runs[0].App, set.Add) }
	}
	if err := read(); err != nil {
		return nil, err
	}
	// put needs set.Hashes in read order, beside set.Frames
	hashes := slices.Clone(set.Hashes)
	slices.Sort(hashes)
	hashes = slices.Compact(hashes) // copies of a stack come side by side
	if listed != nil {
		listed(hashes)
	}
	if err := c.put(ctx, store, runs[0].App, &set); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		for _, r := range runs {
			c.ingests[r.IngestID] = true
		}
	}
	c.mu.Unlock()
	return hashes, nil
}

// fill reads the stacks of app among hashes (callers pass those the cache
// lacks) into the cache.
func (c *Cache) fill(ctx context.Context, store *storage.Store, app string, hashes []uint64) error {
	var set storage.StackSet
	set.Reserve(len(hashes))
	if err := store.StackFrames(ctx, app, hashes, set.Add); err != nil {
		return err
	}
	return c.put(ctx, store, app, &set)
}

// put adds the stacks of set, reading the frame texts the cache lacks.
// A stack whose frames went missing meanwhile (the cache started over)
// is left out: resolve reports it as lacking.
func (c *Cache) put(ctx context.Context, store *storage.Store, app string, set *storage.StackSet) error {
	var need []uint64
	c.mu.RLock()
	for _, h := range set.FrameHashes {
		if _, ok := c.text.index[h]; !ok {
			need = append(need, h)
		}
	}
	c.mu.RUnlock()
	fetched := make(map[uint64]storage.Frame, len(need))
	if err := store.Frames(ctx, app, need, func(f storage.Frame) error {
		fetched[f.Hash] = f
		return nil
	}); err != nil {
		return err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held+set.Refs > c.limit {
		c.reset()
	}
	if len(c.hashes) == 0 { // sized at once: a cold query puts hundreds of thousands
		c.index = hashindex.New(len(set.Hashes))
		c.hashes = make([]uint64, 0, len(set.Hashes))
		c.frames = make([][]uint32, 0, len(set.Hashes))
	}
	const missing = math.MaxUint32
	renumber := make([]uint32, len(set.FrameHashes))
	for l, h := range set.FrameHashes {
		i, ok := c.text.index[h]
		if !ok {
			f, ok := fetched[h]
			if !ok { // not stored, or cached when put began and gone since
				renumber[l] = missing
				continue
			}
			i = uint32(len(c.text.frames)) // #nosec G115 -- frame ids are uint32 by design: 2^32 distinct frames do not fit in memory
			c.text.index[h] = i
			c.text.frames = append(c.text.frames, f)
		}
		renumber[l] = i
	}
next:
	for k, fs := range set.Frames {
		h := set.Hashes[k]
		if _, ok := c.index.Get(h, c.hashes); ok { // held already, or a copy
			continue
		}
		for j, l := range fs {
			if fs[j] = renumber[l]; fs[j] == missing {
				continue next
			}
		}
		c.hashes = append(c.hashes, h)
		c.frames = append(c.frames, fs)
		c.index.Put(h, uint32(len(c.hashes)-1), c.hashes) // #nosec G115 -- the limit keeps it far below 2^32
		c.held += len(fs)
	}
	return nil
}

// resolve calls visit with the frames of every hash it holds, under one
// read lock, and returns the hashes it lacks.
func (c *Cache) resolve(hashes []uint64, visit func(hash uint64, frames []uint32, text *frameTable)) []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var lacking []uint64
	for _, h := range hashes {
		i, ok := c.index.Get(h, c.hashes)
		if !ok {
			lacking = append(lacking, h)
			continue
		}
		visit(h, c.frames[i], c.text)
	}
	return lacking
}

// wholeApp reports whether reading every stack of the runs' app costs
// less than selecting the runs' own. ClickHouse selects those by a set it
// builds from every (run, stack) row of the runs, on one thread: most of
// a cold read's server time (100 of 120 ms for 40 runs of 62,500 stacks
// among 200,000; 600 ms for 1,825 runs of 20,000), while the app's list is
// a plain read of its rows. It does when the runs' rows are at least 4x
// the app's stacks and the app holds at most 4x the largest run's: so at
// most 3 in 4 stacks read are not the runs', and those go to the cache
// for the app's next queries. A stack no run has a row for stays out of
// every tree and series (they take the stacks some run has a value for),
// but a diff stages a column for it in every run: when the runs share
// their stacks and the app holds 4x them, 32 bytes a row instead of 8,
// which the query's memory estimate (48 a row) does not foresee.
func wholeApp(ctx context.Context, store *storage.Store, runs []storage.Run, most uint64) (bool, error) {
	var rows uint64
	for _, r := range runs {
		rows += r.Stacks
	}
	if rows < 4*most { // not worth a count
		return false, nil
	}
	n, err := store.AppStackCount(ctx, runs[0].App)
	if err != nil {
		return false, err
	}
	return 4*n <= rows && n <= 4*most, nil
}
