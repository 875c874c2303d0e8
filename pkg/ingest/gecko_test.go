package ingest

import (
	"encoding/json"
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
	fuzzFormat(f, Gecko)
}
