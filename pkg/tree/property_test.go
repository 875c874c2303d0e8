package tree

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomSamples draws a small random stack set over a few frames, some of
// them system frames, so that paths share prefixes and collapse matters.
func randomSamples(r *rand.Rand) (samples []sample, baseRuns, headRuns int) {
	names := []string{"main", "a", "b", "c", "sysX", "sysY", "sysZ"}[:2+r.IntN(6)]
	for range r.IntN(40) {
		var frames []string
		for range r.IntN(7) {
			frames = append(frames, names[r.IntN(len(names))])
		}
		samples = append(samples, sample{Side(r.IntN(2)), strings.Join(frames, ";"), r.Int64N(10), r.Uint64N(20)})
	}
	return samples, r.IntN(3), 1 + r.IntN(3)
}

// referenceTotals builds the tree the slow obvious way: every prefix of
// every (collapsed, flipped) stack gets the stack's per-run value, and the
// smallest first-seen key of the stacks through it.
func referenceTotals(b *Builder, o Options) (map[string][2]float64, map[string]uint64) {
	totals := map[string][2]float64{"": {}}
	firsts := map[string]uint64{"": notSeen}
	for id := range b.Stacks() {
		var frames []uint32
		prevSys := false
		for _, f := range b.stack(uint32(id)) {
			s := o.CollapseSystem && o.IsSystem(f)
			if !s || !prevSys {
				frames = append(frames, f)
			}
			prevSys = s
		}
		if o.Inverted {
			slices.Reverse(frames)
		}
		var add [2]float64
		active := false
		for s := range 2 {
			if b.runs[s] > 0 && b.first[s][id] != notSeen {
				add[s] = float64(b.value[s][id]) / float64(b.runs[s])
				active = true
			}
		}
		if !active {
			continue
		}
		key := ""
		for d := 0; d <= len(frames); d++ {
			if d > 0 {
				key += fmt.Sprintf("%d;", frames[d-1])
			}
			t := totals[key]
			totals[key] = [2]float64{t[0] + add[0], t[1] + add[1]}
			f, ok := firsts[key]
			if !ok {
				f = notSeen
			}
			for s := range 2 {
				if b.runs[s] > 0 {
					f = min(f, b.first[s][id])
				}
			}
			firsts[key] = f
		}
	}
	return totals, firsts
}

func treeTotals(tr *Tree) map[string][2]float64 {
	totals := map[string][2]float64{}
	var path []string
	for _, n := range tr.Nodes {
		if n.Depth == 0 {
			path = path[:0]
		} else {
			path = append(path[:n.Depth-1], fmt.Sprintf("%d;", n.Frame))
		}
		totals[strings.Join(path, "")] = [2]float64{n.BaseTotal, n.HeadTotal}
	}
	return totals
}

func closeTotals(a, b map[string][2]float64) bool {
	return maps.EqualFunc(a, b, func(x, y [2]float64) bool {
		return math.Abs(x[0]-y[0]) < 1e-9 && math.Abs(x[1]-y[1]) < 1e-9
	})
}

// checkSiblingOrder verifies that every node's children are in the order
// of compare, given the first-seen key of every path (referenceTotals).
func checkSiblingOrder(t *testing.T, tr *Tree, firsts map[string]uint64, compare func(a, b siblingKey) int) {
	t.Helper()
	paths := make([]string, tr.Len())
	var path []string
	for i, n := range tr.Nodes {
		if n.Depth > 0 {
			path = append(path[:n.Depth-1], fmt.Sprintf("%d;", n.Frame))
		}
		paths[i] = strings.Join(path, "")
	}
	key := func(i int) siblingKey { return siblingKey{tr.Nodes[i].Frame, firsts[paths[i]]} }
	for i, n := range tr.Nodes {
		prev := -1
		for c := i + 1; c < i+int(n.Size); c += int(tr.Nodes[c].Size) {
			if prev >= 0 && compare(key(prev), key(c)) > 0 {
				t.Fatalf("children of node %d out of order at %d:\n%s", i, c, strings.Join(outline(tr), "\n"))
			}
			prev = c
		}
	}
}

func checkProperties(t *testing.T, seed uint64, maxNodes int) {
	samples, baseRuns, headRuns := randomSamples(rand.New(rand.NewPCG(seed, 1)))
	b := newTestBuilder(samples, baseRuns, headRuns)
	isSys := sys(b.frames)
	for _, o := range []Options{{}, {Inverted: true}, {CollapseSystem: true, IsSystem: isSys}, {Inverted: true, CollapseSystem: true, IsSystem: isSys}} {
		tr := mustBuild(t, b, o)
		want, firsts := referenceTotals(b, o)
		if got := treeTotals(tr); !closeTotals(got, want) {
			t.Fatalf("%+v: totals by path\n got %v\nwant %v", o, got, want)
		}
		if o.Inverted {
			checkSiblingOrder(t, tr, firsts, b.frames.compareAlphabetical)
		} else {
			checkSiblingOrder(t, tr, firsts, b.frames.compareChronological)
		}

		// maxNodes keeps the root totals and the node limit.
		o.MaxNodes = maxNodes
		pruned := mustBuild(t, b, o)
		if limit := max(maxNodes, 2); pruned.Len() > limit && maxNodes > 0 {
			t.Fatalf("%+v: %d nodes, limit %d", o, pruned.Len(), limit)
		}
		if r, p := tr.Nodes[0], pruned.Nodes[0]; r.HeadTotal != p.HeadTotal || r.BaseTotal != p.BaseTotal {
			t.Fatalf("%+v: pruned root %+v, want %+v", o, p, r)
		}
	}

	// A diff of the head with itself has all deltas 0.
	var self []sample
	for _, s := range samples {
		if s.side == Head {
			self = append(self, s, sample{Base, s.stack, s.value, s.first})
		}
	}
	same := newTestBuilder(self, headRuns, headRuns)
	for _, o := range []Options{{}, {Inverted: true}, {MaxNodes: maxNodes}} {
		tr := mustBuild(t, same, o)
		for i := range tr.Nodes {
			if d := tr.Delta(i); d != 0 {
				t.Fatalf("%+v: diff with itself: delta %g at node %d", o, d, i)
			}
		}
	}

	// Inverting twice gives back the leaf (self) values by path.
	b.SetRuns(Base, 0)
	b.SetRuns(Head, 1)
	once := mustBuild(t, b, Options{Inverted: true})
	again := NewBuilder(b.frames)
	again.SetRuns(Head, 1)
	once.EachStack(func(stack []uint32, head, _ float64) {
		again.Add(Head, again.Stack(slices.Clone(stack)), int64(head), 0)
	})
	twice := mustBuild(t, again, Options{Inverted: true})
	if got, want := leafValues(twice), leafValues(mustBuild(t, b, Options{})); !maps.Equal(got, want) {
		t.Fatalf("inverted twice: leaves %v, want %v", got, want)
	}
}

func leafValues(tr *Tree) map[string]float64 {
	leaves := map[string]float64{}
	tr.EachStack(func(stack []uint32, head, _ float64) {
		leaves[fmt.Sprint(stack)] += head
	})
	return leaves
}

func TestProperties(t *testing.T) {
	for seed := range uint64(300) {
		checkProperties(t, seed, int(seed%12))
	}
}

func FuzzBuild(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint8(seed*3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, maxNodes uint8) {
		checkProperties(t, seed, int(maxNodes))
	})
}
