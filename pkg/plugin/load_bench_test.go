package plugin_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Scale of issue 13's load figures: 2 builds x 5 runs, every run with
// each of 500k distinct stacks in 2 time frames (10M sample rows).
const (
	loadStacks       = 500_000
	loadRunsPerBuild = 5
	loadFrames       = 2
	loadConcurrency  = 16
)

// BenchmarkUnderLoad measures, each op on a fresh plugin process (so its
// peak memory is the op's): 16 concurrent diffs of the two builds on one
// cold data source instance, which must all answer or be told the data
// source is busy (503); and a cold evolution query over the 10 runs.
// Run with:
//
//	go test -run '^$' -bench UnderLoad -benchtime 1x -timeout 60m ./pkg/plugin/
func BenchmarkUnderLoad(b *testing.B) {
	store, dsn := migratedStore(b)
	ctx := context.Background()
	stacks := benchScale(loadStacks)
	pool := benchPool(stacks, 5000)
	start := time.Now()
	for bi, build := range []string{"base", "head"} {
		for ri, p := range benchProfiles(pool, uint64(bi+1), loadRunsPerBuild, stacks, loadFrames) {
			meta := storage.RunMeta{App: "load", Build: build, Run: fmt.Sprintf("run-%02d", ri),
				Start: time.Date(2026, 11, 1+bi, 0, ri, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("loaded %d runs of %d stacks in %v", 2*loadRunsPerBuild, stacks, time.Since(start).Round(time.Second))
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	peak := func(p *plugintest.Client) float64 {
		n, err := p.PeakMemory()
		if err != nil {
			b.Fatal(err)
		}
		return float64(n) / (1 << 20)
	}

	b.Run("16-cold-diffs", func(b *testing.B) {
		q := plugintest.Query{RefID: "A", JSON: `{"queryType":"diff","app":"load","head":{"builds":["head"]},"base":{"builds":["base"]}}`}
		var ok, busy int
		seen := map[string]bool{}
		var peakMB float64
		for b.Loop() {
			plugin := plugintest.Start(b, pluginBinary)
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range loadConcurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := plugin.QueryData(ctx, settings, q)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						b.Errorf("transport: %v", err)
					case resp.Responses["A"].Error == nil:
						ok++
					case resp.Responses["A"].Status == backend.Status(503):
						busy++
						if msg := resp.Responses["A"].Error.Error(); !seen[msg[:min(40, len(msg))]] {
							seen[msg[:min(40, len(msg))]] = true
							b.Logf("%v", msg)
						}
					default:
						b.Errorf("diff failed: %v %v", resp.Responses["A"].Status, resp.Responses["A"].Error)
					}
				}()
			}
			wg.Wait()
			peakMB = max(peakMB, peak(plugin))
		}
		b.ReportMetric(float64(ok)/float64(b.N), "answered/op")
		b.ReportMetric(float64(busy)/float64(b.N), "busy/op")
		b.ReportMetric(peakMB, "peak-MB")
	})

	// With FLAMEDIFF_SCALE_OLD_PLUGIN (see BenchmarkOverTimeScale), each
	// op also runs the evolution on that build of the plugin, right after.
	b.Run("cold-evolution", func(b *testing.B) {
		q := plugintest.Query{RefID: "A", JSON: `{"queryType":"evolution","app":"load","threshold":0.01}`}
		slow := copySettings(settings)
		slow.JSONData["queryTimeout"] = 900 // report the time however long it is
		cold := func(binary string) (ms, peakMB float64) {
			plugin := plugintest.Start(b, binary)
			t0 := time.Now()
			resp, err := plugin.QueryData(ctx, slow, q)
			ms = float64(time.Since(t0).Microseconds()) / 1000
			if err != nil || resp.Responses["A"].Error != nil {
				b.Fatal(err, resp.Responses["A"].Error)
			}
			return ms, peak(plugin)
		}
		old := os.Getenv("FLAMEDIFF_SCALE_OLD_PLUGIN")
		var ms, peakMB, oldMs, oldPeakMB float64
		for b.Loop() {
			m, p := cold(pluginBinary)
			ms, peakMB = ms+m, max(peakMB, p)
			if old != "" {
				m, p := cold(old)
				oldMs, oldPeakMB = oldMs+m, max(oldPeakMB, p)
			}
		}
		b.ReportMetric(ms/float64(b.N), "ms")
		b.ReportMetric(peakMB, "peak-MB")
		if old != "" {
			b.ReportMetric(oldMs/float64(b.N), "old-ms")
			b.ReportMetric(oldPeakMB, "old-peak-MB")
		}
	})
}
