package plugin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// BenchmarkChangePoints measures the changepoints query end to end over
// go-plugin (issue 16's target: under 2 s) on 12 builds x 10 runs of
// 20,000 distinct stacks over 2,000 functions (2.4M sample rows; 200 stacks
// with -short), every
// stack's value drawn with 3% noise per run, and a third of the stacks
// 10% slower from build 6 on. Each op asks for every function
// (minShare 0, 2,000 series) and for the default floor. Run with:
//
//	go test -run '^$' -bench ChangePoints -benchtime 5x -timeout 30m ./pkg/plugin/
func BenchmarkChangePoints(b *testing.B) {
	const builds, runs, funcs = 12, 10, 2_000
	store, dsn := migratedStore(b)
	ctx := context.Background()
	pool := benchPool(benchScale(20_000), funcs)
	rng := rand.New(rand.NewPCG(5, 6))
	for bi := range builds {
		for ri := range runs {
			p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
			ids := map[profile.Frame]uint32{}
			for k, frames := range pool {
				stack := make([]uint32, len(frames))
				for i, f := range frames {
					id, ok := ids[f]
					if !ok {
						id = p.Intern(f)
						ids[f] = id
					}
					stack[i] = id
				}
				v := 1e6 * (1 + 0.03*rng.NormFloat64())
				if bi >= 6 && k%3 == 0 {
					v *= 1.1
				}
				p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: int64(v)})
			}
			meta := storage.RunMeta{App: "cp", Build: fmt.Sprintf("b%02d", bi), Run: fmt.Sprintf("r%02d", ri),
				Start: time.Date(2026, 11, 1, bi, ri, 0, 0, time.UTC)}
			if err := store.Ingest(ctx, meta, p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	f := startOn(b, dsn)
	for _, minShare := range []float64{0, 0.01} {
		b.Run(fmt.Sprintf("minShare=%v", minShare), func(b *testing.B) {
			model := map[string]any{"queryType": "changepoints", "app": "cp", "minShare": minShare}
			var rows int
			for b.Loop() {
				rows = f.oneFrame(b, model).Rows()
			}
			b.ReportMetric(float64(rows), "changes")
		})
	}
}
