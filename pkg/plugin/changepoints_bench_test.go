package plugin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
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
			if err := store.Write(ctx, meta, p, nil); err != nil {
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

// BenchmarkOverTimeScale measures issue 30's "Builds" target: the
// changepoints, evolution and timeseries queries over 12, 96 and 365
// builds (one app each) of 5 runs x 20,000 distinct stacks over 2,000
// functions, every stack's value with 3% noise per run and a tenth of the
// stacks 10% slower from the middle build on. Each op is one query on a
// fresh plugin process (a cold data source instance), so its peak memory
// is the query's; it reports ms, peak-MB, and ClickHouse's rows read
// against the rows returned (system.query_log). With
// FLAMEDIFF_SCALE_OLD_PLUGIN naming another build of the plugin (say
// main's: go build -o /tmp/old ./pkg), each op runs the same query on it
// right after, reported as old-ms and old-peak-MB: old and new code
// alternate in one sitting. It loads about 47M sample rows, so it only
// runs when FLAMEDIFF_SCALE_BENCH is set (FLAMEDIFF_SCALE_BUILDS may list
// other build counts):
//
//	FLAMEDIFF_SCALE_BENCH=1 go test -run '^$' -bench OverTimeScale -benchtime 2x -timeout 60m ./pkg/plugin/
func BenchmarkOverTimeScale(b *testing.B) {
	if os.Getenv("FLAMEDIFF_SCALE_BENCH") == "" {
		b.Skip("set FLAMEDIFF_SCALE_BENCH=1 to load 47M sample rows and run it")
	}
	const runs, stacks, funcs = 5, 20_000, 2_000
	sizes := []int{12, 96, 365}
	if s := os.Getenv("FLAMEDIFF_SCALE_BUILDS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				b.Fatalf("FLAMEDIFF_SCALE_BUILDS: %q is no build count", f)
			}
			sizes = append(sizes, n)
		}
	}
	store, dsn := migratedStore(b)
	conn := chtest.Conn(b, dsn)
	ctx := context.Background()
	template := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
	var pool [][]uint32
	for _, frames := range benchPool(stacks, funcs) {
		stack := make([]uint32, len(frames))
		for i, f := range frames {
			stack[i] = template.Intern(f)
		}
		pool = append(pool, stack)
	}
	rng := rand.New(rand.NewPCG(30, 1))
	start := time.Now()
	for _, builds := range sizes {
		app := fmt.Sprintf("scale-%d", builds)
		for bi := range builds {
			var in []storage.RunProfile
			for ri := range runs {
				p := &profile.Profile{SampleType: template.SampleType, Unit: template.Unit, Duration: template.Duration,
					Frames: template.Frames, Samples: make([]profile.Sample, len(pool))}
				for k, stack := range pool {
					v := 1e6 * (1 + 0.03*rng.NormFloat64())
					if bi >= builds/2 && k%10 == 0 {
						v *= 1.1
					}
					p.Samples[k] = profile.Sample{Stack: stack, Value: int64(v)}
				}
				in = append(in, storage.RunProfile{Profile: p, Meta: storage.RunMeta{App: app,
					Build: fmt.Sprintf("b%03d", bi), Run: fmt.Sprintf("r%d", ri),
					Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(bi)*24*time.Hour + time.Duration(ri)*time.Minute)}})
			}
			if err := store.WriteRuns(ctx, in, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("loaded %v builds x %d runs x %d stacks in %v", sizes, runs, stacks, time.Since(start).Round(time.Second))
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	settings.JSONData["queryTimeout"] = 900 // report the time however long it is
	old := os.Getenv("FLAMEDIFF_SCALE_OLD_PLUGIN")

	// cold runs one query on a fresh plugin process: its time, peak
	// memory, and the rows ClickHouse read and returned for it, or the
	// query's error.
	cold := func(b *testing.B, binary, q string) (ms, peakMB float64, read, returned uint64, err error) {
		plugin := plugintest.Start(b, binary)
		// query_log's times are in whole seconds: start on a new one.
		since := time.Now().Truncate(time.Second).Add(time.Second)
		time.Sleep(time.Until(since))
		t0 := time.Now()
		resp, err := plugin.QueryData(ctx, settings, plugintest.Query{RefID: "A", JSON: q})
		ms = float64(time.Since(t0).Microseconds()) / 1000
		if err != nil {
			b.Fatal(err)
		}
		n, err := plugin.PeakMemory()
		if err != nil {
			b.Fatal(err)
		}
		read, returned = queryLogRows(b, conn, since)
		return ms, float64(n) / (1 << 20), read, returned, resp.Responses["A"].Error
	}
	for _, builds := range sizes {
		for _, kind := range []string{"changepoints", "evolution", "timeseries"} {
			q := fmt.Sprintf(`{"queryType":%q,"app":"scale-%d"}`, kind, builds)
			b.Run(fmt.Sprintf("builds=%d/%s", builds, kind), func(b *testing.B) {
				var ms, peak, oldMs, oldPeak float64
				var read, returned, oldRead uint64
				oldFailed := false
				for b.Loop() {
					m, p, r, n, err := cold(b, pluginBinary, q)
					if err != nil {
						b.Fatal(err)
					}
					ms, peak, read, returned = ms+m, max(peak, p), r, n
					if old != "" {
						m, p, r, _, err := cold(b, old, q)
						if err != nil && !oldFailed { // an answer older code may not have had
							b.Logf("old plugin: %v after %.0f ms", err, m)
						}
						oldFailed = oldFailed || err != nil
						oldMs, oldPeak, oldRead = oldMs+m, max(oldPeak, p), r
					}
				}
				b.ReportMetric(ms/float64(b.N), "ms")
				b.ReportMetric(peak, "peak-MB")
				b.ReportMetric(float64(read), "rows-read")
				b.ReportMetric(float64(returned), "rows-returned")
				if old != "" {
					b.ReportMetric(oldMs/float64(b.N), "old-ms")
					b.ReportMetric(oldPeak, "old-peak-MB")
					b.ReportMetric(float64(oldRead), "old-rows-read")
				}
			})
		}
	}
}

// queryLogRows sums the rows that the SELECTs since a time (but its own)
// read and returned, from system.query_log (flushed first): the server
// must be the benchmark's alone.
func queryLogRows(b *testing.B, conn driver.Conn, since time.Time) (read, returned uint64) {
	ctx := context.Background()
	if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		b.Fatal(err)
	}
	err := conn.QueryRow(ctx, "SELECT sum(read_rows), sum(result_rows) FROM system.query_log"+
		" WHERE type = 2 AND is_initial_query AND event_time >= ? AND query LIKE 'SELECT%' AND query NOT LIKE '%query_log%'",
		since).Scan(&read, &returned)
	if err != nil {
		b.Fatal(err)
	}
	return read, returned
}
