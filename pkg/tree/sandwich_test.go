package tree

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/testkit"
)

func TestSandwich(t *testing.T) {
	samples := []sample{
		{Head, "main;a;f;b;f;c", 2, 0}, // recursion: cut at the first f
		{Head, "main;b;f", 3, 1},
		{Head, "main;g", 5, 2},
		{Base, "main;a;f;c", 1, 0},
		{Base, "main;b;f;d", 4, 1},
	}
	b := newTestBuilder(samples, 1, 1)
	tests := []struct {
		callers bool
		want    []string
	}{
		{true, []string{"total 10/5", " f 5/5", "  a 2/1", "   main 2/1", "  b 3/4", "   main 3/4"}},
		{false, []string{"total 10/5", " f 5/5", "  b 2/0", "   f 2/0", "    c 2/0", "  c 0/1", "  d 0/4"}},
	}
	for _, tc := range tests {
		tr := mustBuild(t, b, Options{Sandwich: Sandwich{Function: "f", Callers: tc.callers}})
		if got := outline(tr); !slices.Equal(got, tc.want) {
			t.Errorf("callers %v:\n%s\nwant\n%s", tc.callers, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	for _, fn := range []string{"nope", ""} {
		_, err := b.Build(Options{Sandwich: Sandwich{Function: fn}})
		if (fn != "") != errors.Is(err, ErrNoFunction) {
			t.Errorf("sandwich of %q: %v", fn, err)
		}
	}
	// f is a frame, but no stack the filter leaves goes through it.
	_, err := b.Build(Options{Sandwich: Sandwich{Function: "f"}, Filter: mustFilter(t, FilterSpec{Drop: "^f$"})})
	if !errors.Is(err, ErrNoFunction) || !strings.Contains(err.Error(), `"f"`) {
		t.Errorf("sandwich of a function the filter drops: %v", err)
	}
	// A filter that leaves nothing makes an empty answer, not an error.
	tr, err := b.Build(Options{Sandwich: Sandwich{Function: "f"}, Filter: mustFilter(t, FilterSpec{Keep: "^zz$"})})
	if err != nil || tr.Notice == "" || tr.Len() != 1 {
		t.Errorf("sandwich under a filter that leaves nothing: %v, %+v", err, tr)
	}
	// A collapsed view never collapses the function away.
	sys := func(id uint32) bool { return b.frames.Name(id) != "main" }
	tr = mustBuild(t, b, Options{Sandwich: Sandwich{Function: "f"}, CollapseSystem: true, IsSystem: sys})
	want := []string{"total 10/5", " f 5/5", "  b 2/0", "   f 2/0", "    c 2/0", "  c 0/1", "  d 0/4"}
	if got := outline(tr); !slices.Equal(got, want) {
		t.Errorf("collapsed callees:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOnly(t *testing.T) {
	samples := []sample{
		{Head, "main;a;x", 2, 0},
		{Head, "main;a;y", 3, 1},
		{Head, "main;b", 4, 2},
		{Base, "main;a;z", 1, 0},
		{Base, "main;b", 6, 2},
		{Base, "main;c", 3, 3},
	}
	b := newTestBuilder(samples, 1, 1)
	tests := []struct {
		only Only
		o    Options
		want []string
	}{
		{OnlyNew, Options{}, []string{"total 9/10", " main 5/0", "  a 5/0", "   x 2/0", "   y 3/0"}},
		{OnlyRemoved, Options{}, []string{"total 9/10", " main 0/4", "  a 0/1", "   z 0/1", "  c 0/3"}},
		// Collapsing a;x, a;y and a;z into one stack a: new no more.
		{OnlyNew, Options{CollapseSystem: true, IsSystem: func(id uint32) bool { return b.frames.Name(id) != "main" }}, []string{"total 9/10"}},
	}
	for _, tc := range tests {
		tc.o.Only = tc.only
		tr := mustBuild(t, b, tc.o)
		if got := outline(tr); !slices.Equal(got, tc.want) {
			t.Errorf("only %d:\n%s\nwant\n%s", tc.only, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	if n := mustBuild(t, newTestBuilder(samples[:3], 0, 1), Options{Only: OnlyRemoved}).Notice; n != "no stack is gone from head" {
		t.Errorf("only removed without a base: notice %q", n)
	}
}

// Both sandwich trees of the test profiles, with statistics: the
// function's node equals its row of Functions, recursion included; the
// callees tree is pprof's -show_from of the function; without
// recursion, the function's callers and callees are pprof's -peek edges.
func TestSandwichMatchesPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	base, head := testkit.PprofRuns(t, "base"), testkit.PprofRuns(t, "head")
	b := NewBuilder(NewFrames())
	addRunFiles(t, b, Base, base)
	addRunFiles(t, b, Head, head)
	rows := map[string]Function{}
	for _, f := range b.Functions(Options{}) {
		rows[f.Name] = f
	}
	peeks := map[Side]map[string]pproftop.Peek{}
	for _, fn := range []string{"encoding/json.(*decodeState).object", "runtime.mallocgc", "compress/flate.(*compressor).deflate"} {
		trees := map[bool]*Tree{}
		for _, callers := range []bool{true, false} {
			tr := mustBuild(t, b, Options{Sandwich: Sandwich{Function: fn, Callers: callers}})
			trees[callers] = tr
			// the root, the function, nothing beside it
			f, row := tr.Nodes[1], rows[fn]
			if tr.Label(1) != fn || int(f.Size) != tr.Len()-1 || f.HeadTotal != row.HeadTotal || f.BaseTotal != row.BaseTotal || tr.Delta(1) != row.Delta {
				t.Errorf("%s (callers %v): node %s %g/%g delta %g, functions row %g/%g delta %g",
					fn, callers, tr.Label(1), f.HeadTotal, f.BaseTotal, tr.Delta(1), row.HeadTotal, row.BaseTotal, row.Delta)
			}
			if tr.Stats == nil || tr.Nodes[0].HeadTotal != mustBuild(t, b, Options{}).Nodes[0].HeadTotal {
				t.Errorf("%s: the root is not the whole tree's, or no statistics", fn)
			}
			// Pruned, inverted, filtered: still a valid tree with statistics
			// (mustBuild checks every node's runs against its totals).
			for _, o := range []Options{{MaxNodes: 30}, {MaxNodes: 30, Inverted: true}, {Filter: mustFilter(t, FilterSpec{Hide: `^reflect\.`})}, {Only: OnlyNew, MaxNodes: 20}} {
				o.Sandwich = Sandwich{Function: fn, Callers: callers}
				if pruned := mustBuild(t, b, o); pruned.Stats == nil || (o.MaxNodes > 0 && pruned.Len() > o.MaxNodes) {
					t.Errorf("%s %+v: %d nodes, statistics %v", fn, o, pruned.Len(), pruned.Stats != nil)
				}
			}
		}
		// The callees tree is the tree pprof's -show_from of the function
		// keeps (the root apart).
		show := mustBuild(t, b, Options{Filter: mustFilter(t, FilterSpec{ShowFrom: "^" + regexp.QuoteMeta(fn) + "$"})})
		if got, want := outline(trees[false])[1:], outline(show)[1:]; !slices.Equal(got, want) {
			t.Errorf("%s: callees tree\n%s\nshow_from tree\n%s", fn, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		pprofDiffTop(t, Options{Filter: mustFilter(t, FilterSpec{ShowFrom: "^" + regexp.QuoteMeta(fn) + "$"})},
			"-show_from=^"+regexp.QuoteMeta(fn)+"$")
		if fn == "encoding/json.(*decodeState).object" {
			continue // recursive: pprof's edges count each call, the trees the first
		}
		for side, files := range map[Side][]string{Head: head, Base: base} {
			p, err := pproftop.PeekAt([]string{testkit.Merge(t, files)}, "^"+regexp.QuoteMeta(fn)+"$")
			if err != nil {
				t.Fatal(err)
			}
			peeks[side] = p
		}
		runs := float64(len(head))
		for callers, tr := range trees {
			for side := range peeks {
				want := peeks[side][fn].Callees
				if callers {
					want = peeks[side][fn].Callers
				}
				got := map[string]int64{}
				for _, c := range children(tr, 1) {
					v := tr.Nodes[c].HeadTotal
					if side == Base {
						v = tr.Nodes[c].BaseTotal
					}
					if v != 0 {
						got[tr.Label(c)] += int64(math.Round(v * runs))
					}
				}
				if len(want) < 2 || !mapsEqual(got, want) {
					t.Errorf("%s, side %d, callers %v: children %v, pprof -peek %v", fn, side, callers, got, want)
				}
			}
		}
	}
	_, err := b.Build(Options{Sandwich: Sandwich{Function: "main.nope"}})
	if !errors.Is(err, ErrNoFunction) || !strings.Contains(err.Error(), `"main.nope"`) {
		t.Errorf("unknown function: %v", err)
	}
}

// children lists the child indices of node i.
func children(t *Tree, i int) []int {
	var out []int
	for c := i + 1; c < i+int(t.Nodes[i].Size); c += int(t.Nodes[c].Size) {
		out = append(out, c)
	}
	return out
}

func mapsEqual(x, y map[string]int64) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		if w, ok := y[k]; !ok || w != v {
			return false
		}
	}
	return true
}
