package verdict

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

// diff builds a diff of 6 runs a side: base values of each stack, head
// values scaled by factor(stack), with ±0.5% of alternating noise.
func diff(t *testing.T, stacks map[string]int64, factor func(stack string) float64) *tree.Tree {
	t.Helper()
	head := map[string]int64{}
	for stack, v := range stacks {
		head[stack] = int64(float64(v) * factor(stack))
	}
	return diffOf(t, stacks, head)
}

// diffOf builds a diff of 6 runs a side of base's and head's stacks, with
// ±0.5% of alternating noise.
func diffOf(t *testing.T, base, head map[string]int64) *tree.Tree {
	t.Helper()
	b := tree.NewBuilder(tree.NewFrames())
	const runs = 6
	b.SetRuns(tree.Base, runs)
	b.SetRuns(tree.Head, runs)
	stacks := map[string]bool{}
	for s := range base {
		stacks[s] = true
	}
	for s := range head {
		stacks[s] = true
	}
	i := 0
	for _, stack := range slices.Sorted(maps.Keys(stacks)) {
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, b.Frames().Intern(name, ""))
		}
		s := b.Stack(ids)
		for r := range runs {
			noise := 1 + 0.005*float64(1-2*((r+i)%2))
			if v := base[stack]; v > 0 {
				b.AddRun(tree.Base, r, s, int64(float64(v)*noise), uint64(i))
			}
			if v := head[stack]; v > 0 {
				b.AddRun(tree.Head, r, s, int64(float64(v)/noise), uint64(i))
			}
		}
		i++
	}
	tr, err := b.Build(tree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var program = map[string]int64{"main;a": 10000, "main;b;c": 20000, "main;b;d": 15000, "main;e": 30000}

// Everything 4% slower is one change, not a list: INCONCLUSIVE, pointing
// to relative normalisation; one function slower is a FAIL naming it.
func TestVerdicts(t *testing.T) {
	v := FromTree(diff(t, program, func(string) float64 { return 1.04 }), Input{MinBaseShare: DefaultMinBaseShare})
	if v.Result != Inconclusive || len(v.Regressions) != 1 || !v.Regressions[0].Root() ||
		!strings.HasPrefix(v.Headline, "Everything grew in proportion") || !strings.Contains(v.Why, "normalize=relative") {
		t.Errorf("uniform change: %s %q %q %+v", v.Result, v.Headline, v.Why, v.Regressions)
	}
	v = FromTree(diff(t, program, func(s string) float64 {
		return map[bool]float64{true: 1.5, false: 1}[s == "main;b;d"]
	}), Input{MinBaseShare: DefaultMinBaseShare, Modified: map[string]bool{"d": true}})
	if v.Result != Fail || len(v.Regressions) != 1 || v.Regressions[0].Function != "d" ||
		v.Headline != v.Regressions[0].Sentence() || !strings.Contains(v.Headline, "called from `b`") ||
		!strings.HasSuffix(v.Headline, "the head build modified it.") {
		t.Errorf("one slower function: %s %q %+v", v.Result, v.Headline, v.Regressions)
	}
	if _, err := json.Marshal(Culprit{Delta: Number(math.NaN()), Share: Number(math.Inf(1))}); err != nil {
		t.Errorf("NaN in JSON: %v", err)
	}
}

// A release 20% faster (decode takes half the time) that also split a
// method (Close calls a new Flush, which calls the old write) is an
// improvement whose first culprit is decode; the split is a move, no
// culprit; a callee replaced by a cheaper one is one culprit at its
// caller, with the net change.
func TestVerdictMovedWork(t *testing.T) {
	base := map[string]int64{"main;decode": 40000, "main;Close;write": 45000, "main;Close": 2000, "main;other": 13000}
	head := map[string]int64{"main;decode": 20000, "main;Close;Flush;write": 45000, "main;Close": 2000, "main;other": 13000}
	v := FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare})
	if v.Result != Pass || len(v.Regressions) != 0 || len(v.Improvements) != 1 || v.Improvements[0].Function != "decode" ||
		v.Improvements[0].Kind != "self" || math.Abs(float64(v.Improvements[0].Delta)+0.2) > 0.01 {
		t.Errorf("faster and split: %s %q %+v %+v", v.Result, v.Headline, v.Regressions, v.Improvements)
	}
	if len(v.Moved) != 1 || v.Moved[0].Function != "Flush" || v.Moved[0].Caller != "Close" || len(v.Moved[0].From) != 1 ||
		v.Moved[0].From[0].Function != "write" || v.Moved[0].From[0].Status != "removed" || math.Abs(float64(v.Moved[0].Moved)-0.45) > 0.01 ||
		math.Abs(float64(v.Moved[0].Net)) > 0.005 {
		t.Errorf("moves %+v", v.Moved)
	}
	want := "`Flush` is new, called from `Close`; it took over `write`: 45.00% of the base total moved, net "
	if s := v.Moved[0].Sentence(); !strings.HasPrefix(s, want) || !strings.Contains(v.Why, s[:len(want)]) {
		t.Errorf("move: %q, why %q", s, v.Why)
	}

	t.Log(v.Why)

	// The same split with write 10% of the base total slower inside Flush:
	// the culprit is write's own time, at its head site, and the move is
	// beside it.
	head["main;Close;Flush;write"] = 55000
	v = FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare})
	if len(v.Regressions) != 1 || v.Regressions[0].Function != "write" || v.Regressions[0].Kind != "self" || !v.Regressions[0].Moved ||
		strings.Join(v.Regressions[0].Path, ";") != "main;Close;Flush;write" || math.Abs(float64(v.Regressions[0].Delta)-0.1) > 0.005 ||
		len(v.Moved) != 1 || v.Moved[0].Function != "Flush" || v.Result != Fail {
		t.Errorf("split with a slower write: %s %q %+v %+v", v.Result, v.Headline, v.Regressions, v.Moved)
	}
	t.Log(v.Headline)

	// B no longer inlined into A: its time leaves A's own for a frame of
	// its own.
	v = FromTree(diffOf(t, map[string]int64{"main;A": 30000, "main;other": 70000},
		map[string]int64{"main;A": 10000, "main;A;B": 20000, "main;other": 70000}), Input{MinBaseShare: DefaultMinBaseShare})
	if v.Result != Pass || len(v.Regressions)+len(v.Improvements) != 0 || len(v.Moved) != 1 ||
		!strings.HasPrefix(v.Moved[0].Sentence(), "`B` is new, called from `A`; it took over `A`'s own time: 20.00% of the base total moved") {
		t.Errorf("inlining: %s %q %+v %+v", v.Result, v.Why, v.Regressions, v.Moved)
	}

	base = map[string]int64{"main;toString;json.Marshal": 20000, "main;toString;json.Marshal;reflect.Value": 10000, "main;toString": 5000, "main;other": 65000}
	head = map[string]int64{"main;toString;encode": 25000, "main;toString": 5000, "main;other": 65000}
	v = FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare})
	if v.Result != Pass || len(v.Regressions) != 0 || len(v.Improvements) != 1 {
		t.Fatalf("replaced callee: %s %q %+v %+v", v.Result, v.Headline, v.Regressions, v.Improvements)
	}
	c := v.Improvements[0]
	if c.Kind != "replaced" || c.Function != "toString" || c.Callee != "encode" || c.Replaced != "json.Marshal" ||
		math.Abs(float64(c.Delta)+0.05) > 0.005 || !strings.HasPrefix(v.Headline, "`toString` now calls `encode` instead of `json.Marshal`: net -5.") {
		t.Errorf("replaced callee: %q %+v", v.Headline, c)
	}
	t.Log(v.Headline)
	head["main;toString;encode"] = 40000
	v = FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare})
	if v.Result != Fail || len(v.Regressions) != 1 || v.Regressions[0].Kind != "replaced" || math.Abs(float64(v.Regressions[0].Delta)-0.1) > 0.005 {
		t.Errorf("dearer callee: %s %q %+v", v.Result, v.Headline, v.Regressions)
	}
	t.Log(v.Headline)
}

// A culprit whose interval rules out a tenth of the threshold is no
// culprit of the verdict; one whose interval reaches it is.
func TestNegligibleCulprits(t *testing.T) {
	v := &Verdict{MinBaseShare: 0.01}
	for _, c := range []struct {
		low, high  float64
		negligible bool
	}{{0.00001, 0.0001, true}, {-0.0003, -0.00001, true}, {0.0002, 0.0011, false}, {-0.002, -0.0005, false}} {
		if got := v.negligible(Culprit{Function: "f", Path: []string{"main", "f"}, DeltaLow: Number(c.low), DeltaHigh: Number(c.high)}); got != c.negligible {
			t.Errorf("interval [%g, %g]: negligible %v, want %v", c.low, c.high, got, c.negligible)
		}
	}
}
