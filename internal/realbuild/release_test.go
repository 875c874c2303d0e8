package realbuild

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// The release: github.com/mattn/go-runewidth v0.0.22 to v0.0.23 (8 April
// 2026) is mattn/go-runewidth#95, "Optimize RuneWidth and StringWidth
// performance" (https://github.com/mattn/go-runewidth/pull/95): RuneWidth
// searches merged tables (zero-width and wide) instead of several, the
// variadic inTables is gone, and StringWidth has "a fast path for pure
// ASCII strings that bypasses the grapheme segmenter entirely";
// RuneWidthAll/regular -34.49% in its benchmarks.
const (
	runewidth = "github.com/mattn/go-runewidth"
	before    = "v0.0.22"
	after     = "v0.0.23"
)

// tabulate is an app of ours that measures table cells with the library at
// version: the widths of a range of runes, of ASCII cells, and padding of
// its own that no release changes.
func tabulate(version string) map[string]string {
	return map[string]string{
		"go.mod":  "module example.com/tabulate\n\ngo 1.24\n\nrequire " + runewidth + " " + version + "\n",
		"main.go": Main(nil, "layout(400)"),
		"layout.go": `package main

import "` + runewidth + `"

var cells = []string{"id", "name", "quantity", "unit price", "total", "Grafana", "ClickHouse 18.16", "flame graph", "42", "3.14159"}

func layout(rounds int) int {
	w := 0
	for i := 0; i < rounds; i++ {
		for r := rune(0); r < 0x30000; r += 7 {
			w += runewidth.RuneWidth(r)
		}
		for j := 0; j < 200; j++ {
			for _, c := range cells {
				w += runewidth.StringWidth(c)
			}
		}
		w += pad(cells)
	}
	return w
}

//go:noinline
func pad(cells []string) int {
	h := 0
	for k := 0; k < 1500; k++ {
		for _, c := range cells {
			for i := 0; i < len(c); i++ {
				h = h*31 + int(c[i])
			}
		}
	}
	return h
}
`,
	}
}

// (e) Two releases of a library from the Go module proxy, built under
// their own names: the first culprit lies in the functions the release
// changed (found by comparing the two versions' sources in the module
// cache), and the faster release does not FAIL.
func TestLibraryRelease(t *testing.T) {
	root := t.TempDir()
	bins := map[string]string{}
	sources := map[string]map[string]string{}
	for _, version := range []string{before, after} {
		dir := Write(t, tabulate(version))
		bins[version] = filepath.Join(root, "tabulate-"+version, "tabulate-"+version)
		Build(t, dir, bins[version], "-trimpath")
		funcs, err := Functions(ModuleDir(t, dir, runewidth), runewidth)
		if err != nil {
			t.Fatal(err)
		}
		sources[version] = funcs
	}
	changed := Changed(sources[before], sources[after])
	for _, fn := range []string{"(*Condition).RuneWidth", "(*Condition).StringWidth", "inTables"} {
		if !changed[runewidth+"."+fn] {
			t.Fatalf("the sources of %s and %s do not differ in %s (changed: %v)", before, after, fn, slices.Sorted(maps.Keys(changed)))
		}
	}
	files := RunInterleaved(t, t.TempDir(), runsPerSide(), bins, GoProfile, ".pb.gz")
	base, head := files[before], files[after]
	flat := FlatDiff(t, base, head)
	var total int64
	for _, c := range flat.Change {
		total += c
	}
	if share := float64(total) / float64(flat.BaseTotal); share > -0.1 {
		t.Fatalf("pprof measures %s %+.1f%% against %s; the release is documented as faster", after, 100*share, before)
	}
	v := DiffVerdict(t, base, head)
	t.Logf("%s against %s:\n%s", after, before, Describe(v))
	cs := Culprits(v)
	if len(cs) == 0 {
		t.Fatalf("no culprit for a release that is faster:\n%s", Describe(v))
	}
	first := slices.MaxFunc(cs, func(a, b verdict.Culprit) int { return cmpAbs(float64(a.Delta), float64(b.Delta)) })
	if !In(changed, first.Function) {
		t.Errorf("the first culprit, %s %s, is not a function the release changed: %v\n%s", first.Kind, first.Function,
			slices.Sorted(maps.Keys(changed)), Describe(v))
	}
	if v.Result == verdict.Fail {
		t.Errorf("a faster release fails:\n%s", Describe(v))
	}
	checkClaims(t, v, flat)
}

func cmpAbs(a, b float64) int {
	switch {
	case abs(a) < abs(b):
		return -1
	case abs(a) > abs(b):
		return 1
	}
	return 0
}
