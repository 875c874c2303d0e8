package tree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
)

// program is a synthetic call graph with skewed (Zipf) fan-out, used to
// draw realistic stacks: a few hot paths shared by many stacks, a long tail.
type program struct {
	r       *rand.Rand
	callees [][]uint32
	pick    *rand.Zipf
}

func newProgram(seed uint64, functions int) *program {
	r := rand.New(rand.NewPCG(seed, 2))
	p := &program{r: r, callees: make([][]uint32, functions), pick: rand.NewZipf(r, 1.2, 1, 63)}
	for f := range p.callees {
		for range 64 {
			p.callees[f] = append(p.callees[f], uint32(r.IntN(functions)))
		}
	}
	return p
}

// stack draws a stack of depth 20 to 40, root first, into buf.
func (p *program) stack(buf []uint32) []uint32 {
	buf = append(buf[:0], uint32(p.pick.Uint64()%4))
	for depth := 20 + p.r.IntN(21); len(buf) < depth; {
		buf = append(buf, p.callees[buf[len(buf)-1]][p.pick.Uint64()])
	}
	return buf
}

// bigDiff is 2 x 20 runs over 1 million distinct stacks (50,000 with
// -short, which the test command runs the benchmarks with).
var bigDiff = sync.OnceValue(func() *Builder {
	stacks, runs := StackID(1_000_000), 20
	if testing.Short() {
		stacks = 50_000
	}
	p := newProgram(1, 20_000)
	f := NewFrames()
	for i := range 20_000 {
		f.Intern(fmt.Sprintf("pkg%d.Function%d", i%300, i), fmt.Sprintf("/app/lib%d.so", i%40))
	}
	b := NewBuilder(f)
	var buf []uint32
	for b.Stacks() < int(stacks) {
		buf = p.stack(buf)
		b.Stack(buf)
	}
	weight := rand.NewZipf(p.r, 1.1, 1, 10_000)
	for id := range stacks {
		w := int64(weight.Uint64() + 1)
		for _, side := range []Side{Base, Head} {
			for run := range uint64(runs) {
				b.Add(side, id, w+p.r.Int64N(w+1), run*1000+uint64(id))
			}
		}
	}
	b.SetRuns(Base, runs)
	b.SetRuns(Head, runs)
	return b
})

// BenchmarkBuildDiff builds the averaged diff tree of 2 x 20 runs over 1
// million distinct stacks of depth 20-40.
func BenchmarkBuildDiff(b *testing.B) {
	for _, o := range []Options{{}, {Inverted: true}, {MaxNodes: 20_000}} {
		b.Run(fmt.Sprintf("inverted=%v,maxNodes=%d", o.Inverted, o.MaxNodes), func(b *testing.B) {
			builder := bigDiff()
			b.ReportAllocs()
			var t *Tree
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				t, _ = builder.Build(o)
			}
			runtime.ReadMemStats(&after)
			allocated := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
			b.ReportMetric(float64(t.Len()), "nodes")
			b.ReportMetric(allocated/float64(t.Len()), "B/node")
			b.ReportMetric(float64(unsafe.Sizeof(Node{})), "B/node-kept")
		})
	}
}

// diffRuns is 2 x 20 runs over 200,000 distinct stacks (the size of the
// query benchmarks' data; 20,000 with -short), twice: with per-run values
// (AddRun) and as sums (Add).
var diffRuns = sync.OnceValues(func() (runs, sums *Builder) {
	stacks, n := StackID(200_000), 20
	if testing.Short() {
		stacks = 20_000
	}
	p := newProgram(3, 20_000)
	f := NewFrames()
	for i := range 20_000 {
		f.Intern(fmt.Sprintf("pkg%d.Function%d", i%300, i), "")
	}
	runs, sums = NewBuilder(f), NewBuilder(f)
	var buf []uint32
	for runs.Stacks() < int(stacks) {
		buf = p.stack(buf)
		runs.Stack(buf)
		sums.Stack(buf)
	}
	for _, side := range []Side{Base, Head} {
		runs.SetRuns(side, n)
		sums.SetRuns(side, n)
	}
	weight := rand.NewZipf(p.r, 1.1, 1, 10_000)
	for id := range stacks {
		w := int64(weight.Uint64() + 1)
		for _, side := range []Side{Base, Head} {
			for run := range n {
				v, first := w+p.r.Int64N(w+1), uint64(run*1000)+uint64(id)
				runs.AddRun(side, run, id, v, first)
				sums.Add(side, id, v, first)
			}
		}
	}
	return runs, sums
})

// BenchmarkBuildDiffStats is the cost of per-node statistics: the same
// diff of 2 x 20 runs over 200,000 stacks built from per-run values
// (stats) and from sums (no statistics), as a query asks for it.
func BenchmarkBuildDiffStats(b *testing.B) {
	runs, sums := diffRuns()
	for _, o := range []Options{{MaxNodes: 20_000}, {Inverted: true, MaxNodes: 20_000}} {
		for _, c := range []struct {
			name    string
			builder *Builder
		}{{"stats", runs}, {"sums", sums}} {
			b.Run(fmt.Sprintf("inverted=%v,maxNodes=%d/%s", o.Inverted, o.MaxNodes, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var t *Tree
				for b.Loop() {
					t, _ = c.builder.Build(o)
				}
				b.ReportMetric(float64(t.Len()), "nodes")
			})
		}
	}
	// Culprits on a built tree: what a diff adds to its Build.
	for _, o := range []Options{{MaxNodes: 20_000}, {Inverted: true, MaxNodes: 20_000}} {
		t, _ := runs.Build(o)
		b.Run(fmt.Sprintf("culprits/inverted=%v", o.Inverted), func(b *testing.B) {
			for b.Loop() {
				t.Culprits()
			}
		})
	}
	b.Run("functions/stats", func(b *testing.B) {
		for b.Loop() {
			runs.Functions(Options{})
		}
	})
	b.Run("functions/sums", func(b *testing.B) {
		for b.Loop() {
			sums.Functions(Options{})
		}
	})
}

// BenchmarkAdd is the cost of one run's value for one stack.
func BenchmarkAdd(b *testing.B) {
	builder := bigDiff()
	n := StackID(builder.Stacks())
	var i StackID
	for b.Loop() {
		builder.Add(Head, i%n, 0, notSeen-1)
		i++
	}
}

// pprofRunsSynthetic is 40 Go-like CPU profiles of one program, encoded as
// pprof files. Like repeated runs of one test, they draw their samples
// from a shared population of 20,000 stacks with Zipf-skewed popularity;
// each run aggregates 20,000 samples by stack, as pprof does.
var pprofRunsSynthetic = sync.OnceValue(func() [][]byte {
	prog := newProgram(2, 3_000)
	population := make([][]uint32, 20_000)
	for i := range population {
		population[i] = prog.stack(nil)
	}
	popular := rand.NewZipf(prog.r, 1.05, 1, uint64(len(population)-1))
	var files [][]byte
	for range 40 {
		p := &pprof.Profile{
			SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &pprof.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:     10_000_000,
			Mapping:    []*pprof.Mapping{{ID: 1, File: "/app/server", HasFunctions: true}},
		}
		locs := map[uint32]*pprof.Location{}
		location := func(f uint32) *pprof.Location {
			if l, ok := locs[f]; ok {
				return l
			}
			fn := &pprof.Function{ID: uint64(len(p.Function) + 1), Name: fmt.Sprintf("pkg%d.Function%d", f%100, f), Filename: fmt.Sprintf("pkg%d/file.go", f%100)}
			l := &pprof.Location{ID: uint64(len(p.Location) + 1), Mapping: p.Mapping[0], Address: uint64(f) * 16, Line: []pprof.Line{{Function: fn, Line: int64(f)}}}
			p.Function = append(p.Function, fn)
			p.Location = append(p.Location, l)
			locs[f] = l
			return l
		}
		samples := map[uint64]*pprof.Sample{}
		for range 20_000 {
			i := popular.Uint64()
			s, ok := samples[i]
			if !ok {
				s = &pprof.Sample{Value: []int64{0, 0}}
				stack := population[i]
				for j := len(stack) - 1; j >= 0; j-- { // pprof lists the leaf first
					s.Location = append(s.Location, location(stack[j]))
				}
				samples[i] = s
				p.Sample = append(p.Sample, s)
			}
			s.Value[0]++
			s.Value[1] += p.Period
		}
		var out bytes.Buffer
		if err := p.Write(&out); err != nil {
			panic(err)
		}
		files = append(files, out.Bytes())
	}
	return files
})

// BenchmarkMerge40 merges the same 40 parsed profiles with the engine (an
// averaged 20 vs 20 diff tree) and with google/pprof's profile.Merge.
func BenchmarkMerge40(b *testing.B) {
	files := pprofRunsSynthetic()
	b.Run("flamediff", func(b *testing.B) {
		var runs []*profile.Profile
		for i, data := range files {
			p, err := ingest.Parse(bytes.NewReader(data), fmt.Sprint("run", i), ingest.Pprof)
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, p)
		}
		b.ReportAllocs()
		for b.Loop() {
			builder := NewBuilder(NewFrames())
			for i, p := range runs {
				if err := addProfile(builder, Side(i%2), p); err != nil {
					b.Fatal(err)
				}
			}
			builder.SetRuns(Base, len(runs)/2)
			builder.SetRuns(Head, len(runs)-len(runs)/2)
			if _, err := builder.Build(Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pprof.Merge", func(b *testing.B) {
		var runs []*pprof.Profile
		for _, data := range files {
			p, err := pprof.ParseData(data)
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, p)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pprof.Merge(runs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBuildAround is the cost of the views around a culprit on the
// diff of BenchmarkBuildDiffStats (per-run values, maxNodes 20,000): the
// plain diff, both sandwich trees of a function in about a fifth of the
// stacks, and the filters (a third of the frames hidden; the stacks
// through a tenth of the frames kept).
func BenchmarkBuildAround(b *testing.B) {
	runs, _ := diffRuns()
	rows := runs.Functions(Options{})
	root := 0.0
	for _, r := range rows {
		root = max(root, r.HeadTotal)
	}
	fn := rows[0].Name
	for _, r := range rows {
		if r.HeadTotal < root/2 && r.HeadTotal > root/10 {
			fn = r.Name
			break
		}
	}
	filter := func(spec FilterSpec) *Filter {
		f, err := NewFilter(spec)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"diff", Options{}},
		{"callers", Options{Sandwich: Sandwich{Function: fn, Callers: true}}},
		{"callees", Options{Sandwich: Sandwich{Function: fn}}},
		{"hide", Options{Filter: filter(FilterSpec{Hide: `Function\d*[147]$`})}},
		{"keep", Options{Filter: filter(FilterSpec{Keep: `Function\d*7$`})}},
	} {
		c.o.MaxNodes = 20_000
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var t *Tree
			for b.Loop() {
				var err error
				if t, err = runs.Build(c.o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(t.Len()), "nodes")
		})
	}
}
