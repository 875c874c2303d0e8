package plugin_test

import (
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/pproftop"
)

// TestAroundTheCulprit: the options around a culprit over go-plugin. Each
// filter's functions answer equals pprof's -top under the same flag; both
// sandwich trees hold the function's total of the functions answer;
// bad input is a 400 that says what is wrong, and a filter that leaves
// nothing an empty answer that says why. (TestDiffEqualsCLI checks these
// answers against the CLI on the files.)
func TestAroundTheCulprit(t *testing.T) {
	f := loadPprof(t)
	model := func(typ string, kv ...any) map[string]any {
		m := map[string]any{"queryType": typ, "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	runs := float64(len(f.head))
	for _, c := range []struct {
		field, re, flag string
	}{
		{"keep", `^encoding/json\.`, "-focus"},
		{"drop", `^runtime\.mallocgc$`, "-ignore"},
		{"hideFrames", `^runtime\.`, "-hide"},
		{"showFrom", `^regexp\.`, "-show_from"},
	} {
		t.Run(c.field, func(t *testing.T) {
			want, err := pproftop.Top(f.head, f.base, c.flag+"="+c.re)
			if err != nil {
				t.Fatal(err)
			}
			fr := f.oneFrame(t, model("functions", c.field, c.re))
			if len(want) < 5 {
				t.Fatalf("pprof listed only %d functions", len(want))
			}
			samePprof(t, pprofEntries(t, fr, runs), want)
		})
	}

	const fn = "encoding/json.(*decodeState).object" // recursive
	functions := f.oneFrame(t, model("functions"))
	names, _ := functions.FieldByName("function")
	totalHead, _ := functions.FieldByName("totalHead")
	totalBase, _ := functions.FieldByName("totalBase")
	row := -1
	for i := range names.Len() {
		if names.At(i) == fn {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("%s is not in the functions answer", fn)
	}
	sandwich := f.mustQuery(t, model("diff", "sandwich", fn))
	if len(sandwich) != 2 {
		t.Fatalf("a sandwich answers %d frames, want 2", len(sandwich))
	}
	for i, part := range []string{"callers", "callees"} {
		fr := sandwich[i]
		if c := fr.Meta.Custom.(map[string]any); c["sandwich"] != part || c["function"] != fn {
			t.Errorf("frame %d: custom %v, want the %s of %s", i, c, part, fn)
		}
		value, _ := fr.FieldByName("value")
		valueRight, _ := fr.FieldByName("valueRight")
		if labelAt(fr, 1) != fn || valueRight.At(1) != totalHead.At(row) || value.At(1) != totalBase.At(row) {
			t.Errorf("%s: node %s %v/%v, functions row %v/%v", part, labelAt(fr, 1), valueRight.At(1), value.At(1), totalHead.At(row), totalBase.At(row))
		}
		if q, _ := fr.FieldByName("qValue"); q == nil || fr.Rows() < 10 {
			t.Errorf("%s: %d nodes, statistics %v", part, fr.Rows(), q != nil)
		}
	}

	// Only new: no base value below the root.
	fr := f.oneFrame(t, model("diff", "only", "new"))
	value, _ := fr.FieldByName("value")
	for i := 1; i < value.Len(); i++ {
		if value.At(i).(float64) != 0 {
			t.Errorf("only new: node %s has base value %v", labelAt(fr, i), value.At(i))
		}
	}
	if fr.Rows() < 10 {
		t.Errorf("only new: %d nodes", fr.Rows())
	}

	for _, c := range []struct {
		model map[string]any
		says  []string
	}{
		{model("diff", "keep", "(a"), []string{"keep: ", "missing closing )"}},
		{model("functions", "showFrom", "[z-a]"), []string{"showFrom: ", "invalid character class range"}},
		{model("diff", "hideFrames", strings.Repeat("x", 1025)), []string{"hideFrames: ", "more than 1024"}},
		{model("diff", "sandwich", "main.nope"), []string{"sandwich", `"main.nope"`}},
		{model("diff", "only", "old"), []string{"only must be new or removed"}},
		{model("functions", "sandwich", fn), []string{"sandwich is not an option of functions queries"}},
	} {
		r := f.query(t, c.model)
		for _, s := range c.says {
			if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), s) {
				t.Errorf("%v: %v (status %d), want a 400 saying %q", c.model, r.Error, r.Status, s)
			}
		}
	}

	// A filter that leaves nothing: an empty answer that says why.
	for _, m := range []map[string]any{model("diff", "keep", "^no such frame$", "variants", true), model("functions", "keep", "^no such frame$"),
		model("diff", "keep", "^no such frame$", "sandwich", fn)} {
		for _, fr := range f.mustQuery(t, m) {
			if !saysWhy(fr, `keep "^no such frame$" matches no frame`) || fr.Rows() > 1 {
				t.Errorf("%v: %d rows, notices %v", m, fr.Rows(), fr.Meta)
			}
		}
	}
}

func saysWhy(fr *data.Frame, why string) bool {
	if fr.Meta == nil {
		return false
	}
	for _, n := range fr.Meta.Notices {
		if strings.Contains(n.Text, why) && n.Severity == data.NoticeSeverityWarning {
			return true
		}
	}
	return false
}
