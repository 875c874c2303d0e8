package frames

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// The culprits of runsInput (3 runs a side: parse grows for real) and the
// verdict in its meta; a function's source and head's change of it reach
// the frame.
func TestCulpritsGolden(t *testing.T) {
	b := runsBuilder(3, runsInput...)
	b.Frames().SetSource(b.Frames().Intern("parse", ""), "/src/parse.go", 12)
	modified := map[string]bool{"parse": true}
	tr := build(t, b, tree.Options{})
	v := verdict.FromTree(tr, verdict.Input{MinBaseShare: verdict.DefaultMinBaseShare, Modified: modified})
	cs := verdict.Culprits(tr, modified)
	if len(cs) == 0 || cs[0].Function != "parse" || !cs[0].Modified || cs[0].File != "/src/parse.go" || v.Result != verdict.Fail {
		t.Fatalf("culprits %+v, verdict %s", cs, v.Result)
	}
	golden(t, "culprits", Culprits(cs, v, "normal"))
	f := Functions(b.Functions(tree.Options{}), true, "nanoseconds")
	AddSources(f, func(name string) (tree.Source, bool) {
		return b.Frames().Source(b.Frames().Intern(name, "")), modified[name]
	})
	golden(t, "functions-diff-sources", f)
}

// The panel reads a culprits frame through one table, culpritsContract in
// src/panel/model/culprits.ts: the same fields in the same order as the
// frame Go writes, each allowing the type the frame carries on the wire
// (the SDK's JSON schema, which Grafana and the report decode).
func TestCulpritsContract(t *testing.T) {
	b, err := json.Marshal(Culprits(nil, &verdict.Verdict{}, ""))
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

	src, err := os.ReadFile(filepath.Join("..", "..", "src", "panel", "model", "culprits.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`export const culpritsFrameName = '(\w+)'`).FindSubmatch(src); m == nil || string(m[1]) != wire.Schema.Name {
		t.Errorf("culprits.ts: culpritsFrameName is not %q", wire.Schema.Name)
	}
	body := regexp.MustCompile(`(?s)export const culpritsContract = \{\n(.*?)\n\} as const satisfies Contract;`).FindSubmatch(src)
	if body == nil {
		t.Fatal("culprits.ts: no culpritsContract table")
	}
	var names []string
	allowed := map[string][]string{}
	for _, line := range strings.Split(string(body[1]), "\n") {
		m := regexp.MustCompile(`^  (\w+): \[(.*)\],$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("culprits.ts: culpritsContract's line %q is not name: ['type', ...],", line)
		}
		names = append(names, m[1])
		for _, ty := range regexp.MustCompile(`'(\w+)'`).FindAllStringSubmatch(m[2], -1) {
			allowed[m[1]] = append(allowed[m[1]], ty[1])
		}
	}
	var goNames []string
	for _, f := range wire.Schema.Fields {
		goNames = append(goNames, f.Name)
		if _, ok := allowed[f.Name]; ok && !slices.Contains(allowed[f.Name], f.Type) {
			t.Errorf("%s: Go writes %s, culpritsContract allows %v", f.Name, f.Type, allowed[f.Name])
		}
	}
	if !slices.Equal(names, goNames) {
		t.Errorf("culpritsContract has %v,\nGo's culprits frame %v", names, goNames)
	}
}

// Field names come from names.go: no frame builder spells one (the file
// promises each name once).
func TestFieldNamesAreConstants(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`NewField\("`)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if literal.MatchString(line) {
				t.Errorf("%s:%d: a field name spelt out: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}
