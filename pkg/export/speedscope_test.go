package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

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
	p := parse(t, runs(t, "head")[0])
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
