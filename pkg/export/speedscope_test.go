package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/tree"
)

// speedscopeFileSchema is the file format's JSON schema as the npm package
// speedscope ships it.
func speedscopeFileSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "node_modules", "speedscope", "dist", "release", "file-format-schema.json"))
	if err != nil {
		t.Fatalf("speedscope's schema (npm install): %v", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The speedscope files the export writes, of a run and of a diff query's
// tree, are valid by speedscope's own schema, and the speedscope row reads
// them back with the run's total.
func TestSpeedscopeMatchesSchema(t *testing.T) {
	schema := speedscopeFileSchema(t)
	p := parse(t, testkit.PprofRuns(t, "head")[0])
	diff, err := testBuilder(t, true).Build(tree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for what, write := range map[string]func(*bytes.Buffer) error{
		"run":  func(w *bytes.Buffer) error { return Speedscope(w, "run", p) },
		"diff": func(w *bytes.Buffer) error { return SpeedscopeTree(w, "diff", diff, p.Unit) },
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		q, err := ingest.Parse(bytes.NewReader(buf.Bytes()), what, ingest.Auto)
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if what == "run" && q.Total() != p.Total() {
			t.Errorf("run: read back with total %d, written %d", q.Total(), p.Total())
		} else if what == "run" {
			sameSources(t, what, profileSources(q), profileSources(p))
		} else {
			sameSources(t, what, profileSources(q), treeSources(diff))
		}
	}
	// And files the schema refuses are refused by it (the check can fail),
	// down to its profiles' definitions.
	for _, bad := range []string{`{"profiles": []}`, `{"$schema": "` + speedscopeSchema + `", "shared": {"frames": []}, "profiles": 1}`,
		`{"$schema": "` + speedscopeSchema + `", "shared": {"frames": []}, "profiles": [{"type": "sampled", "name": "x"}]}`} {
		var doc any
		if err := json.Unmarshal([]byte(bad), &doc); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err == nil {
			t.Errorf("the schema took %s", bad)
		}
	}
}

// A file as py-spy writes it (testdata/formats/README.md says how it was
// made) is valid by the schema but for the nulls py-spy's writer leaves
// for its unset options (activeProfileIndex, a frame's col), which the
// schema does not allow and speedscope itself reads; the speedscope row
// gives each function the samples the file's stacks end in, counted on the
// raw JSON.
func TestPySpySpeedscope(t *testing.T) {
	b, err := os.ReadFile(testkit.Testdata("formats", "py-spy.speedscope.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	schema := speedscopeFileSchema(t)
	if err := schema.Validate(doc); err == nil || !strings.Contains(err.Error(), `has type "null"`) {
		t.Errorf("py-spy's nulls: %v", err)
	}
	if err := schema.Validate(withoutNulls(doc)); err != nil {
		t.Error(err)
	}
	var raw struct {
		Shared   struct{ Frames []struct{ Name string } }
		Profiles []struct{ Samples [][]int }
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, prof := range raw.Profiles {
		for _, s := range prof.Samples {
			want[raw.Shared.Frames[s[len(s)-1]].Name]++
		}
	}
	p, err := ingest.Parse(bytes.NewReader(b), "py-spy.speedscope.json", ingest.Auto)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, s := range p.Samples {
		got[p.Frames[s.Stack[len(s.Stack)-1]].Name] += s.Value
	}
	if len(got) != len(want) {
		t.Errorf("leaves %v, the file's %v", got, want)
	}
	for fn, v := range want {
		if got[fn] != v {
			t.Errorf("%s: %d samples, the file's stacks end in it %d times", fn, got[fn], v)
		}
	}
	for _, f := range p.Frames {
		if f.Name == "slow" && (f.File != "/srv/app/bench.py" || f.Line != 7) {
			t.Errorf("slow at %s:%d, want /srv/app/bench.py:7", f.File, f.Line)
		}
	}
}

// withoutNulls drops the null members of v's objects, at any depth.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				v[k] = withoutNulls(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = withoutNulls(e)
		}
	}
	return v
}
