package query

import (
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

func TestParseAround(t *testing.T) {
	const diff = `"queryType":"diff","app":"a","head":{"builds":["2"]},"base":{"builds":["1"]}`
	m, err := Parse([]byte(`{` + diff + `,"sandwich":"main.f","keep":"^main\\.","drop":"gc","hideFrames":"^runtime\\.","showFrom":"main","only":"new"}`))
	if err != nil {
		t.Fatal(err)
	}
	o := TreeOptions(tree.NewBuilder(tree.NewFrames()), m, nil)
	if o.Filter == nil || o.Filter.Spec() != (tree.FilterSpec{Keep: `^main\.`, Drop: "gc", Hide: `^runtime\.`, ShowFrom: "main"}) || o.Only != tree.OnlyNew {
		t.Errorf("engine options %+v", o)
	}
	if m.trees() != 2 {
		t.Errorf("a sandwich answers %d trees", m.trees())
	}
	// Grafana's own hide (a hidden query) is no filter.
	if m, err := Parse([]byte(`{` + diff + `,"hide":false}`)); err != nil || m.Hide != "" {
		t.Errorf("a query Grafana sends with hide false: %v, %+v", err, m)
	}
	for _, c := range []struct{ json, says string }{
		{diff + `,"keep":"(a"`, "keep: missing closing )"},
		{diff + `,"drop":"a**"`, "drop: invalid nested repetition operator"},
		{diff + `,"hideFrames":"` + strings.Repeat("a", tree.MaxFilterBytes+1) + `"`, "hideFrames: regular expression of 1025 bytes"},
		{diff + `,"showFrom":"\\8"`, "showFrom: invalid escape sequence"},
		{diff + `,"only":"gone"`, `only must be new or removed, not "gone"`},
		{`"queryType":"flamegraph","app":"a","head":{"builds":["2"]},"only":"new"`, "only is not an option of flamegraph queries"},
		{`"queryType":"functions","app":"a","head":{"builds":["2"]},"only":"new"`, "only needs a comparison"},
		{`"queryType":"functions","app":"a","head":{"builds":["2"]},"sandwich":"f"`, "sandwich is not an option of functions queries"},
		{diff + `,"sandwich":"` + strings.Repeat("f", maxNameBytes+1) + `"`, "sandwich: name longer than"},
	} {
		if _, err := Parse([]byte(`{` + c.json + `}`)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%.80s: %v, want %q", c.json, err, c.says)
		}
	}
}
