package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/profile"
)

// processedV70 is a processed profile of the newest version read: tables
// in profile.shared, a func's file in shared.sources, stacks by
// prefixOffset. main (app.js:1) calls work (app.js:7), which calls a
// native function of libxul; the third sample has no stack.
const processedV70 = `{"meta":{"interval":1,"preprocessedProfileVersion":70,"version":34,"markerSchema":[]},
"libs":[{"name":"libxul.so"}],
"shared":{"stringArray":["main","work","libxul.so","app.js","https://x.test/js/app.js","PresShell::Paint"],
 "sources":{"length":1,"id":[null],"filename":[4],"startLine":[1],"startColumn":[1],"sourceMapURL":[null],"content":[null]},
 "resourceTable":{"length":2,"name":[2,3],"host":[null,null],"type":[1,5]},
 "funcTable":{"length":3,"name":[0,1,5],"isJS":[true,true,false],"relevantForJS":[false,false,false],"resource":[1,1,0],"source":[0,0,null],"lineNumber":[1,7,null],"columnNumber":[null,null,null],"originalLocation":[null,null,null]},
 "frameTable":{"length":3,"func":[0,1,2],"line":[2,8,null],"column":[null,null,null],"address":[-1,-1,4660],"lib":[-1,-1,0],"inlineDepth":[0,0,0],"category":[null,null,null],"subcategory":[null,null,null],"nativeSymbol":[null,null,null],"innerWindowID":[0,0,0],"originalLocation":[null,null,null]},
 "stackTable":{"length":3,"frame":[0,1,2],"prefixOffset":[0,1,1]},
 "nativeSymbols":{"length":0,"libIndex":[],"address":[],"name":[],"functionSize":[]},
 "sourceLocationTable":{"length":0,"source":[],"line":[],"column":[]}},
"threads":[{"name":"GeckoMain","pid":"1","tid":1,"samples":{"length":4,"stack":[1,2,null,1],"weight":null,"weightType":"samples","time":[0,1,2,3]}},
 {"name":"DOM Worker","pid":"1","tid":2,"samples":{"length":1,"stack":[0],"weight":[3],"weightType":"samples","timeDeltas":[0]}}]}`

// processedV40 is one of a version before the tables moved to
// profile.shared (60), funcs named their fileName (58) and stacks their
// prefix (66): each thread has its tables and strings. Its samples weigh
// milliseconds of tracing.
const processedV40 = `{"meta":{"interval":1,"preprocessedProfileVersion":40},
"threads":[{"name":"t","stringArray":["main","work","https://x.test/app.js","lib"],
 "stackTable":{"length":2,"frame":[0,1],"prefix":[null,0]},
 "frameTable":{"length":2,"func":[0,1]},
 "funcTable":{"length":2,"name":[0,1],"isJS":[true,false],"resource":[-1,0],"fileName":[2,null],"lineNumber":[1,null]},
 "resourceTable":{"length":1,"name":[3]},
 "samples":{"length":2,"stack":[0,1],"weight":[1.5,2],"weightType":"tracing-ms"}}]}`

func TestProcessedGecko(t *testing.T) {
	for _, c := range []struct {
		name, in         string
		sampleType, unit string
		stacks           map[string]int64
		frame            string
		want             profile.Frame
	}{
		{"v70", processedV70, "samples", "count", map[string]int64{"main;work": 2, "main;work;PresShell::Paint": 1, "main": 3},
			"work", profile.Frame{Name: "work", Module: "app.js", File: "https://x.test/js/app.js", Line: 7}},
		{"v70 native", processedV70, "samples", "count", nil,
			"PresShell::Paint", profile.Frame{Name: "PresShell::Paint", Module: "libxul.so"}},
		{"v40", processedV40, "time", "nanoseconds", map[string]int64{"main": 1500000, "main;work": 2000000},
			"main", profile.Frame{Name: "main", Module: "app.js", File: "https://x.test/app.js", Line: 1}},
		{"v40 weighs 1 ms a sample", strings.Replace(processedV40, `"weight":[1.5,2]`, `"weight":null`, 1), "time", "nanoseconds",
			map[string]int64{"main": 1000000, "main;work": 1000000}, "main", profile.Frame{Name: "main", Module: "app.js", File: "https://x.test/app.js", Line: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write([]byte(c.in))
			zw.Close()
			for _, in := range [][]byte{[]byte(c.in), gz.Bytes()} {
				p, err := Parse(bytes.NewReader(in), "x.json", Auto)
				if err != nil {
					t.Fatal(err)
				}
				if p.SampleType != c.sampleType || p.Unit != c.unit {
					t.Errorf("sample type %s/%s, want %s/%s", p.SampleType, p.Unit, c.sampleType, c.unit)
				}
				if got := foldedCounts(p); c.stacks != nil && fmt.Sprint(got) != fmt.Sprint(c.stacks) {
					t.Errorf("stacks %v, want %v", got, c.stacks)
				}
				var found bool
				for _, f := range p.Frames {
					if f.Name == c.frame {
						found = true
						if f != c.want {
							t.Errorf("frame %+v, want %+v", f, c.want)
						}
					}
				}
				if !found {
					t.Errorf("no frame %s in %+v", c.frame, p.Frames)
				}
			}
		})
	}
}

// Hostile and broken processed profiles are refused with what is wrong.
func TestProcessedGeckoRefused(t *testing.T) {
	v70 := func(old, new string) string {
		if !strings.Contains(processedV70, old) {
			t.Fatalf("no %q in the profile", old)
		}
		return strings.Replace(processedV70, old, new, 1)
	}
	v40 := func(old, new string) string {
		if !strings.Contains(processedV40, old) {
			t.Fatalf("no %q in the profile", old)
		}
		return strings.Replace(processedV40, old, new, 1)
	}
	// A chain of stacks each sampled once: frames quadratic in its length
	// (the bound lowered, so that reaching it is cheap).
	defer func(m int) { maxStackFrames = m }(maxStackFrames)
	maxStackFrames = 1 << 16
	var chain strings.Builder
	const n = 400
	chain.WriteString(`{"meta":{"preprocessedProfileVersion":70},"shared":{"stringArray":["f"],"sources":{"length":0,"filename":[]},` +
		`"funcTable":{"length":1,"name":[0],"isJS":[false],"resource":[-1],"source":[null],"lineNumber":[null]},` +
		`"frameTable":{"length":1,"func":[0]},"stackTable":{"length":400,"frame":[0`)
	chain.WriteString(strings.Repeat(",0", n-1) + `],"prefixOffset":[0` + strings.Repeat(",1", n-1) + `]}},"threads":[{"samples":{"length":400,"weightType":"samples","stack":[0`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&chain, ",%d", i)
	}
	chain.WriteString(`]}}]}`)
	for in, want := range map[string]string{
		v70(`"preprocessedProfileVersion":70`, `"preprocessedProfileVersion":71`):            "processed profile version 71: this reads versions 29 to 70",
		v70(`"preprocessedProfileVersion":70`, `"preprocessedProfileVersion":12`):            "processed profile version 12",
		v70(`"prefixOffset":[0,1,1]`, `"prefixOffset":[0,1,3]`):                              "stack 2: prefixOffset 3 points before the table",
		v40(`"prefix":[null,0]`, `"prefix":[1,0]`):                                           "stack 0: prefix 1 does not come before it",
		v40(`"prefix":[null,0]`, `"prefix":[null,1]`):                                        "stack 1: prefix 1 does not come before it",
		v70(`"stack":[1,2,null,1]`, `"stack":[1,2,null,9]`):                                  "sample 3: stack 9 out of the 3 of the stack table",
		v70(`"frame":[0,1,2],"prefixOffset"`, `"frame":[0,7,2],"prefixOffset"`):              "stack 1: frame 7 out of the 3 of the frame table",
		v70(`"func":[0,1,2]`, `"func":[0,1,5]`):                                              "frame 2: func 5 out of the 3 of the func table",
		v70(`"name":[0,1,5],"isJS"`, `"name":[0,1,50],"isJS"`):                               "func 2: name string 50 out of the 6 of the string array",
		v70(`"source":[0,0,null]`, `"source":[4,0,null]`):                                    "func 0: source 4 out of the 1 of the sources",
		v70(`"resource":[1,1,0]`, `"resource":[1,1,2]`):                                      "func 2: resource 2 out of the resource table",
		v70(`"stackTable":{"length":3`, `"stackTable":{"length":3000000000000`):              "stackTable.frame has 3 values, the table's length is 3000000000000",
		v70(`"samples":{"length":4`, `"samples":{"length":-1`):                               "samples.stack has 4 values, the table's length is -1",
		v70(`"weight":[3],"weightType":"samples"`, `"weight":[3],"weightType":"tracing-ms"`): "weightType tracing-ms, another thread's is samples",
		v70(`"weightType":"samples","time"`, `"weightType":"cycles","time"`):                 `unknown weightType "cycles"`,
		v70(`"weight":[3]`, `"weight":[-3]`):                                                 "sample 0 weighs -3",
		v70(`"weight":[3]`, `"weight":["3"]`):                                                `samples.weight holds '"', not a number`,
		v70(`"frame":[0,1,2],"prefixOffset"`, `"frame":[0,1,[2]],"prefixOffset"`):            "stackTable.frame holds '[', not a number",
		v70(`"stack":[1,2,null,1]`, `"stack":[1,2,null,-2]`):                                 "is no index",
		v70(`"sources":{"length":1`, `"sourcesX":{"length":1`):                               "no sources table",
		v40(`"stack":[0,1]`, `"stack":[null,null]`):                                          "no samples with a stack",
		chain.String(): "the sampled stacks hold more than 65536 frames in all",
	} {
		if _, err := Parse(strings.NewReader(in), "x", Auto); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q", err, want)
		}
	}
}

func FuzzParseProcessedGecko(f *testing.F) {
	seed(f, "formats/*.processed.json")
	f.Add([]byte(processedV70))
	f.Add([]byte(processedV40))
	fuzzFormat(f, Processed)
}

// stackTree is stacks as a table of stack nodes (prefix, name), each
// prefix before its children, -1 for roots: names lists the distinct
// names, samples the node of each stack.
func stackTree(stacks [][]string) (names []string, nodes [][2]int, samples []int) {
	ids := map[string]int{}
	index := map[[2]int]int{}
	for _, s := range stacks {
		prefix := -1
		for _, f := range s {
			id, ok := ids[f]
			if !ok {
				id = len(names)
				ids[f] = id
				names = append(names, f)
			}
			n, ok := index[[2]int{prefix, id}]
			if !ok {
				n = len(nodes)
				index[[2]int{prefix, id}] = n
				nodes = append(nodes, [2]int{prefix, id})
			}
			prefix = n
		}
		samples = append(samples, prefix)
	}
	return names, nodes, samples
}

// benchProcessed writes stacks as a processed profile of version 70: one
// thread, its stack table the tree of the stacks' prefixes, a JS function
// a frame.
func benchProcessed(stacks [][]string) []byte {
	names, nodes, sampled := stackTree(stacks)
	frame, offset, samples := make([]string, len(nodes)), make([]string, len(nodes)), make([]string, len(sampled))
	for i, n := range nodes {
		frame[i], offset[i] = fmt.Sprint(n[1]), "0"
		if n[0] >= 0 {
			offset[i] = fmt.Sprint(i - n[0])
		}
	}
	for i, n := range sampled {
		samples[i] = fmt.Sprint(n)
	}
	str := make([]string, len(names)+1)
	idx, zeros, nulls, trues := make([]string, len(names)), make([]string, len(names)), make([]string, len(names)), make([]string, len(names))
	for i, n := range names {
		str[i] = fmt.Sprintf("%q", n)
		idx[i], zeros[i], nulls[i], trues[i] = fmt.Sprint(i), "0", "null", "true"
	}
	str[len(names)] = `"https://shop.test/js/app.js"`
	j := func(s []string) string { return "[" + strings.Join(s, ",") + "]" }
	n := len(names)
	return fmt.Appendf(nil, `{"meta":{"interval":1,"preprocessedProfileVersion":70},"libs":[],"shared":{"stringArray":%s,`+
		`"sources":{"length":1,"filename":[%d]},"resourceTable":{"length":1,"name":[%d],"type":[5]},`+
		`"funcTable":{"length":%d,"name":%s,"isJS":%s,"resource":%s,"source":%s,"lineNumber":%s},`+
		`"frameTable":{"length":%d,"func":%s,"line":%s},"stackTable":{"length":%d,"frame":%s,"prefixOffset":%s}},`+
		`"threads":[{"name":"GeckoMain","samples":{"length":%d,"stack":%s,"weight":null,"weightType":"samples"}}]}`,
		j(str), n, n, n, j(idx), j(trues), j(zeros), j(zeros), j(nulls), n, j(idx), j(nulls), len(frame), j(frame), j(offset), len(samples), j(samples))
}

// Processed profiles the Firefox Profiler wrote (testdata/formats/
// README.md: its own processing of a raw Gecko profile, of simpleperf's
// and of Firefox's, the latter gzipped as its downloads are): each
// function's self weight, by name, is what a sweep of the columns gives.
func TestProcessedGeckoAgainstTables(t *testing.T) {
	for _, file := range []string{"prog.processed.json", "firefox.processed.json.gz"} {
		t.Run(file, func(t *testing.T) {
			b := testkit.ReadTestdata(t, "formats", file)
			if f, _ := detect(b[:min(len(b), detectSize)], "x"); f.Name != Processed {
				t.Errorf("detected as %s", f.Name)
			}
			if bytes.HasPrefix(b, gzipMagic) {
				b = testkit.Gunzip(t, b)
			}
			var raw struct {
				Shared struct {
					StringArray []string
					StackTable  struct{ Frame []int }
					FrameTable  struct{ Func []int }
					FuncTable   struct{ Name []int }
				}
				Threads []struct {
					Samples struct {
						Stack  []*int
						Weight []float64
					}
				}
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			sh := raw.Shared
			want := map[string]int64{}
			for _, th := range raw.Threads {
				for k, s := range th.Samples.Stack {
					if s == nil {
						continue
					}
					w := int64(1)
					if th.Samples.Weight != nil {
						w = int64(th.Samples.Weight[k])
					}
					want[sh.StringArray[sh.FuncTable.Name[sh.FrameTable.Func[sh.StackTable.Frame[*s]]]]] += w
				}
			}
			p := parseTool(t, "../../testdata/formats/"+file, Options{})
			got := map[string]int64{}
			for _, s := range p.Samples {
				got[p.Frames[s.Stack[len(s.Stack)-1]].Name] += s.Value
			}
			if len(got) != len(want) || len(want) < 4 {
				t.Errorf("%d leaves, the tables' %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %d, the tables %d", k, got[k], v)
				}
			}
			for _, f := range p.Frames {
				id := profile.ModuleIdentity(f.Module)
				if f.Name == "slow" && (f.Module != "/data/local/tmp/prog" && id != "page.html" || id == "page.html" && (f.Line != 3 || !strings.HasSuffix(f.File, "/page.html"))) {
					t.Errorf("slow: %+v", f)
				}
			}
		})
	}
}

// auto tells a processed profile from a raw Gecko one, Firefox's (libs
// and meta first) included, and refuses JSON that is neither.
func TestGeckoDetection(t *testing.T) {
	rawFirefox := `{"libs":[{"start":1,"end":2,"name":"libxul.so","breakpadId":"X"}],"meta":{"version":34,"stackwalk":0,"processType":0},"threads":[]}`
	for in, want := range map[string]Format{
		processedV70: Processed,
		processedV40: Processed,
		rawFirefox:   Gecko,
		`{"meta":{"version":34,"interval":1,"stackwalk":1,"processType":0,"preprocessedProfileVersion":70},"threads":[]}`:     Processed,
		`{"threads":[{"samples":{"schema":{"stack":0},"data":[]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":[]}}]}`: Gecko,
	} {
		if f, err := detect([]byte(in), "x"); err != nil || f.Name != want {
			t.Errorf("%.60s: detected %s (%v), want %s", in, f.Name, err, want)
		}
	}
	for _, in := range []string{`{"meta":{"interval":1},"threads":[]}`, `{"meta":{"version":34},"shared":{"stringArray":[]}}`} {
		if f, err := detect([]byte(in), "x"); err == nil || !strings.Contains(err.Error(), "JSON that is no") {
			t.Errorf("%s: detected %s (%v), want a refusal", in, f.Name, err)
		}
	}
}
