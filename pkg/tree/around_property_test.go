package tree

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkSandwichProperties compares both sandwich trees of every function
// of a random stack set (recursion included: frames repeat) with the
// trees of the stacks cut by hand, and the function's node with its row
// of Functions.
func checkSandwichProperties(t *testing.T, seed uint64, maxNodes int) {
	samples, baseRuns, headRuns := randomSamples(rand.New(rand.NewPCG(seed, 1)))
	b := newTestBuilder(samples, baseRuns, headRuns)
	rows := map[string]Function{}
	for _, f := range b.Functions(Options{}) {
		rows[f.Name] = f
	}
	whole := mustBuild(t, b, Options{})
	for name, row := range rows {
		for _, callers := range []bool{false, true} {
			// The reference: a builder of the cut stacks themselves.
			cut := NewBuilder(b.frames)
			cut.SetRuns(Base, baseRuns)
			cut.SetRuns(Head, headRuns)
			for id := range b.Stacks() {
				stack := b.stack(uint32(id))
				at := slices.IndexFunc(stack, func(f uint32) bool { return b.frames.Name(f) == name })
				if at < 0 {
					continue
				}
				part := slices.Clone(stack[at:])
				if callers {
					part = slices.Clone(stack[:at+1])
					slices.Reverse(part)
				}
				s := cut.Stack(part)
				for _, side := range []Side{Base, Head} {
					if b.first[side][id] != notSeen {
						cut.Add(side, s, b.value[side][id], b.first[side][id])
					}
				}
			}
			o := Options{Sandwich: Sandwich{Function: name, Callers: callers}}
			tr := mustBuild(t, b, o)
			want := treeTotals(mustBuild(t, cut, Options{}))
			got := treeTotals(tr)
			delete(want, "")
			if root := got[""]; root[0] != whole.Nodes[0].BaseTotal || root[1] != whole.Nodes[0].HeadTotal {
				t.Fatalf("%s (callers %v): root %v, the whole tree's %+v", name, callers, root, whole.Nodes[0])
			}
			delete(got, "")
			if len(want) > 0 && !closeTotals(got, want) {
				t.Fatalf("%s (callers %v): totals by path\n got %v\nwant %v", name, callers, got, want)
			}
			if f := tr.Nodes[1]; tr.Label(1) != name || f.HeadTotal != row.HeadTotal || f.BaseTotal != row.BaseTotal {
				t.Fatalf("%s (callers %v): node %s %+v, functions row %+v", name, callers, tr.Label(1), f, row)
			}
			o.MaxNodes = maxNodes
			if pruned := mustBuild(t, b, o); maxNodes > 0 && pruned.Len() > max(maxNodes, 2) {
				t.Fatalf("%s (callers %v): %d nodes, limit %d", name, callers, pruned.Len(), maxNodes)
			}
		}
	}
	if _, err := b.Build(Options{Sandwich: Sandwich{Function: "no such function"}}); !errors.Is(err, ErrNoFunction) {
		t.Fatalf("unknown function: %v", err)
	}
}

func TestSandwichProperties(t *testing.T) {
	for seed := range uint64(200) {
		checkSandwichProperties(t, seed, int(seed%12))
	}
}

// Any expression either compiles into a filter every tree takes, or is a
// FilterError naming its field.
func FuzzNewFilter(f *testing.F) {
	for _, s := range []string{"", "a", "^main$", "(a", `\p{Greek}+`, "[z-a]", "a{1001}", "(?i)SYS"} {
		f.Add(s, seed(s), uint8(len(s)))
	}
	f.Fuzz(func(t *testing.T, expr string, seed uint64, field uint8) {
		var spec FilterSpec
		names := []string{"keep", "drop", "hideFrames", "showFrom"}
		*[]*string{&spec.Keep, &spec.Drop, &spec.Hide, &spec.ShowFrom}[field%4] = expr
		filter, err := NewFilter(spec)
		var fe *FilterError
		switch {
		case err != nil && (!errors.As(err, &fe) || fe.Field != names[field%4]):
			t.Fatalf("%q: %v is not a FilterError of %s", expr, err, names[field%4])
		case err == nil && (filter == nil) != (expr == ""):
			t.Fatalf("%q: filter %v", expr, filter)
		case err == nil:
			samples, baseRuns, headRuns := randomSamples(rand.New(rand.NewPCG(seed, 1)))
			b := newTestBuilder(samples, baseRuns, headRuns)
			mustBuild(t, b, Options{Filter: filter, MaxNodes: 5})
			b.Functions(Options{Filter: filter})
		}
	})
}

func seed(s string) uint64 {
	var h uint64
	for _, c := range s {
		h = h*31 + uint64(c)
	}
	return h
}
