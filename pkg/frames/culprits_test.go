package frames

import (
	"os"
	"path/filepath"
	"regexp"
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
