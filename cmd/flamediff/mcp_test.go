package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/mcptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/demo"
)

// exerciseTools connects the MCP SDK's client through transport, lists
// and calls every tool on ingestPprof's data, as an assistant would, and
// checks the answers.
func exerciseTools(t *testing.T, transport mcp.Transport) {
	ctx := context.Background()
	s := mcptest.Connect(t, transport)
	nBase, nHead := len(testkit.PprofRuns(t, "base")), len(testkit.PprofRuns(t, "head"))
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s: no description or not marked read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"callers_callees", "change_points", "compare_builds", "function_evolution", "functions",
		"list_apps", "list_builds", "list_runs"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	var apps struct{ Apps []string }
	mcptest.Call(t, s, "list_apps", nil, &apps)
	var builds struct{ Builds []struct{ Name string } }
	mcptest.Call(t, s, "list_builds", map[string]any{"app": "app"}, &builds)
	var runs struct {
		Runs []struct{ Build, Run, Unit string }
	}
	mcptest.Call(t, s, "list_runs", map[string]any{"app": "app"}, &runs)
	if !slices.Equal(apps.Apps, []string{"app"}) || len(builds.Builds) != 2 || len(runs.Runs) != nBase+nHead || runs.Runs[0].Unit != "nanoseconds" {
		t.Errorf("lists: apps %v, builds %v, runs %v", apps.Apps, builds.Builds, runs.Runs)
	}

	var cmp struct {
		Result, Headline string
		Runs             struct{ Base, Head int }
		Regressions      []struct {
			Function, Kind, File string
			Line                 int64
			Delta                float64
			Path                 []string
		}
	}
	diff := map[string]any{"app": "app", "head": []string{"head"}, "base": []string{"base"}, "normalize": "relative", "top": 3}
	mcptest.Call(t, s, "compare_builds", diff, &cmp)
	if cmp.Result != "FAIL" || cmp.Runs.Base != nBase || cmp.Runs.Head != nHead || len(cmp.Regressions) == 0 || len(cmp.Regressions) > 3 {
		t.Fatalf("compare_builds: %+v", cmp)
	}
	r := cmp.Regressions[0]
	if r.Delta <= 0 || len(r.Path) < 2 || r.Path[len(r.Path)-1] != r.Function || r.File == "" || r.Line == 0 ||
		!strings.Contains(cmp.Headline, r.Function) {
		t.Errorf("culprit %+v (headline %q): no path ending at it, or no source", r, cmp.Headline)
	}
	var calls struct {
		Head, Base       float64
		Callers, Callees []struct{ Function string }
	}
	mcptest.Call(t, s, "callers_callees", map[string]any{"app": "app", "head": []string{"head"}, "base": []string{"base"},
		"function": r.Function}, &calls)
	hasCaller := slices.ContainsFunc(calls.Callers, func(c struct{ Function string }) bool { return c.Function == r.Path[len(r.Path)-2] })
	if !hasCaller || calls.Head <= calls.Base {
		t.Errorf("callers_callees of %s: %+v", r.Function, calls)
	}
	var fns struct{ Functions []struct{ Function string } }
	mcptest.Call(t, s, "functions", map[string]any{"app": "app", "builds": []string{"head"}, "top": 5}, &fns)
	if len(fns.Functions) != 5 {
		t.Errorf("functions: %+v", fns)
	}
	var cps struct{ Rows []map[string]any }
	mcptest.Call(t, s, "change_points", map[string]any{"app": "app", "builds": []string{"base", "head"}}, &cps)
	if cps.Rows == nil {
		t.Error("change_points: no rows list")
	}
	var evo struct{ Rows []map[string]any }
	mcptest.Call(t, s, "function_evolution", map[string]any{"app": "app", "builds": []string{"base", "head"}, "function": r.Function}, &evo)
	if len(evo.Rows) != 2 {
		t.Errorf("function_evolution: %+v", evo)
	}

	// A backend error is a tool error carrying its message.
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "compare_builds",
		Arguments: map[string]any{"app": "nope", "head": []string{"h"}, "base": []string{"b"}}})
	if err != nil || !res.IsError || !strings.Contains(mcptest.Text(res), "nope") {
		t.Errorf("unknown app: %v, %+v", err, res)
	}

	// Every tool refuses a name of a megabyte with the query layer's
	// message, short, before asking ClickHouse.
	long := strings.Repeat("x", 1<<20)
	for tool, args := range map[string]map[string]any{
		"list_builds":     {"app": long},
		"list_runs":       {"app": "app", "builds": []string{long}},
		"compare_builds":  {"app": long, "head": []string{"h"}, "base": []string{"b"}},
		"callers_callees": {"app": "app", "head": []string{"head"}, "base": []string{"base"}, "function": long},
		"functions":       {"app": long, "builds": []string{"head"}},
	} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(mcptest.Text(res), "name longer than 1024 bytes") || len(mcptest.Text(res)) > 200 {
			t.Errorf("%s with a 1 MiB name: %v, %.300s", tool, err, mcptest.Text(res))
		}
	}
}

// TestMCPStdio drives `flamediff mcp` with the MCP SDK's client over
// stdio.
func TestMCPStdio(t *testing.T) {
	dsn := ingestPprof(t)
	exerciseTools(t, &mcp.CommandTransport{Command: exec.Command(flamediffBinary(t), "mcp", "--dsn", dsn)})
}

// TestMCPHTTP drives serve's /mcp endpoint with the SDK's streamable HTTP
// client; a request from a foreign page (Origin) or host is refused.
func TestMCPHTTP(t *testing.T) {
	url, _ := serveTest(t)
	exerciseTools(t, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"})

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for name, c := range map[string]struct {
		host, origin string
		want         int
	}{
		"foreign origin": {"", "http://attacker.example", http.StatusForbidden},
		"foreign host":   {"attacker.example", "", http.StatusMisdirectedRequest}, // serve's guard
	} {
		header := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if c.origin != "" {
			header["Origin"] = c.origin
		}
		if resp, _ := send(t, url+"/mcp", c.host, initialize, header); resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, c.want)
		}
	}
}

// verdictJSON is what a verdict's JSON says, from MCP or the CLI.
type verdictJSON struct {
	Result, Headline, Why string
	MinChange             float64
	Power                 struct{ MDC float64 }
}

// compare_builds gives the gate's verdict: the same threshold, result,
// headline and power as the CLI on the same stored runs and on the files
// they came from (testdata/pprof).
func TestMCPAgreesWithGate(t *testing.T) {
	dsn := ingestPprof(t)
	s := mcptest.Connect(t, &mcp.CommandTransport{Command: exec.Command(flamediffBinary(t), "mcp", "--dsn", dsn)})
	var fromMCP verdictJSON
	mcptest.Call(t, s, "compare_builds", map[string]any{"app": "app", "head": []string{"head"}, "base": []string{"base"}}, &fromMCP)
	model := `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`
	outputs := map[string][]string{
		"stored runs": {"query", "--dsn", dsn, "--model", model, "--output", "verdict"},
		"files": append(append(append([]string{"query", "--type", "diff", "--output", "verdict", "--head"},
			testkit.PprofRuns(t, "head")...), "--base"), testkit.PprofRuns(t, "base")...),
	}
	for name, args := range outputs {
		var fromCLI verdictJSON
		if err := json.Unmarshal([]byte(mustRun(t, args...)), &fromCLI); err != nil {
			t.Fatal(err)
		}
		if fromCLI != fromMCP || fromMCP.MinChange != 0.01 || !(fromMCP.Power.MDC > 0) {
			t.Errorf("%s: the CLI says %+v, MCP %+v", name, fromCLI, fromMCP)
		}
	}
}

// A serve process has one stack cache: its UI and its /mcp endpoint share
// it. After the UI's diff, MCP's compare_builds of the same builds reads
// no stack from ClickHouse (its query log says so); with a cache each, it
// would read them all again.
func TestServeOneStackCache(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	app := fmt.Sprintf("one-cache-%d", time.Now().UnixNano()) // names this test's queries in the server's log
	for _, side := range []string{"base", "head"} {
		for i, f := range testkit.PprofRuns(t, side) {
			mustRun(t, "ingest", "--dsn", dsn, "--app", app, "--build", side, "--run", string(rune('a'+i)), f)
		}
	}
	conn := chtest.Conn(t, dsn)
	ctx := context.Background()
	stackReads := func() uint64 {
		t.Helper()
		if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
			t.Fatal(err)
		}
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'SELECT stack_hash, frame_bytes%'"+
			" AND position(query, ?) > 0", "'"+app+"'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	url := serveOn(t, dsn, "--addr", "127.0.0.1:0")
	model := fmt.Sprintf(`{"queryType":"diff","app":%q,"head":{"builds":["head"]},"base":{"builds":["base"]}}`, app)
	if code, body := call(t, url+"/api/query", model); code != http.StatusOK {
		t.Fatalf("POST /api/query: %d %.300s", code, body)
	}
	afterUI := stackReads()
	if afterUI == 0 {
		t.Fatal("the UI's diff read no stack: the query log does not show the reads this test counts")
	}
	s := mcptest.Connect(t, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"})
	var v struct{ Result string }
	mcptest.Call(t, s, "compare_builds", map[string]any{"app": app, "head": []string{"head"}, "base": []string{"base"}}, &v)
	if after := stackReads(); v.Result == "" || after != afterUI {
		t.Errorf("compare_builds (%q) after the UI's diff: %d reads of stacks, the UI's %d: not the UI's cache", v.Result, after, afterUI)
	}
}

// On the demo's builds (pkg/demo, what `flamediff seed` stores),
// compare_builds through the SDK's client over `flamediff mcp` says what
// the CLI says: its verdict output, and its gate (exit code 3 on FAIL
// only): the regression, the improvement, and builds that changed by
// noise.
func TestMCPAgreesWithGateOnDemo(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	ctx := context.Background()
	store := teststore.Opened(t, dsn)
	checkout, ios := demo.Generate(1)[0], demo.Generate(1)[1]
	if err := teststore.StoreDemo(ctx, store, checkout, 6, 9); err != nil {
		t.Fatal(err)
	}
	if err := teststore.StoreDemo(ctx, store, ios, 4, 6); err != nil {
		t.Fatal(err)
	}
	s := mcptest.Connect(t, &mcp.CommandTransport{Command: exec.Command(flamediffBinary(t), "mcp", "--dsn", dsn)})
	results := map[string]bool{}
	for _, c := range []struct{ app, base, head string }{
		{"checkout-service", "1.6.0", "1.7.0"}, // the regression
		{"ios-app", "1.4.0", "1.5.0"},          // the improvement
		{"checkout-service", "1.7.0", "1.8.0"}, // noise
	} {
		name := fmt.Sprintf("%s %s vs %s", c.app, c.head, c.base)
		var fromMCP, fromCLI verdictJSON
		mcptest.Call(t, s, "compare_builds", map[string]any{"app": c.app, "head": []string{c.head}, "base": []string{c.base}}, &fromMCP)
		model := fmt.Sprintf(`{"queryType":"diff","app":%q,"head":{"builds":[%q]},"base":{"builds":[%q]}}`, c.app, c.head, c.base)
		if err := json.Unmarshal([]byte(mustRun(t, "query", "--dsn", dsn, "--model", model, "--output", "verdict")), &fromCLI); err != nil {
			t.Fatal(err)
		}
		_, gateErr := flamediff(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression")
		if fromCLI != fromMCP || fromMCP.MinChange != 0.01 || isRegression(gateErr) != (fromMCP.Result == "FAIL") ||
			(gateErr != nil && !isRegression(gateErr)) {
			t.Errorf("%s: the CLI says %+v (gate: %v), MCP %+v", name, fromCLI, gateErr, fromMCP)
		}
		results[fromMCP.Result] = true
	}
	if !results["FAIL"] || !results["PASS"] {
		t.Errorf("the demo's diffs gave %v: want its regression to FAIL and the other builds to PASS", results)
	}
}
