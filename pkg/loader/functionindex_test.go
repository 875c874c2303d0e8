package loader

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/internal/hashindex"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// testIndex indexes stacks of function names; stack k has hash k+1.
func testIndex(stacks [][]string) *FunctionIndex {
	table := &frameTable{index: map[uint64]uint32{}}
	frameOf := map[string]uint32{}
	x := &FunctionIndex{stack: hashindex.New(len(stacks)), start: []uint32{0}, ids: map[profile.Identity]int32{}}
	for k, s := range stacks {
		var frames []uint32
		for _, name := range s {
			f, ok := frameOf[name]
			if !ok {
				f = uint32(len(table.frames))
				frameOf[name] = f
				table.frames = append(table.frames, storage.Frame{Name: name})
			}
			frames = append(frames, f)
		}
		x.add(uint64(k+1), frames, table)
	}
	x.title()
	return x
}

// naiveChangedEdges is changedEdges by the definition: every build's
// edges, then those whose presence differs between consecutive builds.
func naiveChangedEdges(stacks [][]string, in [][]int, builds int) []map[evolution.Edge]struct{} {
	has := make([]map[evolution.Edge]bool, builds)
	for g := range has {
		has[g] = map[evolution.Edge]bool{}
	}
	for k, s := range stacks {
		for _, g := range in[k] {
			for i := 1; i < len(s); i++ {
				has[g][evolution.Edge{Caller: s[i-1], Callee: s[i]}] = true
			}
		}
	}
	out := make([]map[evolution.Edge]struct{}, builds)
	for g := range out {
		out[g] = map[evolution.Edge]struct{}{}
	}
	for g := range has {
		for e := range has[g] {
			changed := false
			for h := 1; h < builds; h++ {
				changed = changed || has[h][e] != has[h-1][e]
			}
			if changed {
				out[g][e] = struct{}{}
			}
		}
	}
	return out
}

func changedOf(x *FunctionIndex, in [][]int, builds int) []map[evolution.Edge]struct{} {
	seen := NewBuildSet(x.Stacks(), builds)
	for k, gs := range in {
		for _, g := range gs {
			seen.Add(uint32(k), g)
		}
	}
	return x.ChangedEdges(seen, builds)
}

func TestChangedEdges(t *testing.T) {
	stacks := [][]string{
		{"main", "a", "b"},      // every build
		{"main", "a", "c"},      // builds 0 and 2: a->c is missing from build 1
		{"main", "x", "y"},      // build 1 only
		{"main", "a", "main"},   // build 0 only: a->main (recursion) goes away
		{"main", "e", "f"},      // no build
		{"main", "p", "q"},      // builds 0 and 1 ...
		{"main", "r", "p", "q"}, // ... and 2: p->q is in every build
	}
	in := [][]int{{0, 1, 2}, {0, 2}, {1}, {0}, nil, {0, 1}, {2}}
	e := func(a, b string) evolution.Edge { return evolution.Edge{Caller: a, Callee: b} }
	want := []map[evolution.Edge]struct{}{
		{e("a", "c"): {}, e("a", "main"): {}, e("main", "p"): {}},
		{e("main", "x"): {}, e("x", "y"): {}, e("main", "p"): {}},
		{e("a", "c"): {}, e("main", "r"): {}, e("r", "p"): {}},
	}
	x := testIndex(stacks)
	if got := changedOf(x, in, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("changed edges\n%v\nwant\n%v", got, want)
	}
	if got := naiveChangedEdges(stacks, in, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("the reference disagrees:\n%v", got)
	}
	// An edge present in every build through one stack is not changed,
	// whichever builds its other stacks are in.
	one := testIndex([][]string{{"a", "b"}, {"a", "b", "c"}})
	got := changedOf(one, [][]int{{0, 1, 2}, {1}}, 3)
	want = []map[evolution.Edge]struct{}{{}, {e("b", "c"): {}}, {}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changed edges %v, want %v", got, want)
	}
}

func TestChangedEdgesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	funcs := []string{"a", "b", "c", "d", "e", "f"}
	for range 200 {
		builds := 1 + rng.IntN(70) // more than one word of builds too
		if rng.IntN(2) == 0 {
			builds = 1 + rng.IntN(4)
		}
		var stacks [][]string
		var in [][]int
		for range 1 + rng.IntN(20) {
			s := make([]string, 1+rng.IntN(5))
			for i := range s {
				s[i] = funcs[rng.IntN(len(funcs))]
			}
			stacks = append(stacks, s)
			var gs []int
			for g := range builds {
				if rng.IntN(3) > 0 {
					gs = append(gs, g)
				}
			}
			in = append(in, gs)
		}
		got := changedOf(testIndex(stacks), in, builds)
		if want := naiveChangedEdges(stacks, in, builds); !reflect.DeepEqual(got, want) {
			t.Fatalf("stacks %v in %v: changed edges\n%v\nwant\n%v", stacks, in, got, want)
		}
	}
}
