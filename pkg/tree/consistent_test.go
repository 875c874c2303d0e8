package tree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// inconsistent lists the culprits whose numbers contradict themselves: an
// interval that holds 0, a q-value below the p-value, or one at alpha or
// above.
func inconsistent(t *Tree, cs []Culprit) []string {
	var bad []string
	for _, c := range cs {
		if !(c.DeltaLow > 0 || c.DeltaHigh < 0) || !(c.QValue >= c.PValue) || !(c.QValue < t.Alpha) {
			bad = append(bad, fmt.Sprintf("%s [%.4g, %.4g] p %.2g", describe(t, []Culprit{c})[0], c.DeltaLow, c.DeltaHigh, c.PValue))
		}
	}
	return bad
}

// A function whose own time moved between two call paths (more under one
// caller, as much less under the other) did not change: both sites are
// significant, but their sum, what a culprit of the function would
// report, is not. It was a self culprit of about 0 whose interval held 0
// and whose q (a site's) was below its p (the sum's).
func TestCulpritSitesCancel(t *testing.T) {
	p := &simProgram{
		stacks: [][]string{{"main", "a", "resolve"}, {"main", "b", "resolve"}, {"main", "a"}, {"main", "b"}, {"main", "c"}},
		mean:   []float64{3000, 3000, 2000, 2000, 5000},
	}
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 40))
		head := func(s []string) float64 {
			switch strings.Join(s, ";") {
			case "main;a;resolve":
				return 1.5
			case "main;b;resolve":
				return 0.5
			}
			return 1
		}
		tr := mustBuild(t, simDiffSides(r, p, 10, 0.02, func([]string) float64 { return 1 }, head), Options{})
		cs := tr.Culprits()
		if bad := inconsistent(tr, cs); len(bad) > 0 {
			t.Fatalf("seed %d: %v", seed, bad)
		}
		for _, c := range cs {
			if tr.Frames.Name(c.Frame) == "resolve" && c.Kind == CulpritSelf {
				t.Fatalf("seed %d: resolve is a culprit: %v", seed, describe(tr, cs))
			}
		}
	}
}

// randomShapes plants, in a random program (stacks of up to 7 frames of 30
// functions: recursion and functions under many callers), changes of every
// shape a culprit kind comes from, each with probability 1/2: a function's
// own time scaled wherever it is the leaf (self, one or many sites), a
// function's whole subtree scaled (spread), a new stack and a removed one;
// with none planted it is an A/A comparison.
func randomShapes(r *rand.Rand) (p *simProgram, base, head func([]string) float64) {
	p = newSimProgram(r, 40+r.IntN(80))
	fn := func() string { return fmt.Sprint("f", r.IntN(30)) }
	selfFn, selfFactor := fn(), 0.3+2*r.Float64()
	spreadFn, spreadFactor := fn(), 0.3+2*r.Float64()
	plant := [4]bool{r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0}
	// The new and removed calls' callers are functions of their own: the
	// flat change a culprit in moved work is held to (checkClaims) sums a
	// caller's self time over the whole tree.
	for _, callee := range []string{"fresh", "stale"} {
		caller := []string{"main", fn(), "call." + callee}
		p.stacks = append(p.stacks, caller, append(slices.Clone(caller), callee))
		p.mean = append(p.mean, 1000*r.Float64(), 2000*r.Float64())
	}
	base = func(s []string) float64 {
		if s[len(s)-1] == "fresh" && plant[2] {
			return 0
		}
		return 1
	}
	head = func(s []string) float64 {
		f := 1.0
		if plant[0] && s[len(s)-1] == selfFn {
			f *= selfFactor
		}
		if plant[1] {
			for _, name := range s {
				if name == spreadFn {
					f *= spreadFactor
					break
				}
			}
		}
		if plant[3] && s[len(s)-1] == "stale" {
			f = 0
		}
		return f
	}
	return p, base, head
}

// Property: over A/A comparisons and planted changes of random shapes, in
// random and structured programs, both normalisations, every culprit's
// interval leaves 0 out and its q-value is at least its p-value and below
// alpha; absolute culprits claim no more than the flat change of their
// functions (checkClaims).
func TestCulpritsConsistent(t *testing.T) {
	seeds := testkit.Seeds(400, 80)
	var checked, aa int
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 41))
		var p *simProgram
		var base, head func([]string) float64
		switch seed % 3 {
		case 0:
			p, base, head = randomShapes(r)
		case 1:
			p = newCulpritProgram(r)
			base, head = plantAll()
			if r.IntN(3) == 0 {
				head, aa = base, aa+1
			}
		default:
			p = newCulpritProgram(r)
			costs := []float64{1, 0.6, 1.6, 0.5 + 1.5*r.Float64(), 1}
			base, head = structuralSides(r, p, func(k int) float64 { return costs[k] })
		}
		b := simDiffSides(r, p, 3+r.IntN(10), 0.01+0.09*r.Float64(), base, head)
		for _, norm := range []Normalization{Absolute, Relative} {
			tr := mustBuild(t, b, Options{Normalize: norm})
			cs := tr.Culprits()
			checked += len(cs)
			if bad := inconsistent(tr, cs); len(bad) > 0 {
				t.Errorf("seed %d %s: %v", seed, norm, bad)
			}
			if bad := checkClaims(tr, cs); norm == Absolute && len(bad) > 0 {
				t.Errorf("seed %d: claims beyond the flat change: %v", seed, bad)
			}
		}
	}
	t.Logf("%d culprits checked over %d seeds (%d of them A/A)", checked, seeds, aa)
}
