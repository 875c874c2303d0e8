package tree

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// structuralChange is a change of structure planted in
// newCulpritProgram's head (a function split off, a wrapper, a change of
// inlining, a rename, a callee replaced): each side runs its own stacks,
// and the same work unless cost says otherwise.
type structuralChange struct {
	name string
	// base and head are the stacks of each side, and their mean share of
	// the program's total before the cost change.
	base, head []string
	mean       float64
	// want is the culprit a cost change inside it must give: its kind and
	// the path of its first site.
	kind CulpritKind
	path string
}

// structuralChanges are the five kinds, each under its own mid function
// of newCulpritProgram, away from the planted changes of plantedChanges.
var structuralChanges = []structuralChange{
	{"split", []string{"main;h0;h0.m1;h0.m1.write"}, []string{"main;h0;h0.m1;h0.m1.flush;h0.m1.write"}, 0.04,
		CulpritSelf, "main;h0;h0.m1;h0.m1.flush;h0.m1.write"},
	{"wrapper", []string{"main;h1;h1.m1;h1.m1.work"}, []string{"main;h1;h1.m1;wrap.call;h1.m1.work"}, 0.04,
		CulpritSelf, "main;h1;h1.m1;wrap.call;h1.m1.work"},
	// base inlined h2.m2.inl into h2.m2: its time is h2.m2's own
	{"inline", []string{"main;h2;h2.m2"}, []string{"main;h2;h2.m2;h2.m2.inl"}, 0.04,
		CulpritNew, "main;h2;h2.m2;h2.m2.inl"},
	{"rename", []string{"main;h3;h3.m2;h3.m2.parse"}, []string{"main;h3;h3.m2v2;h3.m2.parse"}, 0.04,
		CulpritSelf, "main;h3;h3.m2v2;h3.m2.parse"},
	{"replaced", []string{"main;h5;h5.m2;json.Marshal", "main;h5;h5.m2;json.Marshal;json.encodeState"},
		[]string{"main;h5;h5.m2;own.encode"}, 0.02, CulpritReplaced, "main;h5;h5.m2"},
}

// structuralSides adds the structural changes' stacks to p and returns
// each side's factors: head's stacks of a change are absent from base and
// base's from head; cost multiplies the head stacks of change k by
// cost(k); the new call of newCulpritProgram runs on neither side. A
// rename renames the whole subtree of h3.m2 in head.
func structuralSides(r *rand.Rand, p *simProgram, cost func(k int) float64) (base, head func([]string) float64) {
	var total float64
	for _, m := range p.mean {
		total += m
	}
	side := map[string]int{}     // stack -> change k+1 (base) or -(k+1) (head)
	kept := map[string]float64{} // head's factor of a stack base adds to
	for k, c := range structuralChanges {
		mean := total * c.mean * (0.7 + 0.6*r.Float64()) / float64(len(c.base))
		for _, s := range c.base {
			// A stack the program has (an inlined function's time in its
			// caller's self) takes the base time; head keeps its own.
			if at := slices.IndexFunc(p.stacks, func(st []string) bool { return strings.Join(st, ";") == s }); at >= 0 {
				kept[s] = p.mean[at] / (p.mean[at] + mean)
				p.mean[at] += mean
				continue
			}
			p.stacks, p.mean = append(p.stacks, strings.Split(s, ";")), append(p.mean, mean)
			side[s] = k + 1
		}
		each := mean * float64(len(c.base)) / float64(len(c.head))
		for _, s := range c.head {
			p.stacks, p.mean = append(p.stacks, strings.Split(s, ";")), append(p.mean, each)
			side[s] = -(k + 1)
		}
	}
	// The rest of h3.m2 is renamed too (its own time and other callees).
	for i, s := range slices.Clone(p.stacks) {
		if len(s) >= 3 && s[2] == "h3.m2" && side[strings.Join(s, ";")] == 0 {
			renamed := slices.Clone(s)
			renamed[2] = "h3.m2v2"
			p.stacks, p.mean = append(p.stacks, renamed), append(p.mean, p.mean[i])
			side[strings.Join(s, ";")], side[strings.Join(renamed, ";")] = len(structuralChanges)+1, -(len(structuralChanges) + 1)
		}
	}
	base = func(s []string) float64 {
		k := side[strings.Join(s, ";")]
		return map[bool]float64{true: 0, false: withoutNewCall(s)}[k < 0]
	}
	head = func(s []string) float64 {
		key := strings.Join(s, ";")
		k := side[key]
		switch {
		case kept[key] > 0:
			return kept[key]
		case k > 0:
			return 0
		case k < 0 && -k <= len(structuralChanges):
			return cost(-k - 1)
		}
		return withoutNewCall(s)
	}
	return base, head
}

// costFactor is the cost change planted inside change k with cost: 1.6
// times the moved work's (a slower write after the split, ...); the
// replacing encoder is cheaper (0.6) in even seeds and dearer (1.5) in
// odd ones.
func costFactor(seed int) func(k int) float64 {
	return func(k int) float64 {
		if structuralChanges[k].name == "replaced" && seed%2 == 0 {
			return 0.6
		}
		return map[bool]float64{true: 1.5, false: 1.6}[structuralChanges[k].name == "replaced"]
	}
}

// nearStructure says whether a culprit's path is that of a structural
// change's caller (main;h0;h0.m1, ...) or under it: a culprit that the
// structural change may have caused. (Above it, on the handlers, culprits
// come at the A/A rate: the noise of every other function.)
func nearStructure(path string) bool {
	for _, c := range structuralChanges {
		caller := strings.Join(strings.Split(c.base[0], ";")[:3], ";")
		if strings.HasPrefix(path, caller) ||
			c.name == "rename" && strings.HasPrefix(path, "main;h3;h3.m2v2") {
			return true
		}
	}
	return false
}

// flatChange is the change of the functions' self values summed over the
// whole tree (pprof's flat diff) for the functions in the subtrees of a
// culprit's sites (its function alone for a self culprit), in Delta's
// units: the most cost change the culprit can explain. Culprits found
// without moved work (not Moved, and neither new, removed nor replaced)
// claim their own nodes' values: for them the flat change is summed over
// their sites' subtrees (a function shared with other callers, as
// lib.encode is, changes elsewhere too).
func flatChange(t *Tree, c Culprit) float64 {
	scope := func(i int) bool { return i > 0 }
	if !c.Moved && (c.Kind == CulpritSelf || c.Kind == CulpritSpread) {
		scope = func(i int) bool {
			for _, s := range c.Sites {
				if i >= s && i < s+int(t.Nodes[s].Size) && (c.Kind != CulpritSelf || i == s) {
					return i > 0
				}
			}
			return false
		}
	}
	flat := map[uint32]float64{}
	for i, nd := range t.Nodes {
		if scope(i) {
			flat[nd.Frame] += t.SelfDelta(i)
		}
	}
	in := map[uint32]bool{c.Frame: true}
	for _, s := range c.Sites {
		subtree := func(s int) {
			for n := s; n < s+int(t.Nodes[s].Size); n++ {
				in[t.Nodes[n].Frame] = true
			}
		}
		switch c.Kind {
		case CulpritSelf:
		case CulpritRemoved: // the removed callees (and, in moved work, the caller's self)
			if !c.Moved {
				delete(in, c.Frame)
			}
			for ch := s + 1; ch < s+int(t.Nodes[s].Size); ch += int(t.Nodes[ch].Size) {
				if t.Nodes[ch].HeadTotal == 0 {
					subtree(ch)
				}
			}
		case CulpritReplaced: // the caller's self and its new and removed callees
			for ch := s + 1; ch < s+int(t.Nodes[s].Size); ch += int(t.Nodes[ch].Size) {
				if k := t.Nodes[ch]; k.BaseTotal == 0 || k.HeadTotal == 0 {
					subtree(ch)
				}
			}
		default:
			subtree(s)
		}
	}
	var sum float64
	for f := range in {
		if f != RootFrame {
			sum += flat[f]
		}
	}
	return sum
}

// checkClaims says which culprits claim more than the flat change of the
// functions they stand for, beyond their confidence interval.
func checkClaims(t *Tree, cs []Culprit) []string {
	var bad []string
	for _, c := range cs {
		flat := flatChange(t, c)
		if c.Delta > 0 && flat < c.DeltaLow || c.Delta < 0 && flat > c.DeltaHigh {
			bad = append(bad, describe(t, []Culprit{c})[0]+" flat "+ftoa(math.Round(1e4*flat)/100)+"%")
		}
	}
	return bad
}

// The structural kinds, all five planted at once: without a cost change
// they give no culprit (but in at most 2% of comparisons) and a move each;
// with one inside each, each is found, at the function whose cost changed
// (a replaced callee: at the caller, with its net sign), in 95% or more
// of comparisons, with at most 2% false culprits; no culprit ever claims
// more than the flat profile's change of its functions beyond its
// interval. Figures in docs/CULPRITS.md.
func TestCulpritsStructural(t *testing.T) {
	seeds := testkit.Seeds(300, 60)
	for _, norm := range []Normalization{Absolute, Relative} {
		t.Run(norm.String(), func(t *testing.T) {
			var noCost, related, moves int
			found := make([]int, len(structuralChanges))
			var reported, false_ int
			for seed := range seeds {
				r := rand.New(rand.NewPCG(uint64(seed), 28))
				p := newCulpritProgram(r)
				base, head := structuralSides(r, p, func(int) float64 { return 1 })
				tr := mustBuild(t, simDiffSides(r, p, 10, 0.03, base, head), Options{Normalize: norm})
				cs, ms := tr.Changes()
				if len(cs) > 0 {
					noCost++
				}
				if slices.ContainsFunc(cs, func(c Culprit) bool { return nearStructure(pathString(tr, c.Sites[0])) }) {
					related++
					t.Logf("seed %d, no cost change: culprits %v", seed, describe(tr, cs))
				}
				moves += len(ms)
				if bad := checkClaims(tr, cs); norm == Absolute && len(bad) > 0 {
					t.Errorf("seed %d, no cost change: claims beyond the flat change: %v", seed, bad)
				}

				r = rand.New(rand.NewPCG(uint64(seed), 29))
				p = newCulpritProgram(r)
				base, head = structuralSides(r, p, costFactor(seed))
				tr = mustBuild(t, simDiffSides(r, p, 10, 0.03, base, head), Options{Normalize: norm})
				cs = tr.Culprits()
				if bad := checkClaims(tr, cs); norm == Absolute && len(bad) > 0 {
					t.Errorf("seed %d, cost changes: claims beyond the flat change: %v", seed, bad)
				}
				for _, c := range cs {
					reported++
					k := slices.IndexFunc(structuralChanges, func(s structuralChange) bool {
						return s.kind == c.Kind && s.path == pathString(tr, c.Sites[0])
					})
					if k < 0 {
						false_++
						if false_ <= 10 {
							t.Logf("seed %d: false culprit %v", seed, describe(tr, []Culprit{c}))
						}
						continue
					}
					if (c.Delta > 0) == (costFactor(seed)(k) > 1) {
						found[k]++
					}
				}
			}
			t.Logf("no cost change: comparisons with a culprit %d of %d (A/A-like), with one at or under a structural change %d, %.1f moves each",
				noCost, seeds, related, float64(moves)/float64(seeds))
			if related > seeds*2/100 {
				t.Errorf("structural changes without a cost change give culprits in %d of %d comparisons, want at most 2%%", related, seeds)
			}
			if noCost > seeds*5/100 {
				t.Errorf("structural changes without a cost change: culprits in %d of %d comparisons, want at most the A/A's 5%%", noCost, seeds)
			}
			if moves < seeds*len(structuralChanges)*9/10 {
				t.Errorf("%d moves reported in %d comparisons of %d structural changes each", moves, seeds, len(structuralChanges))
			}
			for k, n := range found {
				t.Logf("%s: found in %d of %d", structuralChanges[k].name, n, seeds)
				if n < seeds*95/100 {
					t.Errorf("%s with a cost change found in %d of %d comparisons, want 95%%+", structuralChanges[k].name, n, seeds)
				}
			}
			t.Logf("false culprits %d of %d", false_, reported)
			if float64(false_) > 0.02*float64(reported) {
				t.Errorf("%d of %d culprits are false, want at most 2%%", false_, reported)
			}
		})
	}
}

// Property: whatever moved and changed, no culprit claims more than the
// flat profile's change of the functions it stands for (pprof -top
// -diff_base: their self values summed over the tree), beyond its 95%
// interval. Each seed draws the runs (3-12 a side), the noise (1-10%),
// the cost change inside each structural change (none, 0.6, 1.6 or any
// from 0.5 to 2) and whether the planted changes of plantedChanges come
// too.
func TestCulpritsClaimWithinFlat(t *testing.T) {
	seeds := testkit.Seeds(300, 60)
	checked := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 30))
		p := newCulpritProgram(r)
		costs := make([]float64, len(structuralChanges))
		for k := range costs {
			costs[k] = []float64{1, 0.6, 1.6, 0.5 + 1.5*r.Float64()}[r.IntN(4)]
		}
		base, head := structuralSides(r, p, func(k int) float64 { return costs[k] })
		if r.IntN(2) == 0 {
			structural := head
			head = func(s []string) float64 {
				if s[len(s)-1] == "regexp.Compile" {
					return 1
				}
				f, key := structural(s), strings.Join(s, ";")
				for _, c := range plantedChanges {
					f *= c.factor(key)
				}
				return f
			}
		}
		tr := mustBuild(t, simDiffSides(r, p, 3+r.IntN(10), 0.01+0.09*r.Float64(), base, head), Options{})
		cs := tr.Culprits()
		checked += len(cs)
		if bad := checkClaims(tr, cs); len(bad) > 0 {
			t.Errorf("seed %d: claims beyond the flat change: %v", seed, bad)
		}
	}
	t.Logf("%d culprits checked over %d seeds", checked, seeds)
}

// More shapes of moved work, without a cost change: deeper and shallower
// recursion (the sides part where one more f calls the leaf), a function
// split off for half of its calls, a wrapper removed. Each is a move at
// the node where the sides part, from and to the frames that say so, and
// no culprit.
func TestCulpritsMovedShapes(t *testing.T) {
	type stack struct {
		frames     string
		base, head float64 // mean values
	}
	// Work the moves leave alone: main's own time and another function.
	rest := []stack{{"main", 1500, 1500}, {"main;g;g.leaf", 1500, 1500}}
	for _, c := range []struct {
		name     string
		stacks   []stack
		parent   string // the move's
		to, from string // its largest parts
	}{
		{"deeper recursion", []stack{{"main;f;f;leaf", 1000, 0}, {"main;f;f;f;leaf", 0, 1000}}, "main;f;f", "f", "leaf"},
		{"shallower recursion", []stack{{"main;f;f;f;leaf", 1000, 0}, {"main;f;f;leaf", 0, 1000}}, "main;f;f", "leaf", "f"},
		{"split for half the calls", []stack{{"main;Close;write", 2000, 1000}, {"main;Close;Flush;write", 0, 1000}}, "main;Close", "Flush", "write"},
		{"wrapper removed", []stack{{"main;h;W;f", 1000, 0}, {"main;h;f", 0, 1000}}, "main;h", "f", "W"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, factor := &simProgram{}, map[string][2]float64{}
			for _, s := range append(slices.Clone(c.stacks), rest...) {
				mean := max(s.base, s.head)
				p.stacks, p.mean = append(p.stacks, strings.Split(s.frames, ";")), append(p.mean, mean)
				factor[s.frames] = [2]float64{s.base / mean, s.head / mean}
			}
			side := func(k int) func([]string) float64 {
				return func(s []string) float64 { return factor[strings.Join(s, ";")][k] }
			}
			noise := 0
			for seed := range 20 {
				r := rand.New(rand.NewPCG(uint64(seed), 31))
				for _, norm := range []Normalization{Absolute, Relative} {
					tr := mustBuild(t, simDiffSides(r, p, 10, 0.03, side(0), side(1)), Options{Normalize: norm})
					cs, ms := tr.Changes()
					// Noise elsewhere (g.leaf) makes culprits at the A/A
					// rate; none lies on the moved work's path.
					noise += len(cs)
					if slices.ContainsFunc(cs, func(cu Culprit) bool {
						at := pathString(tr, cu.Sites[0])
						return strings.HasPrefix(at, c.parent) || strings.HasPrefix(c.parent, at)
					}) {
						t.Errorf("seed %d, %s: culprits %v", seed, norm, describe(tr, cs))
					}
					if len(ms) != 1 || pathString(tr, ms[0].Parent) != c.parent || tr.Label(ms[0].To[0]) != c.to ||
						tr.Label(ms[0].From[0]) != c.from || math.Abs(ms[0].Net) > 0.03 || ms[0].Moved < 0.15 {
						t.Errorf("seed %d, %s: moves %+v", seed, norm, ms)
					}
				}
			}
			if noise > 2 {
				t.Errorf("%d culprits in 40 comparisons", noise)
			}
		})
	}
}
