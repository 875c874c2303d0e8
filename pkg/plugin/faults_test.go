package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/plugintest"
)

// fakeServer listens on loopback and does what answer does with each
// connection; it is closed when the test ends.
func fakeServer(t *testing.T, answer func(net.Conn)) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			answer(c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// faultWait bounds a call to a faulty server: far beyond the plugin's own
// deadlines (1 s for the queries here, 5 s for a health check).
const faultWait = time.Minute

// frozen accepts and never answers; dropping closes at once.
func frozen(net.Conn)     {}
func dropping(c net.Conn) { c.Close() }

// TestFaultStatuses: every call has a deadline, and the same cause gives
// the same status from QueryData and CallResource: a frozen server 504,
// a refused or dropped connection 502. The client's own deadline only
// bounds the wait, generously for a loaded machine: a call that ignored
// its deadline would hang on the frozen server until then and fail on the
// status, not on the time.
func TestFaultStatuses(t *testing.T) {
	base, err := plugintest.SettingsFromDSN("clickhouse://default:@127.0.0.1:1/db")
	if err != nil {
		t.Fatal(err)
	}
	plugin := plugintest.Start(t, pluginBinary)
	q := plugintest.Query{RefID: "A", JSON: `{"queryType":"flamegraph","app":"a","head":{"builds":["b"]}}`}
	for _, c := range []struct {
		name string
		port int
		want int
		says string // in the error of both calls
	}{
		{"frozen", fakeServer(t, frozen), 504, "timed out"},
		{"refused", closedPort(t), 502, "ClickHouse unreachable"},
		{"dropped", fakeServer(t, dropping), 502, "ClickHouse unreachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := copySettings(base)
			s.UID, s.JSONData["port"], s.JSONData["queryTimeout"] = c.name, c.port, 1
			ctx, cancel := context.WithTimeout(context.Background(), faultWait)
			defer cancel()
			code, body, err := plugin.Resource(ctx, s, "apps")
			if err != nil || code != c.want || !strings.Contains(string(body), c.says) {
				t.Errorf("apps: %d %s %v, want %d saying %q", code, body, err, c.want, c.says)
			}
			resp, err := plugin.QueryData(ctx, s, q)
			if err != nil {
				t.Fatalf("QueryData: %v", err)
			}
			if r := resp.Responses["A"]; r.Error == nil || int(r.Status) != c.want || r.ErrorSource != backend.ErrorSourceDownstream ||
				!strings.Contains(r.Error.Error(), c.says) {
				t.Errorf("query: %v %v (%s), want %d from downstream saying %q", r.Status, r.Error, r.ErrorSource, c.want, c.says)
			}
		})
	}
	t.Run("health", func(t *testing.T) {
		s := copySettings(base)
		s.UID, s.JSONData["port"] = "frozen-health", fakeServer(t, frozen)
		ctx, cancel := context.WithTimeout(context.Background(), faultWait) // the check's own: 5 s
		defer cancel()
		res, err := plugin.CheckHealth(ctx, s)
		if err != nil || res.Status != backend.HealthStatusError || !strings.Contains(res.Message, "unreachable") {
			t.Errorf("health of a frozen server: %v %v", res, err)
		}
	})
	if plugin.Exited() {
		t.Fatal("the plugin died")
	}
}

// TestBusy: queries beyond maxQueries wait their turn, then are told the
// data source is busy (503), not that ClickHouse failed.
func TestBusy(t *testing.T) {
	s, err := plugintest.SettingsFromDSN("clickhouse://default:@127.0.0.1:1/db")
	if err != nil {
		t.Fatal(err)
	}
	s.UID, s.JSONData["port"] = "busy", fakeServer(t, frozen)
	s.JSONData["maxQueries"], s.JSONData["queueTimeout"], s.JSONData["queryTimeout"] = 1, 0.2, 3
	plugin := plugintest.Start(t, pluginBinary)
	q := `{"queryType":"flamegraph","app":"a","head":{"builds":["b"]}}`
	resp, err := plugin.QueryData(context.Background(), s, plugintest.Query{RefID: "A", JSON: q}, plugintest.Query{RefID: "B", JSON: q})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[backend.Status]int{}
	for _, r := range resp.Responses {
		statuses[r.Status]++
		if r.Status == backend.Status(503) && !strings.Contains(r.Error.Error(), "busy") {
			t.Errorf("busy answer does not say so: %v", r.Error)
		}
	}
	if statuses[backend.Status(503)] != 1 || statuses[backend.StatusTimeout] != 1 {
		t.Errorf("statuses %v, want one 503 (waited in vain) and one 504 (the frozen server)", statuses)
	}
}

// TestBusyUntilDeadline: with queryTimeout shorter than queueTimeout, the
// queries that wait for their turn until their deadline never run: busy
// (503), said once, not timed out; the one that ran into the frozen
// server timed out (504).
func TestBusyUntilDeadline(t *testing.T) {
	s, err := plugintest.SettingsFromDSN("clickhouse://default:@127.0.0.1:1/db")
	if err != nil {
		t.Fatal(err)
	}
	s.JSONData["port"] = fakeServer(t, frozen)
	s.JSONData["maxQueries"], s.JSONData["queueTimeout"], s.JSONData["queryTimeout"] = 1, 30, 1
	plugin := plugintest.Start(t, pluginBinary)
	var queries []plugintest.Query
	for i := range 8 {
		queries = append(queries, plugintest.Query{RefID: fmt.Sprint(i), JSON: `{"queryType":"flamegraph","app":"a","head":{"builds":["b"]}}`})
	}
	for round := range 3 {
		// A data source instance of its own: the abandoned query of the
		// last round holds its slot until the driver gives up.
		s.UID = fmt.Sprintf("busy-late-%d", round)
		resp, err := plugin.QueryData(context.Background(), s, queries...)
		if err != nil {
			t.Fatal(err)
		}
		statuses := map[backend.Status]int{}
		for _, r := range resp.Responses {
			statuses[r.Status]++
			if r.Status == backend.Status(503) {
				if msg := r.Error.Error(); !strings.HasPrefix(msg, "busy: ") || strings.Contains(msg, "busy: busy") || !strings.Contains(msg, "queryTimeout") {
					t.Errorf("busy answer %q: want one \"busy: \" prefix and the setting to raise", msg)
				}
			}
		}
		if statuses[backend.Status(503)] != 7 || statuses[backend.StatusTimeout] != 1 {
			t.Errorf("round %d: statuses %v, want 7 busy (503) and the running one timed out (504)", round, statuses)
		}
	}
}

// TestBadResourceParameters: parameters are checked like query fields,
// with 400 and a message naming the field; an empty search is [].
func TestBadResourceParameters(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	long := url.QueryEscape(strings.Repeat("x", 1025))
	for path, field := range map[string]string{
		"builds?app=" + long:          "app",
		"runs?app=a&build=" + long:    "build",
		"functions?app=a&q=" + long:   "q",
		"functions?app=a&limit=0":     "limit",
		"functions?app=a&limit=10001": "limit",
		"functions?app=a&limit=lots":  "limit",
		"functions?q=x":               "app",
	} {
		code, body, err := f.plugin.Resource(ctx, f.settings, path)
		if err != nil || code != 400 || !strings.Contains(string(body), field) {
			t.Errorf("%.60s: %d %s %v, want 400 naming %s", path, code, body, err, field)
		}
	}
	code, body, err := f.plugin.Resource(ctx, f.settings, "functions?app="+url.QueryEscape(hostileApp)+"&q=no-such-function")
	var names []string
	if err != nil || code != 200 || json.Unmarshal(body, &names) != nil || names == nil || len(names) != 0 {
		t.Errorf("empty search: %d %s %v, want []", code, body, err)
	}
}

// TestMemoryBudget: a query whose trees could exceed maxQueryMemory is
// refused (400) with what to change, before it is built.
func TestMemoryBudget(t *testing.T) {
	f := loadPprof(t)
	s := copySettings(f.settings)
	s.UID, s.JSONData["maxQueryMemory"] = "tight", 1
	model := mustJSON(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase),
		"variants": true, "maxNodes": 1_000_000})
	resp, err := f.plugin.QueryData(context.Background(), s, plugintest.Query{RefID: "A", JSON: model})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "maxQueryMemory") ||
		!strings.Contains(r.Error.Error(), "variants") {
		t.Errorf("over budget: %v %v, want 400 naming maxQueryMemory and variants", r.Status, r.Error)
	}
	f.mustQuery(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)})
}
