package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// generate makes a timed CPU profile with the given numbers of samples and
// distinct stacks (depth 20-40, from 5,000 functions in 50 modules), and
// returns it with the size of its folded text, one line per sample.
func generate(samples, stacks int) (*profile.Profile, int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Duration(samples) * time.Millisecond}
	funcs := make([]uint32, 5000)
	for i := range funcs {
		funcs[i] = p.Intern(profile.Frame{
			Name:   fmt.Sprintf("github.com/example/pkg%03d.(*Type%d).Method%d", i%300, i%17, i),
			Module: fmt.Sprintf("/usr/lib/libexample%02d.so", i%50),
		})
	}
	distinct := make([][]uint32, stacks)
	lineLen := make([]int, stacks)
	for i := range distinct {
		depth := 20 + rng.IntN(21)
		for range depth {
			f := funcs[rng.IntN(len(funcs))]
			distinct[i] = append(distinct[i], f)
			lineLen[i] += len(p.Frames[f].Name) + 1
		}
	}
	var size int64
	p.Samples = make([]profile.Sample, samples)
	for i := range p.Samples {
		k := rng.IntN(stacks)
		v := int64(1_000_000 + rng.IntN(1000))
		p.Samples[i] = profile.Sample{Stack: distinct[k], Value: v, Time: int64(i) * int64(time.Millisecond)}
		size += int64(lineLen[k] + len(strconv.FormatInt(v, 10)) + 1)
	}
	return p, size
}

// BenchmarkIngest ingests 1M samples over 50k distinct stacks (depth ~30)
// into the real server (a tenth of both with -short, as the test command
// runs it). MB/s is of the folded text (one line per sample).
func BenchmarkIngest(b *testing.B) {
	samples, stacks := 1_000_000, 50_000
	if testing.Short() {
		samples, stacks = samples/10, stacks/10
	}
	p, size := generate(samples, stacks)
	s := newStore(b, Options{})
	b.SetBytes(size)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := s.Write(context.Background(), meta("bench", "1.0", strconv.Itoa(i)), p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p.Samples)*b.N)/time.Since(start).Seconds(), "samples/s")
}
