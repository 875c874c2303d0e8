package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A Gecko profile as simpleperf writes it (testdata/formats/README.md):
// each function's samples are those whose stacks end in its frame,
// counted on the raw tables.
func TestGeckoAgainstTables(t *testing.T) {
	const file = "../../testdata/formats/prog.gecko.json"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := detect(b[:min(len(b), detectSize)], "x"); f.Name != Gecko {
		t.Errorf("detected as %s", f.Name)
	}
	var raw struct {
		Threads []struct {
			Samples, StackTable, FrameTable struct{ Data [][]any }
			StringTable                     []string
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, th := range raw.Threads {
		for _, s := range th.Samples.Data {
			frame := th.StackTable.Data[int(s[0].(float64))][1].(float64)
			loc := th.StringTable[int(th.FrameTable.Data[int(frame)][0].(float64))]
			want[loc]++
		}
	}
	p := parseTool(t, file, Options{})
	got := map[string]int64{}
	for _, s := range p.Samples {
		f := p.Frames[s.Stack[len(s.Stack)-1]]
		got[f.Name+" (in "+f.File+")"] += s.Value
	}
	if len(got) != len(want) || len(want) < 4 {
		t.Errorf("leaves %v, the tables' %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d samples, the tables %d", k, got[k], v)
		}
	}
	for _, f := range p.Frames {
		if f.Name == "slow" && f.Module != "/data/local/tmp/prog" {
			t.Errorf("slow in module %q, want the dso's path /data/local/tmp/prog", f.Module)
		}
	}
	for in, want := range map[string]string{
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[[0]]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[1,0],[0,0]]},"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["a"]}]}`: "cycle",
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[[0]]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,5]]},"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["a"]}]}`:    "stack 0 names no frame of 1",
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[[0]]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0]]},"frameTable":{"schema":{"location":0},"data":[[3]]},"stringTable":["a"]}]}`:    "frame 0 names no string of 1",
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[[7]]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0]]},"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["a"]}]}`:    "unknown node 7",
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[[null]]},"stackTable":{"schema":{"prefix":0},"data":[]},"frameTable":{"schema":{},"data":[]},"stringTable":[]}]}`:                                     "no samples with a stack",
	} {
		if _, err := Parse(strings.NewReader(in), "x", Auto); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q", err, want)
		}
	}
}

func FuzzParseGecko(f *testing.F) {
	seed(f, "formats/*.gecko.json")
	// The layouts the stream reads otherwise: a child process before the
	// threads, as a string and null; rows before their schema.
	f.Add([]byte(`{"processes":[{"threads":[{"name":"c","samples":{"data":[[1,0]],"schema":{"stack":0,"time":1}},` +
		`"stackTable":{"data":[[null,0],[0,1]],"schema":{"prefix":0,"frame":1}},"frameTable":{"data":[[0],[1]],"schema":{"location":0}},` +
		`"stringTable":["main (in app)","0x1f"]}]},"{\"threads\":[]}",null],` +
		`"threads":[{"name":"t","samples":{"schema":{"stack":0},"data":[[1],[0],[null]]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,0]]},` +
		`"frameTable":{"schema":{"location":0,"line":1},"data":[[0,3]]},"stringTable":["f (https://x/a.js:3:1)"]}]}`))
	fuzzFormat(f, Gecko)
}

// A raw Gecko profile as Firefox writes it: JS locations with url and
// line, unsymbolicated addresses passed over for their caller, child
// processes (old Firefox wrote them as strings of JSON).
func TestGeckoFirefoxLocations(t *testing.T) {
	thread := `{"name":"GeckoMain","samples":{"schema":{"stack":0,"time":1},"data":[[2,0],[3,1],[4,2],[5,3]]},` +
		`"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[1,2],[1,3],[2,4],[null,3]]},` +
		`"frameTable":{"schema":{"location":0,"relevantForJS":1,"innerWindowID":2,"implementation":3,"line":4,"column":5,"category":6,"subcategory":7},` +
		`"data":[[0,false,0,null,null,null,0,0],[1,false,0,null,null,null,0,0],[2,false,0,null,9,14,0,0],[3,false,0,null,null,null,0,0],[4,false,0,null,null,null,0,0]]},` +
		`"stringTable":["js::RunScript","0x1010","slow (https://x.test/app/page.html:4:14)[1]","0x7f0000001234","0x200010"]}`
	libs := `"libs":[{"start":4096,"end":8192,"offset":0,"name":"libxul.so","breakpadId":"X"},{"start":2097152,"end":2101248,"offset":65536,"name":"libc.so.6","breakpadId":"Y"}]`
	child := `{"meta":{"version":34},` + libs + `,"threads":[` + thread + `],"processes":[]}`
	quoted, _ := json.Marshal(child)
	in := `{` + libs + `,"meta":{"version":34,"stackwalk":1,"processType":0},"threads":[` + thread + `],"processes":[` + child + `,` + string(quoted) + `]}`
	p, err := Parse(strings.NewReader(in), "x.json", Auto)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"js::RunScript;slow": 6, "js::RunScript": 3, geckoUnsymbolicated: 3}
	if got := foldedCounts(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	for _, f := range p.Frames {
		if f.Name == "slow" && (f.File != "https://x.test/app/page.html" || f.Line != 4 || f.Module != "page.html") {
			t.Errorf("slow: %+v", f)
		}
	}
	deep := `{"threads":[],"processes":[` + strings.Repeat(`{"threads":[],"processes":[`, 6) + strings.Repeat(`]}`, 6) + `]}`
	if _, err := Parse(strings.NewReader(deep), "x", Gecko); err == nil || !strings.Contains(err.Error(), "processes nest deeper than 4") {
		t.Errorf("error %v for processes nested 7 deep", err)
	}
}
