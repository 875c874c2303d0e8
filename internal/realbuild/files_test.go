package realbuild

import (
	"fmt"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// work is a function of the app's work package by its pprof name.
func work(name string) string { return workPkg + "." + name }

// (a) One binary, copied to two CI jobs' directories as app-base and
// app-head: the same tree on both sides (every stack of head meets its
// stack in base), no culprit and no FAIL. A/A comparisons may show a false
// culprit at rate alpha (docs/CULPRITS.md): the test asks at alpha 0.01.
func TestSameBinaryTwoPaths(t *testing.T) {
	f := app(t)
	base, head := f.files["aa-base"], f.files["aa-head"]
	folded, _ := Flamediff(t, DiffArgs(base, head, "--output", "folded")...)
	if share := oneSided(t, folded); share > 0.02 {
		t.Errorf("%.1f%% of the samples are in stacks of one side only; the same binary has the same stacks:\n%s", 100*share, alone(folded))
	}
	for _, normalize := range []string{"absolute", "relative"} {
		v := DiffVerdict(t, base, head, "--alpha", "0.01", "--normalize", normalize)
		if v.Result == verdict.Fail || len(Culprits(v)) > 0 {
			t.Errorf("the same binary under two paths and names, %s:\n%s", normalize, Describe(v))
		}
	}
}

// (b) A refactor with the same work: parse's validation split out into
// validate, a wrapper runRounds around Run's loop, and fold no longer
// inlined (-gcflags=<work>=-l). No culprit claims more than pprof's flat
// change of its subtree, and the verdict is not FAIL.
func TestRefactorSameWork(t *testing.T) {
	f := app(t)
	base, head := f.files["aa-base"], f.files["refactor"]
	flat := FlatDiff(t, base, head)
	// The test's own premise: the refactor moved a quarter of the work
	// (validate) and all of it (runRounds) without changing its cost.
	if moved := flat.Share(work("validate")); moved < 0.15 {
		t.Fatalf("validate holds %+.1f%% of the base total in head; the refactor should move about 25%%", 100*moved)
	}
	// The gate's threshold is 5% of the base total, a fifth of the moved
	// work: de-inlining fold and the new wrapper change the code's layout,
	// which costs a few percent for real (runRounds' group once measured
	// +2.69%, CI +0.62% .. +4.76%, and -1% to +1.5% in other runs), so at
	// the default 1% the test would ask the machine, not the verdict.
	v := DiffVerdict(t, base, head, "--min-base-share", "0.05")
	t.Logf("refactor, same work:\n%s", Describe(v))
	if v.Result == verdict.Fail {
		t.Errorf("a refactor with the same work fails:\n%s", Describe(v))
	}
	checkClaims(t, v, flat)
}

// (c) The same refactor with a real slowdown in the split-out code
// (validate does 4 units instead of 2: +25% of the base total): the first
// regression is validate's own cost, as pprof's flat profile measures it
// (the net of parse and validate), and the move is reported beside it.
func TestRefactorWithSlowdown(t *testing.T) {
	f := app(t)
	base, head := f.files["aa-base"], f.files["slower"]
	flat := FlatDiff(t, base, head)
	slowdown := flat.Share(work("parse"), work("validate"))
	v := DiffVerdict(t, base, head)
	t.Logf("refactor and slowdown (pprof: parse and validate %+.1f%%):\n%s", 100*slowdown, Describe(v))
	if v.Result != verdict.Fail || len(v.Regressions) == 0 {
		t.Fatalf("a +25%% slowdown does not fail:\n%s", Describe(v))
	}
	top := v.Regressions[0]
	half := (float64(top.DeltaHigh) - float64(top.DeltaLow)) / 2
	if top.Function != work("validate") || abs(float64(top.Delta)-slowdown) > half+claimSlack {
		t.Errorf("first regression %s %+.2f%% (±%.2f%%); want %s at pprof's %+.2f%%:\n%s", top.Function,
			100*float64(top.Delta), 100*half, work("validate"), 100*slowdown, Describe(v))
	}
	if moveInto(v, work("validate")) == nil {
		t.Errorf("the verdict does not report the work that moved into validate:\n%s", Describe(v))
	}
	checkClaims(t, v, flat)
}

// (d) render's callee replaced by a cheaper one (1 unit instead of 2) and
// by a dearer one (4 units): one culprit at render each, with the sign of
// the net change, and the verdict of that sign.
func TestReplacedCallee(t *testing.T) {
	f := app(t)
	for _, tt := range []struct {
		name, encoder string
		result        string
	}{
		{"cheaper", "encodeFast", verdict.Pass},
		{"dearer", "encodeSlow", verdict.Fail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, head := f.files["aa-base"], f.files[tt.name]
			flat := FlatDiff(t, base, head)
			net := flat.Share(work("render"), work("encodeStd"), work(tt.encoder))
			v := DiffVerdict(t, base, head)
			t.Logf("%s (pprof: render's net %+.1f%%):\n%s", tt.encoder, 100*net, Describe(v))
			got := find(v, work("render"), work("encodeStd"), work(tt.encoder))
			if len(got) != 1 || got[0].Function != work("render") || (float64(got[0].Delta) < 0) != (net < 0) {
				t.Errorf("want one culprit, at render, of sign %s:\n%s", sign(net), Describe(v))
			} else if half := (float64(got[0].DeltaHigh) - float64(got[0].DeltaLow)) / 2; abs(float64(got[0].Delta)-net) > half+claimSlack {
				t.Errorf("render's culprit %+.2f%% (±%.2f%%), pprof's net %+.2f%%", 100*float64(got[0].Delta), 100*half, 100*net)
			}
			if v.Result != tt.result {
				t.Errorf("verdict %s, want %s:\n%s", v.Result, tt.result, Describe(v))
			}
			checkClaims(t, v, flat)
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x float64) string { return fmt.Sprintf("%+.0f", x/abs(x)) }
