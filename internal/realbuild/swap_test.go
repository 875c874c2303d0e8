package realbuild

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// uuidApp is a Node service that makes a uuid per request, on uuid at a
// release. uuid 9.0.0's v4 calls Node's crypto.randomUUID instead of its
// own rng and stringify helpers, "more than an 11x speedup"
// (github.com/uuidjs/uuid/pull/600); Node's randomUUID fills its random
// buffer once per 128 uuids where uuid's rng did once per 16, so Node's
// randomFillSync, whose code did not change, runs eight times less often.
func uuidApp(release string) map[string]string {
	return map[string]string{
		"package.json": `{"name":"ids","version":"1.0.0","private":true,"dependencies":{"uuid":"` + release + `"}}`,
		"app.js": `const { v4 } = require('uuid');
function work(i) { let h = i; for (let j = 0; j < 300; j++) h = (h * 31 + j) | 0; return h; }
function handle(i) { return v4().length + work(i); }
let acc = 0;
for (let i = 0; i < 600000; i++) acc += handle(i);
console.log(acc);
`,
	}
}

// subtreeSelf counts, with our own reader of a V8 .cpuprofile, the
// samples of the nodes at or below a function named fn, and all samples.
func subtreeSelf(t *testing.T, file, fn string) (under, all int) {
	t.Helper()
	p := readV8Profile(t, file)
	byID, in := map[int]int{}, map[int]bool{}
	for i, n := range p.Nodes {
		byID[n.ID] = i
	}
	var mark func(id int, below bool)
	mark = func(id int, below bool) {
		n := p.Nodes[byID[id]]
		below = below || n.CallFrame.FunctionName == fn
		in[id] = below
		for _, ch := range n.Children {
			mark(ch, below)
		}
	}
	mark(p.Nodes[0].ID, false)
	for _, s := range p.Samples {
		if in[s] {
			under++
		}
	}
	return under, len(p.Samples)
}

// A real npm release that swapped helpers for a Node built-in: uuid 8.3.2
// installed by npm against 9.0.0 installed by pnpm (its node_modules/.pnpm
// store) at another root. The verdict is PASS and its first culprit, the headline,
// is v4 naming the swap ("`v4` now calls `randomUUID` instead of `rng`,
// `stringify`"), with about the flat change of v4's subtree, counted in
// the raw profiles by our own reader; randomFillSync, Node's code called
// less often, is no culprit.
func TestNodeReleaseSwapsHelpersForBuiltin(t *testing.T) {
	dirs := map[string]string{}
	for release, manager := range map[string][]string{
		"8.3.2": {"npm", "install", "--no-audit", "--no-fund", "--loglevel=error"},
		"9.0.0": {"npx", "--yes", "pnpm@9.15.0", "install", "--silent"},
	} {
		dirs[release] = Write(t, uuidApp(release))
		install(t, dirs[release], manager...)
	}
	files := RunInterleaved(t, t.TempDir(), runsPerSide(), dirs, NodeProfile, ".cpuprofile")
	mean := func(release string) (under, all float64) {
		for _, f := range files[release] {
			u, a := subtreeSelf(t, f, "v4")
			under, all = under+float64(u), all+float64(a)
		}
		n := float64(len(files[release]))
		return under / n, all / n
	}
	baseUnder, baseAll := mean("8.3.2")
	headUnder, _ := mean("9.0.0")
	flat := (headUnder - baseUnder) / baseAll

	v := DiffVerdict(t, files["8.3.2"], files["9.0.0"])
	t.Logf("uuid 8.3.2 -> 9.0.0 (v4's subtree, flat: %+.1f%%):\n%s", 100*flat, Describe(v))
	if len(v.Improvements) == 0 {
		t.Fatalf("a release %.0f%% faster has no improvement:\n%s", -100*flat, Describe(v))
	}
	// V8 moves time between the script's own functions as it inlines
	// them (and uuid 9's code into them) differently from run to run: a
	// FAIL is right only when the raw profiles show each regression, a
	// function whose own time grew by what the culprit claims.
	for _, r := range v.Regressions {
		grew := selfGrowth(t, files["8.3.2"], files["9.0.0"], r)
		t.Logf("regression %s %+.2f%%: own time in the raw profiles %+.2f%% of the base total", r.Function, 100*float64(r.Delta), 100*grew)
		if half := (float64(r.DeltaHigh) - float64(r.DeltaLow)) / 2; grew < float64(v.MinBaseShare) || abs(float64(r.Delta)-grew) > half+claimSlack {
			t.Errorf("regression %s %+.2f%% (±%.2f%%), its own time in the raw profiles %+.2f%%:\n%s",
				r.Function, 100*float64(r.Delta), 100*half, 100*grew, Describe(v))
		}
	}
	if v.Result == verdict.Fail && len(v.Regressions) == 0 || v.Result == verdict.Inconclusive {
		t.Fatalf("result %s:\n%s", v.Result, Describe(v))
	}
	top := v.Improvements[0]
	if top.Function != "v4" || top.Kind != "replaced" || !slices.Contains(top.NewCallees, "randomUUID") ||
		!slices.Contains(top.GoneCallees, "rng") || !slices.Contains(top.GoneCallees, "stringify") {
		t.Errorf("first culprit %s %s, calls %v instead of %v; want v4 calling randomUUID instead of rng, stringify:\n%s",
			top.Kind, top.Function, top.NewCallees, top.GoneCallees, Describe(v))
	}
	if v.Result == verdict.Pass && !strings.HasPrefix(v.Headline, "`v4` now calls `randomUUID`") || strings.Contains(v.Headline, "randomFillSync") {
		t.Errorf("headline %q", v.Headline)
	}
	if got := find(v, "randomFillSync"); len(got) > 0 {
		t.Errorf("randomFillSync, called less often, is a culprit:\n%s", Describe(v))
	}
	if half := (float64(top.DeltaHigh) - float64(top.DeltaLow)) / 2; abs(float64(top.Delta)-flat) > half+claimSlack {
		t.Errorf("v4's culprit %+.2f%% (±%.2f%%), the flat change of its subtree %+.2f%%", 100*float64(top.Delta), 100*half, 100*flat)
	}
}

// selfGrowth is, by our own reader of the raw profiles, the change of a
// culprit's function's own time (the nodes of its name in its file) from
// the mean base run to the mean head run, as a share of the mean base
// total. V8 names a script's top level "".
func selfGrowth(t *testing.T, base, head []string, c verdict.Culprit) float64 {
	t.Helper()
	name := strings.TrimSuffix(c.Function, " ("+c.Module+")")
	if name == "(anonymous)" {
		name = ""
	}
	mean := func(files []string) (self, all float64) {
		for _, f := range files {
			p := readV8Profile(t, f)
			its := map[int]bool{}
			for _, n := range p.Nodes {
				its[n.ID] = n.CallFrame.FunctionName == name && c.File != "" && strings.HasSuffix(n.CallFrame.URL, "/"+path.Base(c.File))
			}
			for _, s := range p.Samples {
				if its[s] {
					self++
				}
			}
			all += float64(len(p.Samples))
		}
		return self / float64(len(files)), all / float64(len(files))
	}
	baseSelf, baseAll := mean(base)
	headSelf, _ := mean(head)
	return (headSelf - baseSelf) / baseAll
}
