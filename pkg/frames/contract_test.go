package frames

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// fieldRule is a field of the panel's contract of a frame: the types it
// may have on the wire, and whether every frame of the name has it.
type fieldRule struct {
	types    []string
	required bool
}

// panelContracts reads frameContracts from src/panel/model/contract.ts:
// per frame name, its fields in the table's order.
func panelContracts(t *testing.T) (map[string]map[string]fieldRule, map[string][]string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "src", "panel", "model", "contract.ts"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "\nexport const frameContracts = {\n")
	if table, _, ok = strings.Cut(table, "\n} as const satisfies Record<string, FrameContract>;"); !ok {
		t.Fatal("contract.ts: no frameContracts table")
	}
	frameLine, partLine := regexp.MustCompile(`^  (\w+): \{$`), regexp.MustCompile(`^    (required|optional): \{\},?$|^    (required|optional): \{$`)
	fieldLine, typeName := regexp.MustCompile(`^      (\w+): \[(.*)\],$`), regexp.MustCompile(`'(\w+)'`)
	rules, order := map[string]map[string]fieldRule{}, map[string][]string{}
	var frame string
	var required bool
	for _, line := range strings.Split(table, "\n") {
		switch {
		case frameLine.MatchString(line):
			frame = frameLine.FindStringSubmatch(line)[1]
			rules[frame] = map[string]fieldRule{}
		case partLine.MatchString(line):
			required = strings.Contains(line, "required")
		case fieldLine.MatchString(line):
			m := fieldLine.FindStringSubmatch(line)
			var types []string
			for _, ty := range typeName.FindAllStringSubmatch(m[2], -1) {
				types = append(types, ty[1])
			}
			rules[frame][m[1]] = fieldRule{types, required}
			order[frame] = append(order[frame], m[1])
		case strings.TrimSpace(line) == "}," || strings.TrimSpace(line) == "":
		default:
			t.Fatalf("contract.ts: frameContracts' line %q is not frame: {, required: {, optional: { or name: ['type', ...],", line)
		}
	}
	return rules, order
}

// goFrames are the frames Go writes, each name in the variants it has:
// single and diff trees with statistics, functions with sources, runs of
// both sides, an evolution with a change point.
func goFrames(t *testing.T) data.Frames {
	single := builder("head main;parse 40", "head main;parse;alloc 10")
	stats := runsBuilder(3, runsInput...)
	fs := data.Frames{
		FlameGraph(build(t, single, tree.Options{}), "nanoseconds"),
		FlameGraph(build(t, builder(diffInput...), tree.Options{}), "nanoseconds"),
		FlameGraph(build(t, stats, tree.Options{}), "nanoseconds"),
		Functions(single.Functions(tree.Options{}), false, "count"),
		Functions(stats.Functions(tree.Options{}), true, "nanoseconds"),
	}
	withSources := Functions(stats.Functions(tree.Options{}), true, "nanoseconds")
	AddSources(withSources, func(string) (tree.Source, bool) { return tree.Source{File: "/src/parse.go", Line: 12}, true })
	tr := build(t, stats, tree.Options{})
	v := verdict.FromTree(tr, verdict.Input{MinBaseShare: verdict.DefaultMinBaseShare})
	fs = append(fs, withSources, Culprits(verdict.Culprits(tr, nil), v, ""), Culprits(nil, &verdict.Verdict{}, ""))
	fs = append(fs, Runs(runsOf("head", 1, 2), runsOf("base", 1, 2), "nanoseconds")...)
	fs = append(fs, Runs(runsOf("head", 1, 2), nil, "nanoseconds")...)
	fs = append(fs, Evolution(evolution.Result{}, "ns")...)
	fs = append(fs, ChangePoints(nil, "ns", nil))
	return fs
}

// The panel reads every frame through one table, frameContracts in
// src/panel/model/contract.ts, held here to the frames Go writes (the
// SDK's JSON schema, which Grafana and the report decode): every field Go
// writes is in the table with its wire type, every required field is in
// every variant of its frame, every optional one in some.
func TestFrameContracts(t *testing.T) {
	rules, order := panelContracts(t)
	written := map[string]map[string]int{} // frame -> field -> variants that have it
	variants := map[string]int{}
	for _, f := range goFrames(t) {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var wire struct {
			Schema struct {
				Name   string
				Fields []struct{ Name, Type string }
			}
		}
		if err := json.Unmarshal(b, &wire); err != nil {
			t.Fatal(err)
		}
		name := wire.Schema.Name
		contract, ok := rules[name]
		if !ok {
			t.Errorf("frameContracts has no %q frame", name)
			continue
		}
		variants[name]++
		if written[name] == nil {
			written[name] = map[string]int{}
		}
		for _, fl := range wire.Schema.Fields {
			written[name][fl.Name]++
			r, ok := contract[fl.Name]
			switch {
			case !ok:
				t.Errorf("%s: Go writes %s, which frameContracts.%s lacks", name, fl.Name, name)
			case !slices.Contains(r.types, fl.Type):
				t.Errorf("%s: Go writes %s as %s, frameContracts allows %v", name, fl.Name, fl.Type, r.types)
			}
		}
	}
	for name, fields := range order {
		if variants[name] == 0 {
			t.Errorf("frameContracts has %s, a frame Go does not write", name)
			continue
		}
		for _, field := range fields {
			switch n := written[name][field]; {
			case rules[name][field].required && n < variants[name]:
				t.Errorf("%s: %s is required in frameContracts, but %d of %d frames Go writes lack it", name, field, variants[name]-n, variants[name])
			case n == 0:
				t.Errorf("%s: frameContracts has %s, which Go never writes", name, field)
			}
		}
	}
}
