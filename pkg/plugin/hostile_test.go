package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// TestHostileQueries: SQL metacharacters in every string field, absurd
// numbers, unknown types and malformed JSON each give an error or an
// empty answer, and the plugin keeps serving.
func TestHostileQueries(t *testing.T) {
	f := loadPprof(t)
	evil := []string{`'`, `"`, `\`, "`", `'; DROP TABLE runs; --`, `%`, `_`, "\x00", `') OR 1=1 --`, "名前", strings.Repeat("x", 2000)}
	fields := []func(m map[string]any, s string){
		func(m map[string]any, s string) { m["app"] = s },
		func(m map[string]any, s string) { m["profileType"] = s },
		func(m map[string]any, s string) { m["head"] = map[string]any{"builds": []string{s}} },
		func(m map[string]any, s string) {
			m["head"] = map[string]any{"builds": []string{hostileHead}, "runs": []string{s}}
		},
		func(m map[string]any, s string) { m["base"] = map[string]any{"builds": []string{s}} },
		func(m map[string]any, s string) { m["builds"] = []string{s} },
		func(m map[string]any, s string) { m["function"] = s },
		func(m map[string]any, s string) { m["baseline"] = s },
	}
	for _, qt := range []string{"flamegraph", "diff", "functions", "runs", "evolution", "timeseries"} {
		for fi, set := range fields {
			for _, s := range evil {
				m := map[string]any{"queryType": qt, "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
				set(m, s)
				r := f.query(t, m)
				if r.Error == nil && len(r.Frames) == 0 {
					t.Errorf("%s field %d %q: neither error nor frames", qt, fi, s)
				}
			}
		}
	}
	ctx := context.Background()
	raw := []string{`{`, `[]`, `null`, `{"queryType": 7}`, `{"queryType":"drop"}`, `{"queryType":"diff","app":"x","maxNodes":-1}`,
		`{"queryType":"diff","app":"x","head":{"builds":"notalist"}}`, `{"queryType":"evolution","app":"x","threshold":5}`}
	for _, js := range raw {
		resp, err := f.plugin.QueryData(ctx, f.settings, plugintest.Query{RefID: "A", JSON: js})
		if err != nil {
			t.Fatalf("%s: transport error %v", js, err)
		}
		r := resp.Responses["A"]
		if r.Error == nil || r.Status != backend.StatusBadRequest {
			t.Errorf("%s: got status %v error %v, want a bad request", js, r.Status, r.Error)
		}
	}
	// A huge maxNodes is taken (clamped to the cap: TestHugeMaxNodesIsClamped).
	big := f.mustQuery(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase), "maxNodes": 1e15})
	if n, _ := big[0].RowLen(); n == 0 {
		t.Error("huge maxNodes gave an empty tree")
	}
	// Unknown names are explained.
	r := f.query(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel("9.9.9"), "base": sel(hostileBase)})
	if r.Error == nil || !strings.Contains(r.Error.Error(), "unknown build") || r.Status != backend.StatusNotFound {
		t.Errorf("unknown build: %v %v", r.Status, r.Error)
	}
	if f.plugin.Exited() {
		t.Fatal("the plugin died")
	}
	// Still serving.
	f.mustQuery(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})
}

// TestHugeMaxNodesIsClamped: a maxNodes above the documented cap of
// 2,000,000 (docs/QUERIES.md) counts as the cap. The run's stacks hold
// 2.1M frames, so only the clamp bounds its tree by the cap; the query's
// memory check, which sizes the tree by that bound, then refuses it with
// the bound in its message (2,000,000 nodes of 400 bytes are above a
// 640 MB budget), which shows the clamp without a 2M-node answer.
func TestHugeMaxNodesIsClamped(t *testing.T) {
	const stacks, depth = 1000, 2100
	store, dsn := migratedStore(t)
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
	deep := p.Intern(profile.Frame{Name: "deep"})
	for i := range stacks {
		stack := []uint32{p.Intern(profile.Frame{Name: fmt.Sprintf("top%d", i)})}
		for range depth - 1 {
			stack = append(stack, deep)
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: 10_000_000})
	}
	meta := storage.RunMeta{App: "clamp", Build: "deep", Run: "run-1", Start: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	if err := store.Write(context.Background(), meta, p, nil); err != nil {
		t.Fatal(err)
	}
	f := startOn(t, dsn)
	f.settings.JSONData["maxQueryMemory"] = 640
	r := f.query(t, map[string]any{"queryType": "flamegraph", "app": "clamp", "head": sel("deep"), "maxNodes": 1e15})
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "up to 2000000 nodes") {
		t.Errorf("maxNodes 1e15 on %d stack frames: %v %v, want 400 for a tree of up to 2000000 nodes", stacks*depth, r.Status, r.Error)
	}
}

// TestClickHouseDownAndTimeout: a dead server and a too-short timeout give
// per-query errors, not a crash.
func TestClickHouseDownAndTimeout(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	down := copySettings(f.settings)
	down.UID, down.JSONData["port"], down.JSONData["dialTimeout"] = "down", closedPort(t), 1
	q := plugintest.Query{RefID: "A", JSON: mustJSON(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})}
	resp, err := f.plugin.QueryData(ctx, down, q, plugintest.Query{RefID: "B", JSON: q.JSON})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"A", "B"} {
		if r := resp.Responses[ref]; r.Error == nil || !strings.Contains(r.Error.Error(), "ClickHouse") || r.Status != backend.StatusBadGateway {
			t.Errorf("%s with ClickHouse down: %v %v", ref, r.Status, r.Error)
		}
	}
	slow := copySettings(f.settings)
	slow.UID, slow.JSONData["queryTimeout"] = "slow", "0.000001"
	resp, err = f.plugin.QueryData(ctx, slow, q)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Responses["A"]; r.Error == nil || r.Status != backend.StatusTimeout {
		t.Errorf("tiny timeout: %v %v", r.Status, r.Error)
	}
	f.mustQuery(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})
}
