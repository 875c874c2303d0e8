package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/internal/testkit"
)

// callTool calls a tool and decodes its structured answer into out; it
// fails the test on a tool error.
func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, toolText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, b)
	}
	if len(b) > 16<<10 {
		t.Errorf("%s answered %d bytes: not bounded for a model's context", name, len(b))
	}
}

func toolText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// exerciseTools connects the MCP SDK's client through transport, lists
// and calls every tool on ingestPprof's data, as an assistant would, and
// checks the answers.
func exerciseTools(t *testing.T, transport mcp.Transport) {
	ctx := context.Background()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
	callTool(t, s, "list_apps", nil, &apps)
	var builds struct{ Builds []struct{ Name string } }
	callTool(t, s, "list_builds", map[string]any{"app": "app"}, &builds)
	var runs struct {
		Runs []struct{ Build, Run, Unit string }
	}
	callTool(t, s, "list_runs", map[string]any{"app": "app"}, &runs)
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
	callTool(t, s, "compare_builds", diff, &cmp)
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
	callTool(t, s, "callers_callees", map[string]any{"app": "app", "head": []string{"head"}, "base": []string{"base"},
		"function": r.Function}, &calls)
	hasCaller := slices.ContainsFunc(calls.Callers, func(c struct{ Function string }) bool { return c.Function == r.Path[len(r.Path)-2] })
	if !hasCaller || calls.Head <= calls.Base {
		t.Errorf("callers_callees of %s: %+v", r.Function, calls)
	}
	var fns struct{ Functions []struct{ Function string } }
	callTool(t, s, "functions", map[string]any{"app": "app", "builds": []string{"head"}, "top": 5}, &fns)
	if len(fns.Functions) != 5 {
		t.Errorf("functions: %+v", fns)
	}
	var cps struct{ Rows []map[string]any }
	callTool(t, s, "change_points", map[string]any{"app": "app", "builds": []string{"base", "head"}}, &cps)
	if cps.Rows == nil {
		t.Error("change_points: no rows list")
	}
	var evo struct{ Rows []map[string]any }
	callTool(t, s, "function_evolution", map[string]any{"app": "app", "builds": []string{"base", "head"}, "function": r.Function}, &evo)
	if len(evo.Rows) != 2 {
		t.Errorf("function_evolution: %+v", evo)
	}

	// A backend error is a tool error carrying its message.
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "compare_builds",
		Arguments: map[string]any{"app": "nope", "head": []string{"h"}, "base": []string{"b"}}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "nope") {
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
		if err != nil || !res.IsError || !strings.Contains(toolText(res), "name longer than 1024 bytes") || len(toolText(res)) > 200 {
			t.Errorf("%s with a 1 MiB name: %v, %.300s", tool, err, toolText(res))
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

// compare_builds gives the gate's verdict: the same threshold, result,
// headline and power as the CLI on the same stored runs and on the files
// they came from (testdata/pprof).
func TestMCPAgreesWithGate(t *testing.T) {
	dsn := ingestPprof(t)
	ctx := context.Background()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(flamediffBinary(t), "mcp", "--dsn", dsn)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type verdictJSON struct {
		Result, Headline, Why string
		MinChange             float64
		Power                 struct{ MDC float64 }
	}
	var fromMCP verdictJSON
	callTool(t, s, "compare_builds", map[string]any{"app": "app", "head": []string{"head"}, "base": []string{"base"}}, &fromMCP)
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
