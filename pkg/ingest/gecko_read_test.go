package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// A child process reads the same wherever the file puts it and however it
// is written: after the threads, before them (held until they are read),
// as a string of JSON (old Firefox), null beside it as no process; and a
// table's rows before its schema.
func TestGeckoProcessLayouts(t *testing.T) {
	data := testkit.ReadTestdata(t, "formats", "prog.gecko.json")
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, th := range doc["threads"].([]any) { // the child's functions are its own: the order of the samples shows
		strs := th.(map[string]any)["stringTable"].([]any)
		for i, s := range strs {
			strs[i] = "child " + s.(string)
		}
	}
	child, err := json.Marshal(doc) // a map: keys sorted, "data" before "schema"
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := json.Marshal(string(child))
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '}')
	layouts := map[string]string{
		"after the threads":  string(data[:end]) + `,"processes":[` + string(child) + "]}",
		"before the threads": `{"processes":[null,` + string(child) + "]," + string(bytes.TrimLeft(data, " \n{")),
		"a string":           string(data[:end]) + `,"processes":[null,` + string(quoted) + "]}",
	}
	one, err := Parse(bytes.NewReader(data), "x", Gecko)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		layout  string
		samples []string
	}
	for name, in := range layouts {
		p, err := Parse(strings.NewReader(in), "x", Gecko)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Total() != 2*one.Total() {
			t.Errorf("%s: total %d, want twice the process's %d", name, p.Total(), one.Total())
		}
		var samples []string // in order, by their frames' names
		for _, s := range p.Samples {
			samples = append(samples, strings.Join(p.Names(s.Stack), ";"))
		}
		if first.samples == nil {
			first.layout, first.samples = name, samples
		} else if !slices.Equal(samples, first.samples) {
			t.Errorf("%s: the samples differ from %s's", name, first.layout)
		}
	}
	for in, want := range map[string]string{
		string(data[:end]) + `,"processes":[7]}`:                      "process 0: is a number, not an object",
		strings.Repeat(`{"processes":[`, 6) + strings.Repeat("]}", 6): "processes nest deeper than 4",
	} {
		if _, err := Parse(strings.NewReader(in), "x", Gecko); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q", err, want)
		}
	}
}

// Both Gecko formats are bounded by what a run holds: past maxItems rows
// of a table or values of a column, a file is refused where it passes the
// bound.
func TestGeckoItemsBounded(t *testing.T) {
	maxItems = 6 // processedV70 has 6 strings
	t.Cleanup(func() { maxItems = MaxItems })
	raw := func(rows string) string {
		return `{"threads":[{"name":"t","samples":{"schema":{"stack":0},"data":[` + rows + `]},` +
			`"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0]]},"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["f"]}]}`
	}
	processed := func(n int) string {
		stacks := strings.TrimSuffix(strings.Repeat("1,", n), ",")
		return strings.Replace(processedV70, `"samples":{"length":4,"stack":[1,2,null,1],"weight":null`, fmt.Sprintf(`"samples":{"length":%d,"stack":[%s]`, n, stacks), 1)
	}
	for _, tc := range []struct {
		in     string
		format Format
		want   string // "" for a file within the bound
	}{
		{raw(strings.Repeat("[0],", 5) + "[0]"), Gecko, ""},
		{raw(strings.Repeat("[0],", 6) + "[0]"), Gecko, fmt.Sprintf("offset %d: more than 6 samples rows", strings.Index(raw(""), `"data":[`)+len(`"data":[`)+6*len("[0],")-1)}, // the 6th row's end
		{processed(6), Processed, ""},
		{processed(7), Processed, "more than 6 samples.stack"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "x", tc.format)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%.60s...: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
