package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/pkg/storage"
)

var (
	faultOnce   sync.Once
	faultBinary string // the data source built with -tags faultinject, on first use
	faultErr    error
)

// faultPlugin builds, once, the data source with its fault points armed
// by $FLAMEDIFF_FAULT (pkg/internal/fault).
func faultPlugin(t *testing.T) string {
	faultOnce.Do(func() {
		faultBinary, faultErr = plugintest.Build(moduleRoot, binDir, raceEnabled, "faultinject")
	})
	if faultErr != nil {
		t.Fatal(faultErr)
	}
	return faultBinary
}

// The big diff's stacks: enough for every part of the engine that works
// on another core to do so (the stack sort and the statistics from 4,096
// stacks or nodes, the layout from 2 x 32,768 nodes below one node); the
// test checks that each point was reached.
const panicStacks = 14_000

// loadPanicData loads a big diff (builds big-head and big-base) and a
// small one (small-head, small-base) of app "panic", two runs a side so
// that diffs have statistics.
func loadPanicData(t *testing.T) plugintest.Settings {
	t.Helper()
	store, dsn := migratedStore(t)
	ctx := context.Background()
	pool := benchPool(panicStacks, 2000)
	for bi, build := range []string{"big-base", "big-head", "small-base", "small-head"} {
		stacks := pool
		if strings.HasPrefix(build, "small") {
			stacks = pool[:200]
		}
		for ri, p := range benchProfiles(stacks, uint64(bi+1), 2, len(stacks), 1) {
			meta := storage.RunMeta{App: "panic", Build: build, Run: fmt.Sprintf("run-%d", ri),
				Start: time.Date(2026, 11, 1, bi, ri, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return settings
}

// TestPanicIsQueryError drives a real panic through the built plugin at
// each place a query's work can panic out of the caller's reach (the
// engine on another core, the stack reader) or on the query's own
// goroutine: the query answers 500, a plugin failure, not ClickHouse's;
// the process lives on and answers the next queries.
func TestPanicIsQueryError(t *testing.T) {
	bin := faultPlugin(t)
	settings := loadPanicData(t)
	diff := func(side string) plugintest.Query {
		return plugintest.Query{RefID: "A", JSON: fmt.Sprintf(`{"queryType":"diff","app":"panic",`+
			`"head":{"builds":["%s-head"]},"base":{"builds":["%[1]s-base"]},"maxNodes":%d}`, side, 2_000_000)}
	}
	runs := plugintest.Query{RefID: "A", JSON: `{"queryType":"runs","app":"panic","head":{"builds":["big-head"]},"base":{"builds":["big-base"]}}`}
	ask := func(t *testing.T, plugin *plugintest.Client, q plugintest.Query) backend.DataResponse {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := plugin.QueryData(ctx, settings, q)
		if err != nil {
			t.Fatalf("QueryData transport (did the plugin die?): %v", err)
		}
		return resp.Responses["A"]
	}
	// GOMAXPROCS=2: the layout goes aside only when a core is free, and
	// a test machine may have one.
	const procs = "GOMAXPROCS=2"

	t.Run("none", func(t *testing.T) { // the tagged binary, unarmed, answers the big diff
		plugin := plugintest.StartEnv(t, bin, "FLAMEDIFF_FAULT=", procs)
		r := ask(t, plugin, diff("big"))
		if r.Error != nil {
			t.Fatalf("big diff without faults: %v", r.Error)
		}
		t.Logf("big diff: %d nodes", r.Frames[0].Rows())
	})
	for _, c := range []struct {
		point string
		// engine: the point is in the engine's work on another core,
		// which a small diff does not reach.
		engine bool
	}{
		{"tree.sort", true},
		{"tree.layout", true},
		{"tree.stats", true},
		{"frames.runs", true},
		{"query.stackreader", false},
		{"query.render", false},
	} {
		t.Run(c.point, func(t *testing.T) {
			plugin := plugintest.StartEnv(t, bin, "FLAMEDIFF_FAULT="+c.point, procs)
			pid := plugin.Pid()
			r := ask(t, plugin, diff("big"))
			if r.Error == nil {
				t.Fatalf("the big diff succeeded: %s was not reached", c.point)
			}
			msg := r.Error.Error()
			t.Logf("answer: %d %s: %.200s", r.Status, r.ErrorSource, msg)
			if r.Status != backend.StatusInternal || r.ErrorSource != backend.ErrorSourcePlugin ||
				!strings.Contains(msg, "internal error") || !strings.Contains(msg, "fault injected at "+c.point) ||
				strings.Contains(msg, "ClickHouse") || strings.Contains(msg, "goroutine ") {
				t.Errorf("panic at %s answered %d (%s) %.300q, want 500, a plugin error naming the panic (no stack trace), not ClickHouse",
					c.point, r.Status, r.ErrorSource, msg)
			}
			// The same process answers what does not reach the point.
			res, err := plugin.CheckHealth(context.Background(), settings)
			if err != nil || res.Status != backend.HealthStatusOk {
				t.Errorf("health after the panic: %v %v", res, err)
			}
			if r := ask(t, plugin, runs); r.Error != nil || len(r.Frames) != 2 {
				t.Errorf("runs query after the panic: %v (%d frames)", r.Error, len(r.Frames))
			}
			if c.engine {
				if r := ask(t, plugin, diff("small")); r.Error != nil || len(r.Frames) != 2 || r.Frames[0].Rows() < 100 { // the tree and its culprits
					t.Errorf("small diff after the panic: %v", r.Error)
				}
			}
			if plugin.Exited() || plugin.Pid() != pid {
				t.Errorf("the plugin process %d died (exited %v, now %d)", pid, plugin.Exited(), plugin.Pid())
			}
		})
	}
}
