package tree

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// stopTestBuilder is an averaged tree of 200k distinct stacks: big enough
// that its layout runs on two cores.
func stopTestBuilder() *Builder {
	p := newProgram(7, 5_000)
	b := NewBuilder(NewFrames())
	for i := range 5_000 {
		b.frames.Intern(fmt.Sprintf("f%d", i), "")
	}
	var buf []uint32
	for b.Stacks() < 200_000 {
		buf = p.stack(buf)
		b.Add(Head, b.Stack(buf), 1, uint64(b.Stacks()))
	}
	b.SetRuns(Head, 1)
	return b
}

func TestStopWhenAbandonsBuild(t *testing.T) {
	b := stopTestBuilder()
	if n := mustBuild(t, b, Options{}).Len(); n < 200_000 {
		t.Fatalf("full tree has %d nodes", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.StopWhen(ctx)
	cancel()
	time.Sleep(10 * time.Millisecond) // context.AfterFunc runs on its own goroutine
	if tr := mustBuild(t, b, Options{}); tr.Len() != 1 || tr.Nodes[0].Frame != RootFrame {
		t.Errorf("Build after its context ended laid out %d nodes, want the root alone", tr.Len())
	}
}

// A panic on the second core reaches the caller's goroutine, where a
// recover can turn it into an error, instead of killing the process.
func TestPanicOnAnotherCoreReachesCaller(t *testing.T) {
	s := make([]uint32, 1<<13)
	for i := range s {
		s[i] = uint32(i)
	}
	defer func() {
		p := recover()
		cp, ok := p.(*CorePanic)
		if !ok || fmt.Sprint(p) != "left half broke (on another core)" {
			t.Fatalf("recovered %v, want the left half's panic", p)
		}
		// the message stays short; the stack where it broke is kept for the log
		if !strings.Contains(string(cp.Stack), "sortInHalves") {
			t.Errorf("carried stack lacks the goroutine that panicked:\n%s", cp.Stack)
		}
	}()
	compare := func(x, y uint32) int {
		if x == 1 || y == 1 { // in the half sorted on the other goroutine
			panic("left half broke")
		}
		return int(x) - int(y)
	}
	sortInHalves(s, func(s []uint32) { slices.SortFunc(s, compare) }, compare)
	t.Error("sortInHalves returned")
}

// BenchmarkStopLatency is how long a Build goes on once its context ends
// a quarter into its work (the target is a fraction of a second).
func BenchmarkStopLatency(b *testing.B) {
	builder := stopTestBuilder()
	start := time.Now()
	builder.Build(Options{})
	full := time.Since(start)
	b.ReportMetric(float64(full.Microseconds())/1000, "build-ms")
	var total time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		builder.StopWhen(ctx)
		done := make(chan time.Time)
		go func() {
			builder.Build(Options{})
			done <- time.Now()
		}()
		time.Sleep(full / 4)
		at := time.Now()
		cancel()
		total += (<-done).Sub(at)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "stop-ms")
}
