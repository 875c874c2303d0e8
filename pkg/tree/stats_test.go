package tree

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/stats"
)

// A/A: two sets of runs of the same program. Every discovery is false, so
// the false-discovery rate is the share of comparisons with any. Every
// seed is compared in each view, with and without maxNodes, and in both
// functions tables (collapsed or not: the only option they depend on).
func TestStatsAANoDiscoveries(t *testing.T) {
	seeds := testkit.Seeds(200, 40)
	for _, norm := range []Normalization{Absolute, Relative} {
		for _, runs := range []int{3, 10} {
			withAny := map[string]int{} // comparisons with a discovery, by setting
			compared, tested := 0, 0
			count := func(setting string, found bool) {
				withAny[setting] += 0 // every setting is listed, with or without a discovery
				if found {
					withAny[setting]++
				}
				compared++
			}
			for seed := range seeds {
				r := rand.New(rand.NewPCG(uint64(seed), 7))
				b := simDiff(r, newSimProgram(r, 300), runs, 0.03, unchanged)
				for _, view := range statViews {
					for _, maxNodes := range []int{0, 100} {
						o := view
						o.Normalize, o.MaxNodes = norm, maxNodes
						if o.CollapseSystem {
							o.IsSystem = isSimSystem(b)
						}
						tr := mustBuild(t, b, o)
						for _, s := range tr.Stats {
							if !math.IsNaN(s.QValue) {
								tested++
							}
						}
						sig := significantNodes(tr)
						if len(sig) > 0 {
							t.Logf("%v %d runs seed %d %+v: %d false discoveries: %v", norm, runs, seed, o, len(sig), sig)
						}
						count(fmt.Sprintf("tree inverted=%v collapsed=%v maxNodes=%d", o.Inverted, o.CollapseSystem, maxNodes), len(sig) > 0)
					}
				}
				for _, collapse := range []bool{false, true} {
					o := Options{Normalize: norm, CollapseSystem: collapse}
					if collapse {
						o.IsSystem = isSimSystem(b)
					}
					fn := b.Functions(o)
					found := slices.ContainsFunc(fn, func(f Function) bool { return f.Significant })
					if found {
						t.Logf("%v %d runs seed %d collapsed=%v: a significant function", norm, runs, seed, collapse)
					}
					count(fmt.Sprintf("functions collapsed=%v", collapse), found)
				}
			}
			total := 0
			for _, setting := range slices.Sorted(maps.Keys(withAny)) {
				total += withAny[setting]
				fdr := float64(withAny[setting]) / float64(seeds)
				t.Logf("A/A %v, %d runs a side, %s: observed FDR %.3f over %d comparisons", norm, runs, setting, fdr, seeds)
				if fdr > stats.DefaultAlpha {
					t.Errorf("A/A %v %d runs %s: observed FDR %.3f above %v", norm, runs, setting, fdr, stats.DefaultAlpha)
				}
			}
			t.Logf("A/A %v, %d runs a side: observed FDR %.3f over %d trees and function tables (%d tests)",
				norm, runs, float64(total)/float64(compared), compared, tested)
		}
	}
}

// A function holding ~9% of the total grows 1.6x among 3% run-to-run
// noise: 10 runs a side find it in every view, as a node and a function.
func TestStatsPower(t *testing.T) {
	found, trials := 0, 0
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 8))
		p := newSimProgram(r, 300)
		target := heaviestShare(p, 0.09)
		b := simDiff(r, p, 10, 0.03, func(s []string) float64 {
			if slices.Contains(s, target) {
				return 1.6
			}
			return 1
		})
		for _, o := range statViews {
			o.MaxNodes = 200
			if o.CollapseSystem {
				o.IsSystem = isSimSystem(b)
			}
			tr := mustBuild(t, b, o)
			trials++
			for i, s := range tr.Stats {
				if tr.Label(i) == target && s.Significant && tr.Delta(i) > 0 {
					found++
					break
				}
			}
		}
		fn := b.Functions(Options{})
		trials++
		if i := slices.IndexFunc(fn, func(f Function) bool { return f.Name == target }); i >= 0 && fn[i].Significant {
			found++
		}
	}
	t.Logf("power: 1.6x of a ~9%% function found in %d of %d views and function tables", found, trials)
	if found != trials {
		t.Errorf("found %d of %d", found, trials)
	}
}

// heaviestShare picks the function whose stacks hold the share of the
// total closest to want.
func heaviestShare(p *simProgram, want float64) string {
	share := map[string]float64{}
	var total float64
	for i, s := range p.stacks {
		total += p.mean[i]
		seen := map[string]bool{}
		for _, f := range s[1:] {
			if !seen[f] {
				seen[f] = true
				share[f] += p.mean[i]
			}
		}
	}
	best := ""
	for f, v := range share {
		if best == "" || math.Abs(v/total-want) < math.Abs(share[best]/total-want) || math.Abs(v/total-want) == math.Abs(share[best]/total-want) && f < best {
			best = f
		}
	}
	return best
}

// The 95% interval of delta covers the true delta (from the program's
// means) of about 95% of the nodes.
func TestStatsCICoverage(t *testing.T) {
	covered, n := 0, 0
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		p := newSimProgram(r, 100)
		factor := map[string]float64{}
		change := func(s []string) float64 {
			key := strings.Join(s, ";")
			if _, ok := factor[key]; !ok {
				factor[key] = 1
				if r.IntN(4) == 0 {
					factor[key] = 0.8 + 0.4*r.Float64()
				}
			}
			return factor[key]
		}
		b := simDiff(r, p, 10, 0.03, change)
		tr := mustBuild(t, b, Options{})
		// True per-run means of every node, by path.
		head, base := map[string]float64{}, map[string]float64{}
		var baseRoot float64
		for i, s := range p.stacks {
			baseRoot += p.mean[i]
			for d := 1; d <= len(s); d++ {
				key := strings.Join(s[:d], ";")
				head[key] += p.mean[i] * change(s)
				base[key] += p.mean[i]
			}
		}
		var path []string
		for i, nd := range tr.Nodes {
			if i == 0 {
				continue
			}
			path = append(path[:nd.Depth-1], tr.Label(i))
			key := strings.Join(path, ";")
			if base[key]+head[key] < 1000 {
				continue // counts too small for an interval on normal theory
			}
			truth := (head[key] - base[key]) / baseRoot
			n++
			if s := tr.Stats[i]; s.DeltaLow <= truth && truth <= s.DeltaHigh {
				covered++
			}
		}
	}
	rate := float64(covered) / float64(n)
	t.Logf("CI coverage %.3f over %d nodes", rate, n)
	if rate < 0.92 || rate > 0.98 {
		t.Errorf("95%% CI covers %.3f of %d true deltas", rate, n)
	}
}

// Head doing everything twice: +100% absolute and nothing relative.
func TestStatsNormalize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 10))
	p := newSimProgram(r, 200)
	b := NewBuilder(NewFrames())
	b.SetRuns(Base, 8)
	b.SetRuns(Head, 8)
	for run := range 8 {
		for i, v := range p.simRun(r, 0.03, unchanged) {
			var frames []uint32
			for _, name := range p.stacks[i] {
				frames = append(frames, b.frames.Intern(name, ""))
			}
			id := b.Stack(frames)
			b.AddRun(Base, run, id, v, 0)
			b.AddRun(Head, run, id, 2*v, 0)
		}
	}
	abs := mustBuild(t, b, Options{})
	if d, s := abs.Delta(0), abs.Stats[0]; d != 1 || !s.Significant || !(s.DeltaLow < 1 && 1 < s.DeltaHigh) {
		t.Errorf("absolute root: delta %v, stats %+v", d, s)
	}
	rel := mustBuild(t, b, Options{Normalize: Relative})
	if sig := significantNodes(rel); len(sig) > 0 {
		t.Errorf("relative finds %v", sig)
	}
	for i := range rel.Nodes {
		if d := rel.Delta(i); math.Abs(d) > 1e-12 {
			t.Fatalf("relative delta of %s = %v", rel.Label(i), d)
		}
	}
	if fn := b.Functions(Options{Normalize: Relative}); fn[0].Significant || math.Abs(fn[0].Delta) > 1e-12 {
		t.Errorf("relative functions: %+v", fn[0])
	}
}

// The q-values of a tree are Benjamini-Hochberg over its tested nodes
// (stats.BenjaminiHochberg, itself checked against the definition), and
// its p-values Welch's on the node's runs.
func TestStatsQValuesAreBH(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 11))
	p := newSimProgram(r, 150)
	b := simDiff(r, p, 5, 0.05, func(s []string) float64 { return 1 + 0.3*float64(len(s)%2) })
	for _, norm := range []Normalization{Absolute, Relative} {
		tr := mustBuild(t, b, Options{Normalize: norm})
		var ps []float64
		for i, s := range tr.Stats {
			x, y := slices.Clone(s.HeadRuns), slices.Clone(s.BaseRuns)
			if norm == Relative {
				share(x, tr.Stats[0].HeadRuns)
				share(y, tr.Stats[0].BaseRuns)
			}
			if want := stats.WelchTest(x, y).P; s.PValue != want {
				t.Fatalf("node %d: p %v, want %v", i, s.PValue, want)
			}
			ps = append(ps, s.PValue)
		}
		discoveries := 0
		for i, want := range stats.BenjaminiHochberg(ps) {
			if got := tr.Stats[i].QValue; got != want {
				t.Fatalf("%v node %d: q %v, want %v", norm, i, got, want)
			}
			if tr.Stats[i].Significant != (want < stats.DefaultAlpha) {
				t.Fatalf("node %d: significant %v at q %v", i, tr.Stats[i].Significant, want)
			}
			if tr.Stats[i].Significant {
				discoveries++
			}
		}
		if discoveries == 0 {
			t.Errorf("%v: no discoveries to check", norm)
		}
	}
}

// Each node's runs are the per-run totals of its stacks, and the runs
// add up to its total.
func TestStatsRuns(t *testing.T) {
	b := NewBuilder(NewFrames())
	b.SetRuns(Base, 2)
	b.SetRuns(Head, 3)
	add := func(side Side, run int, folded string, v int64) {
		b.AddRun(side, run, b.Stack(internFolded(b.frames, folded)), v, 0)
	}
	add(Base, 0, "main;a", 10)
	add(Base, 1, "main;a", 12)
	add(Base, 1, "main;b", 4)
	add(Head, 0, "main;a", 20)
	add(Head, 2, "main;a;c", 6)
	add(Head, 2, "main;b", 1)
	tr := mustBuild(t, b, Options{})
	got := map[string]string{}
	for i := range tr.Nodes {
		s := tr.Stats[i]
		got[tr.Label(i)] = fmt.Sprint(s.HeadRuns, s.BaseRuns)
		var h float64
		for _, v := range s.HeadRuns {
			h += v
		}
		if math.Abs(h/3-tr.Nodes[i].HeadTotal) > 1e-9 {
			t.Errorf("%s: head runs %v, total %v", tr.Label(i), s.HeadRuns, tr.Nodes[i].HeadTotal)
		}
	}
	want := map[string]string{
		"total": "[20 0 7] [10 16]", "main": "[20 0 7] [10 16]",
		"a": "[20 0 6] [10 12]", "c": "[0 0 6] [0 0]", "b": "[0 0 1] [0 4]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs %v\nwant %v", got, want)
	}
}

// On a tree big enough for two cores, each node's runs are the per-run
// sums of the stacks under it, counted stack by stack.
func TestStatsRunsBigTree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	p := newSimProgram(r, 8000)
	b := NewBuilder(NewFrames())
	const runs = 3
	want := map[string][]float64{} // path -> head runs, then base runs
	for side, col := range map[Side]int{Head: 0, Base: runs} {
		b.SetRuns(side, runs)
		for run := range runs {
			for i, v := range p.simRun(r, 0.1, unchanged) {
				if v == 0 {
					continue
				}
				var frames []uint32
				for d, name := range p.stacks[i] {
					frames = append(frames, b.frames.Intern(name, ""))
					path := strings.Join(p.stacks[i][:d+1], ";")
					if want[path] == nil {
						want[path] = make([]float64, 2*runs)
					}
					want[path][col+run] += float64(v)
				}
				b.AddRun(side, run, b.Stack(frames), v, uint64(i))
			}
		}
	}
	tr := mustBuild(t, b, Options{})
	if len(tr.Nodes) < 1<<12 {
		t.Fatalf("%d nodes: too few for two cores", len(tr.Nodes))
	}
	var path []string
	for i, n := range tr.Nodes[1:] {
		path = append(path[:n.Depth-1], tr.Label(i+1))
		got := append(slices.Clone(tr.Stats[i+1].HeadRuns), tr.Stats[i+1].BaseRuns...)
		if w := want[strings.Join(path, ";")]; !slices.Equal(got, w) {
			t.Fatalf("%v: runs %v, want %v", path, got, w)
		}
	}
}

// Without per-run values, or with one run a side, a diff has no
// statistics and says what it needs.
func TestStatsNotice(t *testing.T) {
	one := newTestBuilder([]sample{h("main", 1, 0), bs("main", 2, 0)}, 1, 1)
	tr := mustBuild(t, one, Options{})
	if tr.Stats != nil || !strings.Contains(tr.StatsNotice, "at least 2 runs on each side; have head 1, base 1") {
		t.Errorf("stats %v, notice %q", tr.Stats, tr.StatsNotice)
	}
	sums := newTestBuilder([]sample{h("main", 1, 0), bs("main", 2, 0)}, 2, 2)
	if tr := mustBuild(t, sums, Options{}); tr.Stats != nil || tr.StatsNotice == "" {
		t.Errorf("sums: stats %v, notice %q", tr.Stats, tr.StatsNotice)
	}
	if fn := sums.Functions(Options{}); fn[0].HeadRuns != nil || !math.IsNaN(fn[0].PValue) {
		t.Errorf("sums: function %+v", fn[0])
	}
	single := newTestBuilder([]sample{h("main", 1, 0)}, 0, 2)
	if tr := mustBuild(t, single, Options{}); tr.Stats != nil || tr.StatsNotice != "" {
		t.Errorf("single side: stats %v, notice %q", tr.Stats, tr.StatsNotice)
	}
}

// pprofDiff is the diff of testdata/pprof, each file a run of its side.
func pprofDiff(t *testing.T) *Builder {
	t.Helper()
	b := NewBuilder(NewFrames())
	addRunFiles(t, b, Base, testkit.PprofRuns(t, "base"))
	addRunFiles(t, b, Head, testkit.PprofRuns(t, "head"))
	return b
}

// On real profiles (3 runs a side; head compiles a regexp on every call),
// runs added with AddRunProfile show the regression: regexp.Compile ranks
// among the first rows (it was 119th by head self time) with an interval
// above 0, after the significant rows. With 3 runs a side (Welch's t on 2
// degrees of freedom) over 505 functions it falls short of q < 0.05 (q
// 0.12), as does its path in the tree (q 0.05-0.1): 3 runs are too few.
func TestStatsRealRegression(t *testing.T) {
	b := pprofDiff(t)
	fn := b.Functions(Options{})
	i := slices.IndexFunc(fn, func(f Function) bool { return f.Name == "regexp.Compile" })
	if i < 0 || i >= 15 || fn[i].PValue > 0.01 || fn[i].DeltaLow <= 0 {
		t.Fatalf("regexp.Compile at %d: %+v", i, fn[max(i, 0)])
	}
	for k := 1; k < len(fn); k++ {
		if fn[k].Significant && !fn[k-1].Significant {
			t.Fatalf("row %d (%s) significant after an insignificant row", k, fn[k].Name)
		}
	}
	// In the tree, the regressed path is kept under maxNodes with an
	// interval above 0 all the way down to regexp.compile.
	tr := mustBuild(t, b, Options{MaxNodes: 200})
	at := paths(tr)
	for _, path := range []string{"runtime.main;main.main;main.iteration", "runtime.main;main.main;main.iteration;main.validateHead;regexp.MustCompile;regexp.Compile;regexp.compile"} {
		k, ok := at[path]
		if !ok || tr.Stats[k].DeltaLow <= 0 || tr.Stats[k].PValue > 0.01 {
			t.Errorf("%s: kept %v, %+v", path, ok, tr.Stats[max(k, 0)])
		}
	}
	t.Logf("regexp.Compile ranked %d of %d: delta %.3g [%.3g, %.3g], q %.3g", i+1, len(fn), fn[i].Delta, fn[i].DeltaLow, fn[i].DeltaHigh, fn[i].QValue)
}
