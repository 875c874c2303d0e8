package query

import (
	"context"
	"fmt"
	"math"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/storage"
)

// functionIndex numbers the distinct functions (frame names) and call
// edges of a selection's stacks, and lists each stack's functions (each
// once) and edges by number, so that over-time queries sum rows into
// slices instead of hashing names per row. Stack texts come through the
// stack cache.
type functionIndex struct {
	names []string
	edges []uint64 // caller<<32 | callee
	// stack maps a stack hash to its number; stack k's functions are
	// funcs[funcStart[k]:funcStart[k+1]], its edges likewise.
	stack      map[uint64]uint32
	funcs      []int32
	funcStart  []uint32
	edgeIDs    []int32
	edgeStart  []uint32
	nameIDs    map[string]int32
	edgeIndex  map[uint64]int32
	frameNames []int32 // frame of the current frame table -> function + 1
	table      *frameTable
}

// indexFunctions reads the stacks of runs through the stack cache.
func (e *Executor) indexFunctions(ctx context.Context, runs []storage.Run) (*functionIndex, error) {
	cache := e.cache()
	hashes := cache.selection(runs)
	if hashes == nil {
		var err error
		if hashes, err = cache.fillRuns(ctx, e.Store, runs); err != nil {
			return nil, err
		}
		cache.remember(runs, hashes)
	}
	x := &functionIndex{stack: make(map[uint64]uint32, len(hashes)), funcStart: []uint32{0}, edgeStart: []uint32{0},
		nameIDs: map[string]int32{}, edgeIndex: map[uint64]int32{}}
	lacking := cache.resolve(hashes, x.add)
	if len(lacking) > 0 { // the cache started over meanwhile: read them into one of this query's own
		own := NewStackCache(math.MaxInt)
		if err := own.fill(ctx, e.Store, runs[0].App, lacking); err != nil {
			return nil, err
		}
		lacking = own.resolve(lacking, x.add)
	}
	if len(lacking) > 0 {
		return nil, x.missing(lacking[0])
	}
	x.nameIDs, x.edgeIndex, x.frameNames, x.table = nil, nil, nil, nil
	return x, nil
}

// add numbers one stack's functions and edges.
func (x *functionIndex) add(hash uint64, frames []uint32, table *frameTable) {
	if x.table != table {
		x.table, x.frameNames = table, nil
	}
	if n := len(table.frames); len(x.frameNames) < n {
		x.frameNames = append(x.frameNames, make([]int32, n-len(x.frameNames))...)
	}
	start := len(x.funcs)
	prev := int32(-1)
	for _, f := range frames {
		id := x.frameNames[f] - 1
		if id < 0 {
			name := table.frames[f].Name
			var ok bool
			if id, ok = x.nameIDs[name]; !ok {
				id = int32(len(x.names))
				x.nameIDs[name] = id
				x.names = append(x.names, name)
			}
			x.frameNames[f] = id + 1
		}
		if !containsID(x.funcs[start:], id) { // inclusive: once per stack
			x.funcs = append(x.funcs, id)
		}
		if prev >= 0 {
			x.edgeIDs = append(x.edgeIDs, x.edge(prev, id))
		}
		prev = id
	}
	x.stack[hash] = uint32(len(x.funcStart) - 1)
	x.funcStart = append(x.funcStart, uint32(len(x.funcs)))
	x.edgeStart = append(x.edgeStart, uint32(len(x.edgeIDs)))
}

func (x *functionIndex) edge(caller, callee int32) int32 {
	k := uint64(caller)<<32 | uint64(callee)
	id, ok := x.edgeIndex[k]
	if !ok {
		id = int32(len(x.edges))
		x.edgeIndex[k] = id
		x.edges = append(x.edges, k)
	}
	return id
}

// changedEdges gives each build the edges that differ between some two
// consecutive builds, among those it has (seen[build][edge]): evolution
// only reports the edges each build added or removed, and as every build
// gets the same subset, those come out exactly. Edges every build shares
// (most of them) never become strings.
func (x *functionIndex) changedEdges(seen [][]bool) []map[evolution.Edge]struct{} {
	out := make([]map[evolution.Edge]struct{}, len(seen))
	for g := range out {
		out[g] = map[evolution.Edge]struct{}{}
	}
	for id, k := range x.edges {
		changed := false
		for g := 1; g < len(seen) && !changed; g++ {
			changed = seen[g][id] != seen[g-1][id]
		}
		if !changed {
			continue
		}
		e := evolution.Edge{Caller: x.names[k>>32], Callee: x.names[uint32(k)]}
		for g := range seen {
			if seen[g][id] {
				out[g][e] = struct{}{}
			}
		}
	}
	return out
}

// containsID: stacks are short, so a scan beats a set per stack.
func containsID(ids []int32, id int32) bool {
	for _, i := range ids {
		if i == id {
			return true
		}
	}
	return false
}

// lookup returns the number of the stack of hash, or an error: a sample
// row whose stack has no text must not be counted under no function.
func (x *functionIndex) lookup(hash uint64) (uint32, error) {
	k, ok := x.stack[hash]
	if !ok {
		return 0, x.missing(hash)
	}
	return k, nil
}

func (x *functionIndex) missing(hash uint64) error {
	return fmt.Errorf("%w: stack %x has samples but no text, or lacks a frame", storage.ErrMissingFrame, hash)
}

func (x *functionIndex) functions(k uint32) []int32 { return x.funcs[x.funcStart[k]:x.funcStart[k+1]] }
func (x *functionIndex) edgesOf(k uint32) []int32   { return x.edgeIDs[x.edgeStart[k]:x.edgeStart[k+1]] }

// sums accumulates per-run values by function number.
type sums struct {
	total float64
	fn    []float64
	seen  []bool // functions of a stack that was present, even if its value was 0
}

func (x *functionIndex) newSums() *sums {
	return &sums{fn: make([]float64, len(x.names)), seen: make([]bool, len(x.names))}
}

func (x *functionIndex) addTo(s *sums, k uint32, value float64) {
	s.total += value
	for _, f := range x.functions(k) {
		s.fn[f] += value
		s.seen[f] = true
	}
}

// byName turns sums into the map evolution takes.
func (x *functionIndex) byName(s *sums) map[string]float64 {
	m := map[string]float64{}
	for f, ok := range s.seen {
		if ok {
			m[x.names[f]] = s.fn[f]
		}
	}
	return m
}
