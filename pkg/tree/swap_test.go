package tree

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// stackProgram is a program of folded stacks with a mean value on each
// side (0: the side does not run it), and a side's factor of each stack.
func stackProgram(stacks map[string][2]float64) (*simProgram, func(side int) func([]string) float64) {
	p, factor := &simProgram{}, map[string][2]float64{}
	for _, s := range slices.Sorted(maps.Keys(stacks)) {
		v := stacks[s]
		mean := max(v[0], v[1])
		p.stacks, p.mean = append(p.stacks, strings.Split(s, ";")), append(p.mean, mean)
		factor[s] = [2]float64{v[0] / mean, v[1] / mean}
	}
	return p, func(side int) func([]string) float64 {
		return func(s []string) float64 { return factor[strings.Join(s, ";")][side] }
	}
}

// render now calls encodeFast instead of marshal and escape, which called
// the shared helper scan four times as often: one culprit, at render,
// naming the swap, with the net change; scan, unchanged code called less
// often, is no culprit of its own, also where a JIT inlined marshal into
// render in base, so that a third of scan's calls show under render.
func TestCulpritSwapAtCaller(t *testing.T) {
	swap := map[string][2]float64{
		"main;render":                 {200, 200},
		"main;render;marshal":         {600, 0},
		"main;render;marshal;scan":    {1200, 0},
		"main;render;escape":          {300, 0},
		"main;render;escape;scan":     {1200, 0},
		"main;render;encodeFast":      {0, 300},
		"main;render;encodeFast;scan": {0, 600},
		"main":                        {1500, 1500},
		"main;g;g.leaf":               {1500, 1500},
	}
	inlined := maps.Clone(swap)
	inlined["main;render;marshal;scan"], inlined["main;render;scan"] = [2]float64{400, 0}, [2]float64{800, 0}
	// Node's randomFillSync, called eight times less often through uuid 9's
	// randomUUID, called wrappedFn itself in a few of head's samples: a
	// function new to the group whose caller lost time is no split there.
	below := maps.Clone(swap)
	below["main;render;encodeFast;scan;wrap"] = [2]float64{0, 3}
	for name, program := range map[string]map[string][2]float64{"swap": swap, "marshal inlined in base": inlined, "a new callee below the swap": below} {
		t.Run(name, func(t *testing.T) { swapAtCaller(t, program) })
	}
}

func swapAtCaller(t *testing.T, program map[string][2]float64) {
	p, side := stackProgram(program)
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 46))
		for _, norm := range []Normalization{Absolute, Relative} {
			tr := mustBuild(t, simDiffSides(r, p, 10, 0.03, side(0), side(1)), Options{Normalize: norm})
			cs := tr.Culprits()
			at := slices.IndexFunc(cs, func(c Culprit) bool { return pathString(tr, c.Sites[0]) == "main;render" })
			if at < 0 || cs[at].Kind != CulpritReplaced || cs[at].Delta >= 0 {
				t.Fatalf("seed %d, %s: want a replaced culprit at render, got %v", seed, norm, describe(tr, cs))
			}
			c := cs[at]
			var added, gone []string
			for _, n := range c.NewCallees {
				added = append(added, tr.Label(n))
			}
			for _, n := range c.GoneCallees {
				gone = append(gone, tr.Label(n))
			}
			// (inlined: render no longer calls scan itself either, which the
			// tree shows as a callee gone too)
			if !slices.Equal(added, []string{"encodeFast"}) || !slices.Contains(gone, "marshal") || !slices.Contains(gone, "escape") ||
				len(gone) > 3 || tr.Label(c.Callee) != "encodeFast" || tr.Label(c.Replaced) != gone[0] {
				t.Errorf("seed %d, %s: swap %v instead of %v (callee %d, replaced %d)", seed, norm, added, gone, c.Callee, c.Replaced)
			}
			if slices.ContainsFunc(cs, func(c Culprit) bool { return tr.Frames.Name(c.Frame) == "scan" }) {
				t.Errorf("seed %d, %s: scan, called less often, is a culprit: %v", seed, norm, describe(tr, cs))
			}
			if norm == Absolute {
				if bad := checkClaims(tr, cs); len(bad) > 0 {
					t.Errorf("seed %d: claims beyond the flat change: %v", seed, bad)
				}
			}
		}
	}
}

// A removed call names the callee gone and no other function: not the
// sibling beside it that grew on its own (a self culprit of its own).
func TestCulpritRemovedNamesOnlyTheCallee(t *testing.T) {
	p, side := stackProgram(map[string][2]float64{
		"main;h":               {500, 500},
		"main;h;cache.Old":     {1000, 0},
		"main;h;cache.Old;get": {500, 0},
		"main;h;sib":           {1000, 2500},
		"main":                 {1500, 1500},
	})
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 47))
		tr := mustBuild(t, simDiffSides(r, p, 10, 0.03, side(0), side(1)), Options{})
		cs := tr.Culprits()
		at := slices.IndexFunc(cs, func(c Culprit) bool { return c.Kind == CulpritRemoved })
		if at < 0 || pathString(tr, cs[at].Sites[0]) != "main;h" || tr.Label(cs[at].Replaced) != "cache.Old" {
			t.Fatalf("seed %d: want h no longer calling cache.Old, got %v", seed, describe(tr, cs))
		}
		if c := cs[at]; c.Callee >= 0 && tr.Label(c.Callee) != "get" || len(c.NewCallees)+len(c.GoneCallees) > 0 {
			t.Errorf("seed %d: the removed call names callee %d %q, swap %v %v", seed, c.Callee, tr.Label(max(c.Callee, 0)), c.NewCallees, c.GoneCallees)
		}
		if !slices.ContainsFunc(cs, func(c Culprit) bool { return c.Kind == CulpritSelf && tr.Frames.Name(c.Frame) == "sib" }) {
			t.Errorf("seed %d: sib's own change is no culprit: %v", seed, describe(tr, cs))
		}
	}
}

// Three functions make the whole run and one grows by two thirds: in
// shares, the other two shrink by as much as it grows, and every function
// is significant. The one that grew is the culprit (it alone explains the
// others' shrinking by one factor), never the two that make room, whatever
// the sign of the summed deltas' rounding (bisect's probes met this: a
// layout slowed down, and the verdict said price and parse had shrunk).
func TestCulpritWholeRunRelative(t *testing.T) {
	p, side := stackProgram(map[string][2]float64{
		"main;parse":  {950, 950},
		"main;price":  {1200, 1200},
		"main;render": {900, 1500},
	})
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 48))
		tr := mustBuild(t, simDiffSides(r, p, 10, 0.02, side(0), side(1)), Options{Normalize: Relative})
		cs := tr.Culprits()
		if len(cs) != 1 || pathString(tr, cs[0].Sites[0]) != "main;render" || cs[0].Delta <= 0 {
			t.Errorf("seed %d: want render's regression alone, got %v", seed, describe(tr, cs))
		}
	}
}
