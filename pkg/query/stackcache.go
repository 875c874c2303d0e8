package query

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/flamediff/flamediff/pkg/storage"
)

// DefaultStackCacheFrames bounds a StackCache: frame references held (8
// bytes each plus map overhead, so about 200 MB at the bound).
const DefaultStackCacheFrames = 10_000_000

// StackCache remembers stack texts across queries. A stack hash names its
// frames for good (storage derives it from them) and the stacks of an
// ingest never change, so the cache is complete per ingest: a query whose
// runs are all cached skips fetching stack texts from ClickHouse, which is
// most of a query's cost beyond the aggregation itself. Dashboards re-query
// the same builds on every refresh and toggle. It is safe for concurrent
// use; when full it starts over rather than tracking recency.
type StackCache struct {
	mu      sync.RWMutex
	limit   int
	held    int
	gen     uint64                   // counts resets: an ingest fetched across one may be incomplete
	stacks  map[uint64][]uint64      // stack hash → frame hashes, root first
	frames  map[uint64]storage.Frame // frame hash → name and module
	ingests map[uint64]bool          // ingests whose every stack is held
	// selections maps a set of ingests (selectionKey) to the hashes of
	// all its stacks; ingests never change, so neither does the set.
	selections map[string][]uint64
}

// NewStackCache returns an empty cache holding at most limit frame
// references (0 means DefaultStackCacheFrames).
func NewStackCache(limit int) *StackCache {
	if limit <= 0 {
		limit = DefaultStackCacheFrames
	}
	c := &StackCache{limit: limit}
	c.reset()
	return c
}

func (c *StackCache) reset() {
	c.gen++
	c.held = 0
	c.stacks = map[uint64][]uint64{}
	c.frames = map[uint64]storage.Frame{}
	c.ingests = map[uint64]bool{}
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

// selection returns the stack hashes of runs if a query over the same
// runs remembered them, else nil.
func (c *StackCache) selection(runs []storage.Run) []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.selections[selectionKey(runs)]
}

// remember records the stack hashes of runs (counted against the limit).
func (c *StackCache) remember(runs []storage.Run, hashes []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held+len(hashes) > c.limit {
		return // keep the stacks; a selection is cheap to learn again
	}
	c.selections[selectionKey(runs)] = hashes
	c.held += len(hashes)
}

// uncached returns the runs whose stacks the cache does not hold.
func (c *StackCache) uncached(runs []storage.Run) []storage.Run {
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

// put stores one stack.
func (c *StackCache) put(hash uint64, frames []storage.Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.stacks[hash]; ok {
		return
	}
	if c.held+len(frames) > c.limit {
		c.reset()
	}
	hashes := make([]uint64, len(frames))
	for i, f := range frames {
		hashes[i] = f.Hash
		if _, ok := c.frames[f.Hash]; !ok {
			c.frames[f.Hash] = f
		}
	}
	c.stacks[hash] = hashes
	c.held += len(frames)
}

// complete marks the runs' ingests as wholly held, unless the cache
// started over since generation gen and may have lost some of them.
func (c *StackCache) complete(runs []storage.Run, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	for _, r := range runs {
		c.ingests[r.IngestID] = true
	}
}

func (c *StackCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// fetch reads the stacks of runs (callers pass the uncached ones) into the
// cache, passing each to also (if not nil) as it arrives.
func (c *StackCache) fetch(ctx context.Context, store *storage.Store, runs []storage.Run, also func(uint64, []storage.Frame)) error {
	if len(runs) == 0 {
		return nil
	}
	gen := c.generation()
	if err := store.Stacks(ctx, runs, func(hash uint64, frames []storage.Frame) error {
		c.put(hash, frames)
		if also != nil {
			also(hash, frames)
		}
		return nil
	}); err != nil {
		return err
	}
	c.complete(runs, gen)
	return nil
}

// resolve calls visit with the frames of every hash it holds, under one
// read lock, and returns the hashes it lacks (evicted meanwhile).
func (c *StackCache) resolve(hashes []uint64, visit func(hash uint64, frames []uint64, text map[uint64]storage.Frame)) []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var lacking []uint64
	for _, h := range hashes {
		frames, ok := c.stacks[h]
		if !ok {
			lacking = append(lacking, h)
			continue
		}
		visit(h, frames, c.frames)
	}
	return lacking
}
