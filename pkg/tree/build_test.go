package tree

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func h(stack string, value int64, first uint64) sample  { return sample{Head, stack, value, first} }
func bs(stack string, value int64, first uint64) sample { return sample{Base, stack, value, first} }

// sys marks frames whose name starts with "sys" as system frames.
func sys(f *Frames) func(uint32) bool {
	return func(id uint32) bool { return strings.HasPrefix(f.Name(id), "sys") }
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name               string
		samples            []sample
		baseRuns, headRuns int
		opts               Options
		want               []string
	}{{
		name:     "first seen order: A->C, A->B, A->C",
		samples:  []sample{h("A;C", 1, 0), h("A;B", 1, 1), h("A;C", 1, 2)},
		headRuns: 1,
		want:     []string{"total 3", " A 3", "  C 2", "  B 1"},
	}, {
		// Cloud Profiler's example, averaged over two runs: main 9, foo1 4,
		// foo2 3 and bar 2.5 under each foo.
		name: "cloud profiler main/foo1/foo2/bar",
		samples: []sample{
			h("main", 2, 0), h("main;foo1", 2, 1), h("main;foo1;bar", 3, 2), h("main;foo2", 1, 3), h("main;foo2;bar", 2, 4),
			h("main", 2, 0), h("main;foo1", 1, 1), h("main;foo1;bar", 2, 2), h("main;foo2;bar", 3, 3),
		},
		headRuns: 2,
		want:     []string{"total 9", " main 9", "  foo1 4", "   bar 2.5", "  foo2 3", "   bar 2.5"},
	}, {
		name:     "ties in first seen go by name",
		samples:  []sample{h("A;Z", 1, 5), h("A;M", 1, 5), h("A;B", 2, 7)},
		headRuns: 1,
		want:     []string{"total 4", " A 4", "  M 1", "  Z 1", "  B 2"},
	}, {
		name:     "a node is as early as its earliest stack",
		samples:  []sample{h("A;B;C", 1, 9), h("A;D", 1, 3), h("A;B;E", 1, 1)},
		headRuns: 1,
		want:     []string{"total 3", " A 3", "  B 2", "   E 1", "   C 1", "  D 1"},
	}, {
		name:     "self of inner nodes and the root",
		samples:  []sample{h("", 1, 0), h("A", 2, 1), h("A;B", 3, 2)},
		headRuns: 1,
		want:     []string{"total 6", " A 5", "  B 3"},
	}, {
		name: "diff: union matched by path, both sides averaged",
		samples: []sample{
			bs("A;B", 4, 0), bs("A;C", 2, 1), bs("A;B", 2, 0),
			h("A;B", 3, 0), h("A;D", 1, 2), h("A;B", 3, 0), h("A;D", 1, 2), h("A;B", 3, 0), h("A;D", 1, 2),
		},
		baseRuns: 2, headRuns: 3,
		want: []string{"total 4/4", " A 4/4", "  B 3/3", "  C 0/1", "  D 1/0"},
	}, {
		name:     "base data without base runs is no diff",
		samples:  []sample{bs("A", 5, 0), h("A;B", 1, 1)},
		headRuns: 1,
		want:     []string{"total 1", " A 1", "  B 1"},
	}, {
		name:     "inverted: leaf first, alphabetical",
		samples:  []sample{h("main;work;c", 1, 0), h("main;b", 2, 1), h("main;work", 3, 2), h("x;b", 1, 3)},
		headRuns: 1,
		opts:     Options{Inverted: true},
		want:     []string{"total 7", " b 3", "  main 2", "  x 1", " c 1", "  work 1", "   main 1", " work 3", "  main 3"},
	}, {
		name:     "collapse system runs to their first frame",
		samples:  []sample{h("main;sysA;sysB;cb;sysC", 1, 0), h("main;sysA;sysD;cb", 2, 1), h("sysA;sysB", 4, 2)},
		headRuns: 1,
		opts:     Options{CollapseSystem: true},
		want:     []string{"total 7", " main 3", "  sysA 3", "   cb 3", "    sysC 1", " sysA 4"},
	}, {
		name:     "collapse then invert",
		samples:  []sample{h("main;sysA;sysB;cb;sysC", 1, 0), h("main;sysA;sysD;cb", 2, 1)},
		headRuns: 1,
		opts:     Options{CollapseSystem: true, Inverted: true},
		want:     []string{"total 3", " cb 2", "  sysA 2", "   main 2", " sysC 1", "  cb 1", "   sysA 1", "    main 1"},
	}, {
		name:     "collapse in a diff",
		samples:  []sample{bs("main;sysA;sysB", 2, 0), h("main;sysA;sysC", 3, 0)},
		baseRuns: 1, headRuns: 1,
		opts: Options{CollapseSystem: true},
		want: []string{"total 3/2", " main 3/2", "  sysA 3/2"},
	}, {
		name: "maxNodes merges the smallest siblings into other",
		samples: []sample{
			h("A;B", 50, 0), h("A;C", 5, 1), h("A;D", 3, 2), h("A;E", 2, 3), h("F", 40, 4),
		},
		headRuns: 1,
		opts:     Options{MaxNodes: 5},
		want:     []string{"total 100", " A 60", "  B 50", "  other 10", " F 40"},
	}, {
		name:     "maxNodes below 2 keeps root and other",
		samples:  []sample{h("A;B", 1, 0), h("C", 1, 1)},
		headRuns: 1,
		opts:     Options{MaxNodes: 1},
		want:     []string{"total 2", " other 2"},
	}, {
		name:     "maxNodes not reached changes nothing",
		samples:  []sample{h("A;B", 1, 0)},
		headRuns: 1,
		opts:     Options{MaxNodes: 3},
		want:     []string{"total 1", " A 1", "  B 1"},
	}, {
		name:    "no runs: just the root",
		samples: []sample{h("A", 1, 0)},
		want:    []string{"total 0"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBuilder(tt.samples, tt.baseRuns, tt.headRuns)
			if tt.opts.CollapseSystem {
				tt.opts.IsSystem = sys(b.frames)
			}
			got := outline(mustBuild(t, b, tt.opts))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestDelta(t *testing.T) {
	b := newTestBuilder([]sample{bs("A;B", 8, 0), bs("A;C", 2, 1), h("A;B", 6, 0), h("A;D", 5, 1)}, 1, 1)
	tr := mustBuild(t, b, Options{})
	want := map[string]float64{"total": 0.1, "A": 0.1, "B": -0.2, "C": -0.2, "D": 0.5}
	for i := range tr.Nodes {
		if got := tr.Delta(i); got != want[tr.Label(i)] {
			t.Errorf("delta of %s = %g, want %g", tr.Label(i), got, want[tr.Label(i)])
		}
	}
	// A plain tree has no deltas.
	b.SetRuns(Base, 0)
	single := mustBuild(t, b, Options{})
	if d := single.Delta(1); d != 0 {
		t.Errorf("delta in a plain tree = %g, want 0", d)
	}
}

// Build leaves the Builder untouched: variants can be built in any order.
func TestBuildVariantsRepeat(t *testing.T) {
	b := newTestBuilder([]sample{h("A;sysB;C", 1, 0), h("A;D", 2, 1), bs("A;D", 1, 0)}, 1, 1)
	variants := []Options{{}, {Inverted: true}, {CollapseSystem: true, IsSystem: sys(b.frames)}, {Inverted: true, CollapseSystem: true, IsSystem: sys(b.frames)}}
	first := make([][]string, len(variants))
	for i, o := range variants {
		first[i] = outline(mustBuild(t, b, o))
	}
	for i := len(variants) - 1; i >= 0; i-- {
		if got := outline(mustBuild(t, b, variants[i])); !slices.Equal(got, first[i]) {
			t.Errorf("variant %+v changed on rebuild:\n%v\n%v", variants[i], got, first[i])
		}
	}
}

func TestEachStack(t *testing.T) {
	b := newTestBuilder([]sample{h("A;B", 2, 0), h("A", 1, 1), bs("C", 4, 0)}, 2, 1)
	tr := mustBuild(t, b, Options{})
	var got []string
	tr.EachStack(func(stack []uint32, head, base float64) {
		var names []string
		for _, f := range stack {
			names = append(names, b.frames.Name(f))
		}
		got = append(got, strings.Join(names, ";")+" "+strings.TrimSpace(strings.Join([]string{ftoa(head), ftoa(base)}, "/")))
	})
	want := []string{"A 1/0", "A;B 2/0", "C 0/2"} // pre-order
	if !slices.Equal(got, want) {
		t.Errorf("EachStack = %v, want %v", got, want)
	}
}

// Big subtrees are laid out on other cores; the tree must be the one a
// single core lays out, node for node (raw sums are integers, so the order
// of additions cannot change them).
func TestParallelLayoutMatchesSequential(t *testing.T) {
	p := newProgram(5, 2_000)
	b := NewBuilder(NewFrames())
	for i := range 2_000 {
		b.Frames().Intern(fmt.Sprint("f", i), "")
	}
	var buf []uint32
	for i := range 20_000 {
		buf = p.stack(buf)
		id := b.Stack(buf)
		b.Add(Side(i%2), id, int64(1+i%7), uint64(i))
	}
	b.SetRuns(Base, 3)
	b.SetRuns(Head, 2)
	for _, o := range []Options{{}, {Inverted: true}} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		want := mustBuild(t, b, o)
		runtime.GOMAXPROCS(4)
		got := mustBuild(t, b, o)
		if want.Len() < 4*asideNodes {
			t.Fatalf("%+v: %d nodes, too few to lay out in parallel", o, want.Len())
		}
		if !slices.Equal(got.Nodes, want.Nodes) {
			t.Errorf("%+v: the parallel layout differs from the sequential one", o)
		}
	}
}

// split weighs every kid: kids come in sibling order, not in stack
// order, so the first kid's start and the last one's end need not bound
// their stacks (here they bound none).
func TestSplitWeighsEveryKid(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	b := NewBuilder(NewFrames())
	for _, name := range []string{"a", "z"} {
		chain := make([]uint32, asideNodes)
		for i := range chain {
			chain[i] = b.Frames().Intern(fmt.Sprint(name, i), "")
		}
		b.Add(Head, b.Stack(chain), 1, 0)
	}
	b.SetRuns(Head, 1)
	v, err := b.newView(Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := v.trie(false, b.frames.compareChronological, 0, nil)
	// The root's two children, the second stack first.
	kids := []child{{start: 1, end: 2}, {start: 0, end: 1}}
	if split, nodes := l.split(kids, 0); split != 1 || nodes != asideNodes {
		t.Errorf("split of two chains of %d nodes: %d kids, %d nodes aside; want 1 kid, %d nodes", asideNodes, split, nodes, asideNodes)
	}
}

// Under maxNodes, Build lays out only the nodes pruning may keep; the tree
// must be the one pruning the whole tree gives, node for node, ties
// included (random values in 0..9 tie often, and a chain's nodes all tie).
// Only the "other" sums may differ, in the last bits: they add per-run
// values in another order.
func TestCutLayoutMatchesWholeTreePruned(t *testing.T) {
	cut := 0 // cases where the layout left nodes out, so the test is not vacuous
	for seed := range uint64(400) {
		samples, baseRuns, headRuns := randomSamples(rand.New(rand.NewPCG(seed, 9)))
		b := newTestBuilder(samples, baseRuns, headRuns)
		isSys := sys(b.frames)
		for _, o := range []Options{{}, {Inverted: true}, {CollapseSystem: true, IsSystem: isSys}} {
			whole := mustBuild(t, b, o)
			for _, limit := range []int{2, 3, 5, whole.Len() / 2, whole.Len() - 1} {
				if limit < 2 || limit >= whole.Len() {
					continue
				}
				want := &Tree{Frames: whole.Frames, Nodes: slices.Clone(whole.Nodes), Diff: whole.Diff}
				want.prune(limit, nil)
				o.MaxNodes = limit
				got := mustBuild(t, b, o)
				if !slices.EqualFunc(got.Nodes, want.Nodes, sameNode) {
					t.Fatalf("seed %d %+v: cut layout\n%s\nwant\n%s", seed, o,
						strings.Join(outline(got), "\n"), strings.Join(outline(want), "\n"))
				}
				order := b.frames.compareChronological
				if o.Inverted {
					order = b.frames.compareAlphabetical
				}
				v, err := b.newView(o)
				if err != nil {
					t.Fatal(err)
				}
				if len(v.trie(o.Inverted, order, limit, nil).nodes) < whole.Len() {
					cut++
				}
			}
		}
	}
	if cut < 100 {
		t.Fatalf("only %d builds left nodes out", cut)
	}
}

// sameNode is node equality up to float rounding.
func sameNode(a, b Node) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)) }
	return a.Frame == b.Frame && a.Depth == b.Depth && a.Size == b.Size &&
		near(a.HeadTotal, b.HeadTotal) && near(a.HeadSelf, b.HeadSelf) &&
		near(a.BaseTotal, b.BaseTotal) && near(a.BaseSelf, b.BaseSelf)
}
