package frames

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/tree"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// builder makes a Builder from folded lines "side frame;frame value", one run
// per side that has lines.
func builder(lines ...string) *tree.Builder {
	b := tree.NewBuilder(tree.NewFrames())
	runs := map[tree.Side]int{}
	for i, line := range lines {
		var side, stack string
		var value int64
		fmt.Sscan(line, &side, &stack, &value)
		s := map[string]tree.Side{"base": tree.Base, "head": tree.Head}[side]
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, b.Frames().Intern(name, ""))
		}
		b.Add(s, b.Stack(ids), value, uint64(i))
		runs[s] = 1
	}
	b.SetRuns(tree.Base, runs[tree.Base])
	b.SetRuns(tree.Head, runs[tree.Head])
	return b
}

// runsBuilder makes a Builder from lines "side run frame;frame value" with
// per-run values (AddRun), runs runs a side.
func runsBuilder(runs int, lines ...string) *tree.Builder {
	b := tree.NewBuilder(tree.NewFrames())
	b.SetRuns(tree.Base, runs)
	b.SetRuns(tree.Head, runs)
	for i, line := range lines {
		var side, stack string
		var run int
		var value int64
		fmt.Sscan(line, &side, &run, &stack, &value)
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, b.Frames().Intern(name, ""))
		}
		b.AddRun(map[string]tree.Side{"base": tree.Base, "head": tree.Head}[side], run, b.Stack(ids), value, uint64(i))
	}
	return b
}

// runsInput has 3 runs a side: parse grows for real, sort is noise and
// compile is new.
var runsInput = []string{
	"base 0 main;parse 40", "base 1 main;parse 41", "base 2 main;parse 39",
	"base 0 main;sort 30", "base 1 main;sort 20", "base 2 main;sort 25",
	"head 0 main;parse 60", "head 1 main;parse 61", "head 2 main;parse 59",
	"head 0 main;sort 22", "head 1 main;sort 31", "head 2 main;sort 24",
	"head 1 main;compile 9",
}

func build(t *testing.T, b *tree.Builder, o tree.Options) *tree.Tree {
	t.Helper()
	tr, err := b.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var diffInput = []string{
	"base main;parse 40", "base main;parse;alloc 10", "base main;sort 30",
	"head main;parse 40", "head main;parse;alloc 25", "head main;checksum 15", "head main;compile 20",
}

func golden(t *testing.T, name string, frame *data.Frame) {
	t.Helper()
	got, err := json.MarshalIndent(frame, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, path, got)
	}
}

func TestGolden(t *testing.T) {
	single := builder("head main;parse 40", "head main;parse;alloc 10", "head main;sort 30", "head main;parse 5")
	diff := builder(diffInput...)
	tests := []struct {
		name  string
		frame *data.Frame
	}{
		{"flamegraph", FlameGraph(build(t, single, tree.Options{}), "nanoseconds")},
		{"flamegraph-inverted", FlameGraph(build(t, single, tree.Options{Inverted: true}), "bytes")},
		{"diff", FlameGraph(build(t, diff, tree.Options{}), "nanoseconds")},
		{"diff-stats", FlameGraph(build(t, runsBuilder(3, runsInput...), tree.Options{MaxNodes: 4}), "nanoseconds")},
		{"diff-stats-relative", FlameGraph(build(t, runsBuilder(3, runsInput...), tree.Options{Normalize: tree.Relative, Alpha: 0.1}), "nanoseconds")},
		{"functions", Functions(single.Functions(tree.Options{}), false, "count")},
		{"functions-diff", Functions(diff.Functions(tree.Options{}), true, "nanoseconds")},
		{"functions-diff-stats", Functions(runsBuilder(3, runsInput...).Functions(tree.Options{}), true, "nanoseconds")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { golden(t, tt.name, tt.frame) })
	}
}

// The frame holds exactly the tree: labels through the enum, base on the
// left and head on the right, as Grafana's flame graph reads them.
func TestFlameGraphMatchesTree(t *testing.T) {
	tr := build(t, builder(diffInput...), tree.Options{})
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	f := FlameGraph(tr, "nanoseconds")
	if f.Meta.PreferredVisualization != data.VisTypeFlameGraph {
		t.Errorf("preferred visualisation %q", f.Meta.PreferredVisualization)
	}
	label, _ := f.FieldByName("label")
	texts := label.Config.TypeConfig.Enum.Text
	value, _ := f.FieldByName("value")
	right, _ := f.FieldByName("valueRight")
	delta, _ := f.FieldByName("delta")
	if f.Rows() != tr.Len() {
		t.Fatalf("%d rows for %d nodes", f.Rows(), tr.Len())
	}
	for i, n := range tr.Nodes {
		if got := texts[label.At(i).(data.EnumItemIndex)]; got != tr.Label(i) {
			t.Errorf("row %d: label %q, want %q", i, got, tr.Label(i))
		}
		if value.At(i).(float64) != n.BaseTotal || right.At(i).(float64) != n.HeadTotal || delta.At(i).(float64) != tr.Delta(i) {
			t.Errorf("row %d: value %v, valueRight %v, delta %v; node %+v", i, value.At(i), right.At(i), delta.At(i), n)
		}
		if value.Config.Unit != "ns" {
			t.Errorf("unit %q", value.Config.Unit)
		}
	}
}

// The stat fields hold the tree's statistics, null where undefined; a diff
// without statistics says why in a notice instead.
func TestFlameGraphStats(t *testing.T) {
	tr := build(t, runsBuilder(3, runsInput...), tree.Options{})
	f := FlameGraph(tr, "nanoseconds")
	if f.Meta.Notices != nil {
		t.Errorf("notices %v with statistics", f.Meta.Notices)
	}
	q, _ := f.FieldByName("qValue")
	sig, _ := f.FieldByName("significant")
	head, _ := f.FieldByName("headRuns")
	for i, s := range tr.Stats {
		if got := q.At(i).(*float64); got == nil || *got != s.QValue {
			t.Errorf("row %d: qValue %v, want %v", i, got, s.QValue)
		}
		if got := sig.At(i).(*bool); got == nil || *got != s.Significant {
			t.Errorf("row %d: significant %v, want %v", i, got, s.Significant)
		}
		var runs []float64
		if err := json.Unmarshal([]byte(head.At(i).(string)), &runs); err != nil || !slices.Equal(runs, s.HeadRuns) {
			t.Errorf("row %d: headRuns %s (%v), want %v", i, head.At(i), err, s.HeadRuns)
		}
	}
	if custom := f.Meta.Custom.(map[string]any); custom["stats"] != true || custom["headRuns"] != 3 || custom["normalize"] != "absolute" {
		t.Errorf("custom meta %v", custom)
	}

	plain := FlameGraph(build(t, builder(diffInput...), tree.Options{}), "nanoseconds")
	if _, i := plain.FieldByName("pValue"); i >= 0 {
		t.Error("pValue field without statistics")
	}
	if n := plain.Meta.Notices; len(n) != 1 || !strings.Contains(n[0].Text, "at least 2 runs") || n[0].Severity != data.NoticeSeverityInfo {
		t.Errorf("notices %+v, want the runs needed", n)
	}
}

// Above 65,536 distinct labels the enum cannot index them all.
func TestManyLabelsFallBackToStrings(t *testing.T) {
	b := tree.NewBuilder(tree.NewFrames())
	for i := range 70_000 {
		b.Add(tree.Head, b.Stack([]uint32{b.Frames().Intern(fmt.Sprint("f", i), "")}), 1, 0)
	}
	b.SetRuns(tree.Head, 1)
	tr := build(t, b, tree.Options{})
	label, _ := FlameGraph(tr, "count").FieldByName("label")
	if label.Type() != data.FieldTypeString {
		t.Fatalf("label type %v, want string", label.Type())
	}
	if got := label.At(70_000).(string); got != tr.Label(70_000) {
		t.Errorf("last label %q, want %q", got, tr.Label(70_000))
	}
}

func TestGrafanaUnit(t *testing.T) {
	for unit, want := range map[string]string{"nanoseconds": "ns", "bytes": "bytes", "count": "short", "": "short", "objects": "short"} {
		if got := GrafanaUnit(unit); got != want {
			t.Errorf("GrafanaUnit(%q) = %q, want %q", unit, got, want)
		}
	}
}
