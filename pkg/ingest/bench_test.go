package ingest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	pprof "github.com/google/pprof/profile"
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
