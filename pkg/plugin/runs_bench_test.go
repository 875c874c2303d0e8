package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Scale of issue 30's runs figures: 50,000 stacks, every stack in every
// run, up to 100 runs a side.
const runsStacks = 50_000

var runsCounts = []int{5, 20, 50, 100}

// BenchmarkDiffRuns measures a diff with statistics and culprits against
// the number of runs a side, every run holding every stack: per count, a
// fresh plugin process with default settings answers it cold, then warm
// (ms/op each), and its peak resident memory is read after both (peak-MB,
// and B/row: the peak's growth over the idle process per (run, stack)
// row). A diff the default maxQueryMemory or maxStacks refuses counts in
// refused/op and is measured with a budget of 4 GB and no row cap
// instead. The exponents of cold and warm time between the fewest and
// most runs are logged (-v; 1 is linear). The full data set (10M sample
// rows) is loaded only when FLAMEDIFF_SCALE_BENCH is set; the test
// command's -short run uses 500 stacks and 2 and 4 runs. With
// FLAMEDIFF_BENCH_BEFORE (see benchPlugins) each count also runs on that
// plugin, as runs-N-before.
//
//	FLAMEDIFF_SCALE_BENCH=1 go test -v -run '^$' -bench DiffRuns -benchtime 1x -timeout 60m ./pkg/plugin/
func BenchmarkDiffRuns(b *testing.B) {
	nStacks, counts := runsStacks, runsCounts
	if testing.Short() {
		nStacks, counts = runsStacks/100, []int{2, 4}
	} else if os.Getenv("FLAMEDIFF_SCALE_BENCH") == "" {
		b.Skip("loads 10M sample rows: set FLAMEDIFF_SCALE_BENCH=1")
	}
	most := counts[len(counts)-1]
	store, dsn := migratedStore(b)
	ctx := context.Background()
	pool := benchPool(nStacks, 2000)
	start := time.Now()
	for bi, build := range []string{"base", "head"} {
		for ri := range most {
			p := benchProfiles(pool, uint64(1000*bi+ri+1), 1, nStacks, 1)[0]
			meta := storage.RunMeta{App: "runs", Build: build, Run: runName(ri),
				Start: time.Date(2026, 11, 1+bi, 0, ri, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("loaded %d runs of %d stacks in %v", 2*most, nStacks, time.Since(start).Round(time.Second))
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	roomy := copySettings(settings)
	roomy.JSONData["maxQueryMemory"], roomy.JSONData["maxStacks"] = 4096, 100_000_000

	type figures struct{ cold, warm time.Duration }
	measured := map[string]figures{}
	for _, n := range counts {
		for i, start := range benchPlugins(b) {
			name := fmt.Sprintf("runs-%d", n)
			if i > 0 {
				name += "-before"
			}
			var names []string
			for ri := range n {
				names = append(names, runName(ri))
			}
			model := map[string]any{"queryType": "diff", "app": "runs",
				"head": map[string]any{"builds": []string{"head"}, "runs": names},
				"base": map[string]any{"builds": []string{"base"}, "runs": names}}
			q := plugintest.Query{RefID: "A", JSON: mustJSON(b, model)}
			b.Run(name, func(b *testing.B) {
				var cold, warm time.Duration
				var peak, grown float64
				refused := 0
				for b.Loop() {
					plugin := start()
					idle := peakBytes(b, plugin)
					s := settings
					// diff answers the query, adding its time to *total.
					diff := func(total *time.Duration) error {
						t0 := time.Now()
						frs, err := diffFrames(ctx, plugin, s, q)
						*total += time.Since(t0)
						if err == nil {
							checkDiff(b, frs, n)
						}
						return err
					}
					var first time.Duration
					err := diff(&first)
					if errors.Is(err, errRefused) {
						refused++
						s, first = roomy, 0
						s.Updated = time.Now() // a new instance, cold again
						err = diff(&first)
					}
					cold += first
					if err == nil {
						err = diff(&warm)
					}
					if err != nil {
						b.Fatal(err)
					}
					p := peakBytes(b, plugin)
					peak, grown = max(peak, p), max(grown, p-idle)
				}
				rows := float64(2 * n * nStacks)
				b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms/op")
				b.ReportMetric(float64(warm.Milliseconds())/float64(b.N), "warm-ms/op")
				b.ReportMetric(peak/(1<<20), "peak-MB")
				b.ReportMetric(grown/rows, "B/row")
				b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
				measured[name] = figures{cold / time.Duration(b.N), warm / time.Duration(b.N)}
			})
		}
	}
	for _, suffix := range []string{"", "-before"} {
		first, last := measured[fmt.Sprintf("runs-%d%s", counts[0], suffix)], measured[fmt.Sprintf("runs-%d%s", most, suffix)]
		if first.cold > 0 && last.cold > 0 {
			x := math.Log(float64(most) / float64(counts[0]))
			b.Logf("from %d to %d runs a side%s: cold time grows with exponent %.2f, warm with %.2f", counts[0], most, suffix,
				math.Log(float64(last.cold)/float64(first.cold))/x, math.Log(float64(last.warm)/float64(first.warm))/x)
		}
	}
}

func runName(i int) string { return fmt.Sprintf("run-%03d", i) }

// errRefused is a query the data source refused as too big.
var errRefused = errors.New("refused")

// diffFrames runs a diff query on the plugin and returns its frames.
func diffFrames(ctx context.Context, p *plugintest.Client, s plugintest.Settings, q plugintest.Query) ([]*data.Frame, error) {
	resp, err := p.QueryData(ctx, s, q)
	if err != nil {
		return nil, err
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		if msg := r.Error.Error(); strings.Contains(msg, "maxQueryMemory") || strings.Contains(msg, "too many rows") {
			return nil, fmt.Errorf("%w: %v", errRefused, r.Error)
		}
		return nil, r.Error
	}
	return r.Frames, nil
}

// checkDiff fails unless frs hold a tree with statistics over runs runs
// a side, and a culprits frame.
func checkDiff(b *testing.B, frs []*data.Frame, runs int) {
	b.Helper()
	var tree, culprits bool
	for _, fr := range frs {
		switch {
		case fr.Name == frames.FrameCulprits:
			culprits = true
		case fr.Meta != nil:
			custom, _ := fr.Meta.Custom.(map[string]any)
			q, _ := fr.FieldByName(frames.FieldQValue)
			tree = q != nil && fr.Rows() > 1 && fmt.Sprint(custom[frames.MetaHeadRuns]) == fmt.Sprint(runs)
		}
	}
	if !tree || !culprits {
		b.Fatalf("diff of %d runs a side: tree with statistics %v, culprits frame %v", runs, tree, culprits)
	}
}

// peakBytes is the plugin process's peak resident memory so far.
func peakBytes(b *testing.B, p *plugintest.Client) float64 {
	b.Helper()
	n, err := p.PeakMemory()
	if err != nil {
		b.Fatal(err)
	}
	return float64(n)
}
