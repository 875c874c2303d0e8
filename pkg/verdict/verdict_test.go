package verdict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

// diff builds a diff of 6 runs a side: base values of each stack, head
// values scaled by factor(stack), with ±0.5% of alternating noise.
func diff(t *testing.T, stacks map[string]int64, factor func(stack string) float64) *tree.Tree {
	t.Helper()
	b := tree.NewBuilder(tree.NewFrames())
	const runs = 6
	b.SetRuns(tree.Base, runs)
	b.SetRuns(tree.Head, runs)
	i := 0
	for stack, v := range stacks {
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, b.Frames().Intern(name, ""))
		}
		s := b.Stack(ids)
		for r := range runs {
			noise := 1 + 0.005*float64(1-2*((r+i)%2))
			b.AddRun(tree.Base, r, s, int64(float64(v)*noise), uint64(i))
			b.AddRun(tree.Head, r, s, int64(float64(v)*factor(stack)/noise), uint64(i))
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
	v := FromTree(diff(t, program, func(string) float64 { return 1.04 }), Input{MinChange: DefaultMinBaseShare})
	if v.Result != Inconclusive || len(v.Regressions) != 1 || !v.Regressions[0].Root() ||
		!strings.HasPrefix(v.Headline, "Everything grew in proportion") || !strings.Contains(v.Why, "normalize=relative") {
		t.Errorf("uniform change: %s %q %q %+v", v.Result, v.Headline, v.Why, v.Regressions)
	}
	v = FromTree(diff(t, program, func(s string) float64 {
		return map[bool]float64{true: 1.5, false: 1}[s == "main;b;d"]
	}), Input{MinChange: DefaultMinBaseShare, Modified: map[string]bool{"d": true}})
	if v.Result != Fail || len(v.Regressions) != 1 || v.Regressions[0].Function != "d" ||
		v.Headline != v.Regressions[0].Sentence() || !strings.Contains(v.Headline, "called from `b`") ||
		!strings.HasSuffix(v.Headline, "the head build modified it.") {
		t.Errorf("one slower function: %s %q %+v", v.Result, v.Headline, v.Regressions)
	}
	if _, err := json.Marshal(Culprit{Delta: Number(math.NaN()), Share: Number(math.Inf(1))}); err != nil {
		t.Errorf("NaN in JSON: %v", err)
	}
}
