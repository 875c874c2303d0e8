package verdict

import (
	"strings"
	"testing"
)

// render now calls encodeFast instead of marshal and escape, which called
// scan four times as often: the headline is render's swap, with its net,
// and scan (its code unchanged) is no culprit.
func TestVerdictSwapHeadline(t *testing.T) {
	base := map[string]int64{"main;render": 2000, "main;render;marshal": 6000, "main;render;marshal;scan": 12000,
		"main;render;escape": 3000, "main;render;escape;scan": 12000, "main;other": 65000}
	head := map[string]int64{"main;render": 2000, "main;render;encodeFast": 3000, "main;render;encodeFast;scan": 6000, "main;other": 65000}
	v := FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare})
	want := "`render` now calls `encodeFast` instead of `marshal`, `escape`: net -24.00% of the base total"
	if v.Result != Pass || len(v.Improvements) != 1 || v.Improvements[0].Function != "render" || !strings.HasPrefix(v.Headline, want) {
		t.Errorf("swap: %s %q, want %q: %+v", v.Result, v.Headline, want, v.Improvements)
	}
}

// A culprit another explains is never the first: a function's own time in
// the moved work under a caller that swapped its callees, in the swap's
// direction; a function the head build did not modify, below one it did.
func TestPreferExplaining(t *testing.T) {
	swap := Culprit{Function: "v4", Kind: "replaced", Path: []string{"main", "handle", "v4"}, Delta: -0.1}
	called := Culprit{Function: "randomFillSync", Kind: "self", Moved: true, Path: []string{"main", "handle", "v4", "randomUUID", "randomFillSync"}, Delta: -0.2}
	elsewhere := Culprit{Function: "parse", Kind: "self", Path: []string{"main", "parse"}, Delta: -0.05}
	v := &Verdict{Improvements: prefer([]Culprit{called, swap, elsewhere})}
	if got := v.top(); got == nil || got.Function != "v4" || v.Improvements[0].Function != "v4" || v.Improvements[2].Function != "randomFillSync" {
		t.Errorf("swap: top %+v, order %+v", got, v.Improvements)
	}
	// Against the swap's direction, its own time is its own change.
	called.Delta, called.Regression = 0.2, true
	v = &Verdict{Regressions: prefer([]Culprit{called}), Improvements: prefer([]Culprit{swap, elsewhere})}
	if got := v.top(); got == nil || got.Function != "randomFillSync" {
		t.Errorf("against the swap: top %+v", got)
	}

	touched := Culprit{Function: "h", Kind: "self", Path: []string{"main", "h"}, Delta: 0.02, Regression: true, Modified: true}
	below := Culprit{Function: "lib", Kind: "self", Path: []string{"main", "h", "lib"}, Delta: 0.05, Regression: true}
	v = &Verdict{Regressions: prefer([]Culprit{below, touched})}
	if got := v.top(); got == nil || got.Function != "h" || v.Regressions[0].Function != "h" {
		t.Errorf("modified: top %+v, order %+v", got, v.Regressions)
	}
	touched.Modified = false
	v = &Verdict{Regressions: prefer([]Culprit{below, touched})}
	if got := v.top(); got == nil || got.Function != "lib" {
		t.Errorf("nothing modified: top %+v", got)
	}
}

// On a built tree: h's own time grew (the build modified h) and so did
// lib's below it, more: h comes first, and heads the verdict.
func TestVerdictPrefersModified(t *testing.T) {
	base := map[string]int64{"main;h": 10000, "main;h;lib": 20000, "main;other": 70000}
	head := map[string]int64{"main;h": 12000, "main;h;lib": 26000, "main;other": 70000}
	for _, modified := range []map[string]bool{nil, {"h": true}} {
		v := FromTree(diffOf(t, base, head), Input{MinBaseShare: DefaultMinBaseShare, Modified: modified})
		want := map[bool]string{true: "h", false: "lib"}[modified["h"]]
		if len(v.Regressions) != 2 || v.Regressions[0].Function != want || !strings.HasPrefix(v.Headline, "`"+want+"`'s own time grew") {
			t.Errorf("modified %v: %q %+v", modified, v.Headline, v.Regressions)
		}
	}
}
