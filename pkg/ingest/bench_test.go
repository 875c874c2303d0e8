package ingest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/pkg/profile"
)

// benchStacks generates n random stacks over a vocabulary of a few thousand
// function names, 8 to 40 frames deep, like a mid-sized service.
func benchStacks(n int) [][]string {
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, 3000)
	for i := range names {
		names[i] = fmt.Sprintf("github.com/acme/svc/pkg%d.(*Type%d).Method%d", i%40, i%300, i)
	}
	stacks := make([][]string, n)
	for i := range stacks {
		s := make([]string, 8+r.IntN(33))
		for j := range s {
			s[j] = names[r.IntN(len(names))]
		}
		stacks[i] = s
	}
	return stacks
}

func benchFolded(stacks [][]string) []byte {
	var b bytes.Buffer
	for i, s := range stacks {
		for j, f := range s {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteString(f)
		}
		fmt.Fprintf(&b, " %d\n", 1+i%7)
	}
	return b.Bytes()
}

func benchPerf(stacks [][]string) []byte {
	var b bytes.Buffer
	for i, s := range stacks {
		fmt.Fprintf(&b, "svc 4242/%d [00%d] %d.%06d: 10101010 cpu-clock:u: \n", 4242+i%8, i%4, 1000+i/1000, i%1000*1000)
		for j := len(s) - 1; j >= 0; j-- {
			fmt.Fprintf(&b, "\t%16x %s+0x%x (/usr/bin/svc)\n", 0x400000+j*16, s[j], j)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func benchPprof(b *testing.B, stacks [][]string) []byte {
	p := &pprof.Profile{SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	m := &pprof.Mapping{ID: 1, File: "/usr/bin/svc", Start: 0x400000, Limit: 0x900000}
	p.Mapping = []*pprof.Mapping{m}
	locs := map[string]*pprof.Location{}
	for _, s := range stacks {
		sample := &pprof.Sample{Value: []int64{1, 10000000}}
		for j := len(s) - 1; j >= 0; j-- {
			loc, ok := locs[s[j]]
			if !ok {
				id := uint64(len(locs) + 1)
				fn := &pprof.Function{ID: id, Name: s[j]}
				p.Function = append(p.Function, fn)
				loc = &pprof.Location{ID: id, Mapping: m, Address: 0x400000 + id*16, Line: []pprof.Line{{Function: fn}}}
				p.Location = append(p.Location, loc)
				locs[s[j]] = loc
			}
			sample.Location = append(sample.Location, loc)
		}
		p.Sample = append(p.Sample, sample)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchParse(b *testing.B, data []byte, f Format) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var samples int
	for b.Loop() {
		p, err := Parse(bytes.NewReader(data), "bench", f)
		if err != nil {
			b.Fatal(err)
		}
		samples += len(p.Samples)
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

const benchN = 20000

func BenchmarkParseFolded(b *testing.B) { benchParse(b, benchFolded(benchStacks(benchN)), Auto) }
func BenchmarkParsePerf(b *testing.B)   { benchParse(b, benchPerf(benchStacks(benchN)), Auto) }
func BenchmarkParsePprof(b *testing.B)  { benchParse(b, benchPprof(b, benchStacks(benchN)), Auto) }

// benchCPUProfile writes stacks as a V8 CPU profile: a node tree (a trie
// of the stacks) and a sample a stack, 100 µs apart.
func benchCPUProfile(stacks [][]string) []byte {
	type node struct {
		children map[string]int
		name     string
	}
	nodes := []node{{children: map[string]int{}, name: "(root)"}}
	var samples, deltas []string
	for _, s := range stacks {
		at := 0
		for _, f := range s {
			next, ok := nodes[at].children[f]
			if !ok {
				next = len(nodes)
				nodes = append(nodes, node{children: map[string]int{}, name: f})
				nodes[at].children[f] = next
			}
			at = next
		}
		samples = append(samples, fmt.Sprint(at+1))
		deltas = append(deltas, "100")
	}
	var b bytes.Buffer
	b.WriteString(`{"nodes":[`)
	for i, n := range nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		var kids []string
		for _, c := range n.children {
			kids = append(kids, fmt.Sprint(c+1))
		}
		fmt.Fprintf(&b, `{"id":%d,"callFrame":{"functionName":%q,"scriptId":"1","url":"file:///srv/app.js","lineNumber":%d,"columnNumber":0},"hitCount":0,"children":[%s]}`,
			i+1, n.name, i%500, strings.Join(kids, ","))
	}
	fmt.Fprintf(&b, `],"startTime":0,"endTime":%d,"samples":[%s],"timeDeltas":[%s]}`, 100*len(stacks),
		strings.Join(samples, ","), strings.Join(deltas, ","))
	return b.Bytes()
}

// benchSpeedscope writes stacks as a sampled speedscope profile.
func benchSpeedscope(stacks [][]string) []byte {
	ids := map[string]int{}
	var frames, samples, weights []string
	for i, s := range stacks {
		var stack []string
		for _, f := range s {
			id, ok := ids[f]
			if !ok {
				id = len(ids)
				ids[f] = id
				frames = append(frames, fmt.Sprintf(`{"name":%q,"file":"/srv/app.py","line":%d}`, f, id%500))
			}
			stack = append(stack, fmt.Sprint(id))
		}
		samples = append(samples, "["+strings.Join(stack, ",")+"]")
		weights = append(weights, fmt.Sprint(1+i%7))
	}
	return fmt.Appendf(nil, `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[%s]},`+
		`"profiles":[{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":1,"samples":[%s],"weights":[%s]}]}`,
		strings.Join(frames, ","), strings.Join(samples, ","), strings.Join(weights, ","))
}

// benchTraceEvents writes each stack as complete (X) events nested on one
// thread, each enclosing the next, the innermost taking the whole time: a
// span flame graph of one sample per stack.
func benchTraceEvents(stacks [][]string) []byte {
	var events []string
	for i, s := range stacks {
		for _, f := range s {
			events = append(events, fmt.Sprintf(`{"ph":"X","name":%q,"pid":1,"tid":1,"ts":%d,"dur":%d}`, f, 10*i, 1+i%7))
		}
	}
	return fmt.Appendf(nil, `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},%s]}`,
		strings.Join(events, ","))
}

// benchJFR writes stacks as async-profiler's recording of execution
// samples, a sample a stack (the JDK's recording of testdata is mostly
// metadata and pools: 57 samples).
func benchJFR(stacks [][]string) []byte {
	ids, traces, lines := map[string]int{}, map[int][]string{}, map[string]int{}
	var samples []apSample
	for _, s := range stacks {
		key := strings.Join(s, ";")
		id, ok := ids[key]
		if !ok {
			id = len(ids) + 1
			ids[key] = id
			traces[id] = slices.Clone(s)
			slices.Reverse(traces[id]) // leaf first, as JFR lists frames
		}
		samples = append(samples, apSample{apExecutionSample, id, []uint64{1}})
		for _, f := range s {
			lines[f] = 1
		}
	}
	return writeAsyncProfilerJFR(traces, lines, samples)
}

// benchGecko writes stacks as one raw Gecko thread, its stack table the
// tree of the stacks' prefixes.
func benchGecko(stacks [][]string) []byte {
	frames, nodes, sampled := stackTree(stacks)
	table, samples := make([]string, len(nodes)), make([]string, len(sampled))
	for i, n := range nodes {
		p := "null"
		if n[0] >= 0 {
			p = fmt.Sprint(n[0])
		}
		table[i] = fmt.Sprintf("[%s,%d,0]", p, n[1])
	}
	for i, n := range sampled {
		samples[i] = fmt.Sprintf("[%d,%d,0]", n, i)
	}
	rows := make([]string, len(frames))
	names := make([]string, len(frames))
	for i, f := range frames {
		rows[i] = fmt.Sprintf("[%d,false,0,null,null,null,null,0,0]", i)
		names[i] = fmt.Sprintf("%q", f+" (in /data/local/tmp/prog)")
	}
	return fmt.Appendf(nil, `{"meta":{"version":24},"threads":[{"name":"main","samples":{"schema":{"stack":0,"time":1,"responsiveness":2},"data":[%s]},`+
		`"stackTable":{"schema":{"prefix":0,"frame":1,"category":2},"data":[%s]},`+
		`"frameTable":{"schema":{"location":0,"relevantForJS":1,"innerWindowID":2,"implementation":3,"optimizations":4,"line":5,"column":6,"category":7,"subcategory":8},"data":[%s]},`+
		`"stringTable":[%s]}]}`, strings.Join(samples, ","), strings.Join(table, ","), strings.Join(rows, ","), strings.Join(names, ","))
}

// toPprof writes a parsed run as pprof, the same profile in the format
// the others are measured against.
func toPprof(b *testing.B, p *profile.Profile) []byte {
	out := &pprof.Profile{SampleType: []*pprof.ValueType{{Type: p.SampleType, Unit: p.Unit}}}
	locs := make([]*pprof.Location, len(p.Frames))
	for i, f := range p.Frames {
		fn := &pprof.Function{ID: uint64(i + 1), Name: f.Name, Filename: f.File, StartLine: f.Line}
		out.Function = append(out.Function, fn)
		locs[i] = &pprof.Location{ID: uint64(i + 1), Line: []pprof.Line{{Function: fn, Line: f.Line}}}
		out.Location = append(out.Location, locs[i])
	}
	for _, s := range p.Samples {
		ps := &pprof.Sample{Value: []int64{s.Value}}
		for j := len(s.Stack) - 1; j >= 0; j-- {
			ps.Location = append(ps.Location, locs[s.Stack[j]])
		}
		out.Sample = append(out.Sample, ps)
	}
	var buf bytes.Buffer
	if err := out.Write(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkParseFormats measures each new format's samples a second next
// to pprof's on the same profile (the format's file parsed, written back as
// pprof), the two alternating, and trace events' events a second: benchN
// samples over a tenth as many distinct stacks (a V8 node table is a tree
// of the distinct stacks) for the JSON formats (trace events: nested X
// events a stack; Gecko: one thread); the files of testdata the real callgrind and JFR wrote
// (random stacks make a call graph no program has, and JFR has no writer
// here).
func BenchmarkParseFormats(b *testing.B) {
	distinct := benchStacks(benchN / 10)
	stacks := make([][]string, benchN)
	for i := range stacks {
		stacks[i] = distinct[i%len(distinct)]
	}
	real := func(file string) []byte {
		data, err := os.ReadFile("../../testdata/formats/" + file)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	for _, tc := range []struct {
		format Format
		data   []byte
		name   string // of the row, when not the format's
	}{
		{CPUProfile, benchCPUProfile(stacks), ""},
		{Speedscope, benchSpeedscope(stacks), ""},
		{TraceEvent, benchTraceEvents(stacks), ""},
		{Gecko, benchGecko(stacks), ""},
		{Processed, benchProcessed(stacks), ""},
		{Callgrind, real("prog.callgrind"), ""},
		{JFR, real("app.jfr"), ""},
		{JFR, benchJFR(stacks), "jfr-sampled"},
	} {
		if tc.name == "" {
			tc.name = string(tc.format)
		}
		p, err := Parse(bytes.NewReader(tc.data), "bench", tc.format)
		if err != nil {
			b.Fatal(err)
		}
		same := toPprof(b, p)
		b.Run(tc.name, func(b *testing.B) {
			benchParse(b, tc.data, tc.format)
			if tc.format == TraceEvent { // an event a frame of a stack: events/s is samples/s times their depth
				b.ReportMetric(float64(bytes.Count(tc.data, []byte(`"ph":`))*b.N)/b.Elapsed().Seconds(), "events/s")
			}
		})
		b.Run(tc.name+"-as-pprof", func(b *testing.B) { benchParse(b, same, Pprof) })
	}
}
