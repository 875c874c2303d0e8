package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/internal/teststore"
)

// Every query type answers the same frames from Distributed tables on two
// shards as from one server holding the same runs.
func TestClusterFramesMatchSingleNode(t *testing.T) {
	both := func(load func(*testing.T, bool) *fixture, models ...map[string]any) {
		single, cluster := load(t, false), load(t, true)
		for _, m := range models {
			want, got := single.mustQuery(t, m), cluster.mustQuery(t, m)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%v: %d frames from the cluster, %d from one server", m["queryType"], len(got), len(want))
			}
			for i := range want {
				if g, w := mustJSON(t, got[i]), mustJSON(t, want[i]); g != w {
					t.Errorf("%v frame %d differs:\n cluster %.600s\n single  %.600s", m["queryType"], i, g, w)
				}
			}
		}
	}
	pair := func(qt string) map[string]any {
		return map[string]any{"queryType": qt, "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
	}
	inverted := pair("diff")
	inverted["inverted"] = true
	both(loadPprofOn, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)},
		pair("diff"), inverted, pair("functions"), pair("runs"))
	both(loadOverTimeOn, map[string]any{"queryType": "evolution", "app": overTimeApp, "threshold": 0},
		map[string]any{"queryType": "timeseries", "app": overTimeApp, "function": "app/slow.Work", "baseline": "previous"})
}

// Health on a cluster: OK with a summary of the shards; an error naming the
// cause for a distributed override that contradicts the tables, a local
// table missing on a shard, and a shard that is down.
func TestClusterHealth(t *testing.T) {
	f := loadPprofOn(t, true)
	ctx := context.Background()
	calls := 0
	health := func(s map[string]any) *backend.CheckHealthResult {
		t.Helper()
		calls++
		settings := copySettings(f.settings)
		settings.UID = fmt.Sprintf("cluster-health-%d", calls) // a fresh instance each time
		for k, v := range s {
			settings.JSONData[k] = v
		}
		res, err := f.plugin.CheckHealth(ctx, settings)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := health(nil); res.Status != backend.HealthStatusOk || !strings.Contains(res.Message, "cluster "+chtest.ClusterName+": 2 shards") {
		t.Errorf("healthy cluster: %v %q", res.Status, res.Message)
	}
	if res := health(map[string]any{"distributed": false}); res.Status != backend.HealthStatusError ||
		!strings.Contains(res.Message, "distributed setting is off but 8 tables are Distributed") {
		t.Errorf("distributed: false on a cluster: %v %q", res.Status, res.Message)
	}

	shard := chtest.ClusterShards(t)[1]
	db := f.settings.JSONData["defaultDatabase"].(string)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{shard.Addr}, Auth: clickhouse.Auth{Database: db}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "RENAME TABLE samples_local TO samples_elsewhere"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("shard 2 replica 1 (%s) of cluster %s lacks local tables %s.samples_local", shard.Addr, chtest.ClusterName, db)
	if res := health(nil); res.Status != backend.HealthStatusError || !strings.Contains(res.Message, want) {
		t.Errorf("local table missing: %v %q, want %q", res.Status, res.Message, want)
	}
	if err := conn.Exec(ctx, "RENAME TABLE samples_elsewhere TO samples_local"); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		if err := shard.Restart(context.Background()); err != nil && !strings.Contains(err.Error(), "is running") {
			t.Error(err)
		}
	})
	shard.Kill()
	want = fmt.Sprintf("shard 2 replica 1 (%s) of cluster %s is down", shard.Addr, chtest.ClusterName)
	if res := health(nil); res.Status != backend.HealthStatusError || !strings.Contains(res.Message, want) {
		t.Errorf("shard down: %v %q, want %q", res.Status, res.Message, want)
	}
}

// The single-server data source is told off for forcing GLOBAL IN.
func TestHealthDistributedOverrideOnOneServer(t *testing.T) {
	_, dsn := teststore.Fresh(t, false)
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	settings.JSONData["distributed"] = true
	res, err := plugintest.Start(t, pluginBinary).CheckHealth(context.Background(), settings)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != backend.HealthStatusError || !strings.Contains(res.Message, "distributed setting is on but no table is Distributed") {
		t.Errorf("distributed: true on one server: %v %q", res.Status, res.Message)
	}
}

// A representative part of the suite runs on the cluster in every run
// (FLAMEDIFF_CLICKHOUSE_CLUSTER=1 runs all of it there).
func TestSuiteOnCluster(t *testing.T) {
	t.Setenv(chtest.ClusterEnv, "1")
	for _, test := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"DiffEqualsCLI", TestDiffEqualsCLI}, {"Resources", TestResources}, {"CheckHealth", TestCheckHealth},
		{"EvolutionOverGRPC", TestEvolutionOverGRPC}, {"AroundTheCulprit", TestAroundTheCulprit},
	} {
		t.Run(test.name, test.run)
	}
}
