package plugin_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
)

func TestCheckHealth(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	res, err := f.plugin.CheckHealth(ctx, f.settings)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != backend.HealthStatusOk || !strings.Contains(res.Message, "ClickHouse 18.") && !strings.Contains(res.Message, "ClickHouse 2") {
		t.Errorf("healthy data source: %v %q", res.Status, res.Message)
	}

	for i, c := range healthFailures(t) {
		t.Run(c.name, func(t *testing.T) {
			s := copySettings(f.settings)
			s.UID = fmt.Sprintf("health-%d", i)
			c.change(&s)
			res, err := f.plugin.CheckHealth(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != backend.HealthStatusError || !strings.Contains(res.Message, c.want) {
				t.Errorf("got %v %q, want an error containing %q", res.Status, res.Message, c.want)
			}
		})
	}
}

// healthCase is a change to working settings and the words of the
// failed health check's message (none: the check passes).
type healthCase struct {
	name   string
	change func(s *plugintest.Settings)
	want   string
}

// healthFailures are the settings a health check must fail on.
func healthFailures(t testing.TB) []healthCase {
	return []healthCase{
		{"missing tables", func(s *plugintest.Settings) { s.JSONData["tables"] = map[string]any{"runs": "no_such_runs"} },
			"no_such_runs is missing"},
		{"no database", func(s *plugintest.Settings) { s.JSONData["defaultDatabase"] = "flamediff_never_migrated" },
			"has no database \"flamediff_never_migrated\" (run `flamediff migrate`)"},
		{"unreachable", func(s *plugintest.Settings) { s.JSONData["port"] = closedPort(t) }, "unreachable"},
		{"unknown user", func(s *plugintest.Settings) { s.JSONData["username"] = "nobody" }, `credentials of user "nobody"`},
		{"bad protocol", func(s *plugintest.Settings) { s.JSONData["protocol"] = "carrier-pigeon" }, "protocol must be native or http"},
		{"bad table name", func(s *plugintest.Settings) { s.JSONData["tables"] = map[string]any{"runs": "runs; DROP"} }, "invalid identifier"},
	}
}

// TestNoDatabase: queries and resources on a server where migrate never
// ran say to run it.
func TestNoDatabase(t *testing.T) {
	s, err := plugintest.SettingsFromDSN("clickhouse://default:@" + chtest.Addr(t) + "/flamediff_never_migrated")
	if err != nil {
		t.Fatal(err)
	}
	plugin := plugintest.Start(t, pluginBinary)
	ctx := context.Background()
	const want = "run `flamediff migrate`"
	if code, body, err := plugin.Resource(ctx, s, "apps"); err != nil || code != 502 || !strings.Contains(string(body), want) {
		t.Errorf("apps: %d %s %v, want 502 saying to %s", code, body, err, want)
	}
	resp, err := plugin.QueryData(ctx, s, plugintest.Query{RefID: "A", JSON: `{"queryType":"evolution","app":"a"}`})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Responses["A"]; r.Status != 502 || r.Error == nil || !strings.Contains(r.Error.Error(), want) {
		t.Errorf("query: %v %v, want 502 saying to %s", r.Status, r.Error, want)
	}
}

func copySettings(s plugintest.Settings) plugintest.Settings {
	c := s
	c.JSONData = map[string]any{}
	for k, v := range s.JSONData {
		c.JSONData[k] = v
	}
	c.Updated = time.Now()
	return c
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
