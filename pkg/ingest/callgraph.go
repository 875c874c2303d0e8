package ingest

import (
	"math"
	"sort"

	"github.com/flamediff/flamediff/pkg/profile"
)

type cgArc struct{ from, to int }

// callGraph is a profile that records no stacks, only each function's self
// cost and each call arc's inclusive cost (callgrind, cProfile). samples
// expands it into call paths.
type callGraph struct {
	name  string   // the input's, for errors
	funcs []string // function names, for errors
	self  []int64
	arcs  map[cgArc]int64 // caller to callee; arcs of a function to itself are not followed
	// entry is the cost that entered each function from no caller (the
	// paths' roots); nil makes every function nobody calls a root, entered
	// by all that flows through it (callgrind's rule).
	entry []int64
	// maxDepth bounds a path's frames (0: the functions alone bound it).
	maxDepth int
}

// maxCallPaths bounds the call paths a call graph expands to: the paths
// of a DAG grow exponentially with its depth. maxCallFrames bounds their
// frames (the stacks' memory): a million paths of a deep chain would be
// a billion.
const (
	maxCallPaths  = 1 << 20
	maxCallFrames = 1 << 26
)

// cgPath is one call path: a function and the path it was called on.
type cgPath struct {
	parent int // index in paths, -1 at a root
	fn     int
	weight float64
}

// samples expands the call graph into call paths from its roots, each
// function's self cost shared among the paths that reach it in proportion
// to the cost that flows along them (a callee's share of its caller's
// flow, self cost plus calls out), by the largest remainder, so that each
// function's self cost stays exact. A call back into a function already on
// the path is not followed; a function no root reaches (called only from
// a cycle) is a path of its own. frames[i] is function i's frame.
func (g *callGraph) samples(frames []uint32) ([]profile.Sample, error) {
	nf := len(g.self)
	callees := make([][]int, nf)
	out := make([]int64, nf) // self + calls out: what flows through a function
	called := make([]bool, nf)
	copy(out, g.self)
	arcs := make([]cgArc, 0, len(g.arcs))
	for a := range g.arcs {
		arcs = append(arcs, a)
	}
	sort.Slice(arcs, func(i, j int) bool {
		return arcs[i].from < arcs[j].from || arcs[i].from == arcs[j].from && arcs[i].to < arcs[j].to
	})
	for _, a := range arcs {
		c := g.arcs[a]
		if c == 0 || a.from == a.to {
			continue
		}
		callees[a.from] = append(callees[a.from], a.to)
		called[a.to] = true
		if c > math.MaxInt64-out[a.from] {
			return nil, fileError(g.name, "costs of %s add up past the int64 maximum", g.funcs[a.from])
		}
		out[a.from] += c
	}
	var paths []cgPath
	frameCount := 0
	onPath := make([]bool, nf)
	var walk func(i, depth int) error
	walk = func(i, depth int) error {
		if len(paths) > maxCallPaths {
			return fileError(g.name, "the call graph expands to more than %d call paths", maxCallPaths)
		}
		if frameCount += depth; frameCount > maxCallFrames {
			return fileError(g.name, "the call graph expands to call paths of more than %d frames", maxCallFrames)
		}
		if g.maxDepth > 0 && depth >= g.maxDepth {
			return nil
		}
		pth := paths[i]
		f := pth.fn
		onPath[f] = true
		defer func() { onPath[f] = false }()
		for _, c := range callees[f] {
			if onPath[c] {
				continue
			}
			w := pth.weight * float64(g.arcs[cgArc{f, c}]) / float64(out[f])
			if w <= 0 {
				continue
			}
			paths = append(paths, cgPath{parent: i, fn: c, weight: w})
			if err := walk(len(paths)-1, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for f := range nf {
		entry := out[f]
		if g.entry != nil {
			entry = g.entry[f]
		} else if called[f] {
			entry = 0
		}
		if entry > 0 {
			paths = append(paths, cgPath{parent: -1, fn: f, weight: float64(entry)})
			if err := walk(len(paths)-1, 1); err != nil {
				return nil, err
			}
		}
	}
	byFunc := make([][]int, nf)
	for i, pth := range paths {
		byFunc[pth.fn] = append(byFunc[pth.fn], i)
	}
	var arena stackArena
	stackOf := func(i int) []uint32 {
		depth := 0
		for j := i; j >= 0; j = paths[j].parent {
			depth++
		}
		s := arena.alloc(depth)
		for j := i; j >= 0; j = paths[j].parent {
			depth--
			s[depth] = frames[paths[j].fn]
		}
		return s
	}
	var samples []profile.Sample
	for f := range nf {
		if g.self[f] == 0 {
			continue
		}
		if len(byFunc[f]) == 0 { // only called from a cycle no root reaches
			samples = append(samples, profile.Sample{Stack: []uint32{frames[f]}, Value: g.self[f], Time: -1})
			continue
		}
		for k, share := range apportion(g.self[f], byFunc[f], paths) {
			if share > 0 {
				samples = append(samples, profile.Sample{Stack: stackOf(byFunc[f][k]), Value: share, Time: -1})
			}
		}
	}
	return samples, nil
}

// apportion shares total among paths by their weights, by the largest
// remainder method, so the shares add up to total exactly.
func apportion(total int64, ids []int, paths []cgPath) []int64 {
	var sum float64
	for _, i := range ids {
		sum += paths[i].weight
	}
	shares := make([]int64, len(ids))
	rest := make([]float64, len(ids))
	left := total
	for k, i := range ids {
		exact := float64(total) * paths[i].weight / sum
		shares[k] = min(int64(exact), left)
		rest[k] = exact - float64(shares[k])
		left -= shares[k]
	}
	order := make([]int, len(ids))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return rest[order[a]] > rest[order[b]] })
	for k := 0; left > 0; k = (k + 1) % len(order) {
		shares[order[k]]++
		left--
	}
	return shares
}
