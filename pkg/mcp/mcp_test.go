package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/mcptest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/query"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// The demo's checkout-service before and after its regression (pkg/demo):
// from 1.7.0 checkout/pricing.ApplyDiscounts compiles a regexp for every
// rule, and the build's changes name it modified.
const app, base, head = "checkout-service", "1.6.0", "1.7.0"

// demoExecutor stores the two builds in a fresh database and returns an
// executor over it, as the CLI makes one.
func demoExecutor(t *testing.T) *query.Executor {
	t.Helper()
	ctx := context.Background()
	store := teststore.Migrated(t, chtest.DSN(t))
	if err := teststore.StoreDemo(ctx, store, demo.Generate(1)[0], 6, 8); err != nil {
		t.Fatal(err)
	}
	return &query.Executor{Store: store, Stacks: loader.NewCache(0)}
}

// inMemory serves exec's tools to a client in this process, with no
// transport between them (the SDK's in-memory pair).
func inMemory(t *testing.T, exec *query.Executor) *mcpsdk.ClientSession {
	t.Helper()
	client, server := mcpsdk.NewInMemoryTransports()
	ss, err := New(exec, "test").Connect(context.Background(), server, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return mcptest.Connect(t, client)
}

// compared is what the tests read of compare_builds' answer.
type compared struct {
	Result, Headline, Why string
	MinChange             float64
	Regressions           []struct {
		Function, Kind string
		Path           []string
	}
}

var diffArgs = map[string]any{"app": app, "head": []string{head}, "base": []string{base}}

// The tools answer what the demo was made to show: its builds, the
// regression at regexp.MustCompile under ApplyDiscounts (FAIL at the
// gate's 1% of the base total), ApplyDiscounts' one caller and its
// callees old and new, and the tables of the over-time tools.
func TestToolsOnTheDemo(t *testing.T) {
	s := inMemory(t, demoExecutor(t))
	ctx := context.Background()

	var apps struct{ Apps []string }
	mcptest.Call(t, s, "list_apps", nil, &apps)
	var builds struct {
		Builds []struct {
			Name string
			Runs int
		}
	}
	mcptest.Call(t, s, "list_builds", map[string]any{"app": app}, &builds)
	var runs struct{ Runs []struct{ Build string } }
	mcptest.Call(t, s, "list_runs", map[string]any{"app": app, "builds": []string{head}}, &runs)
	if !slices.Equal(apps.Apps, []string{app}) || len(builds.Builds) != 2 || builds.Builds[1].Name != head ||
		builds.Builds[1].Runs != demo.RunsPerBuild || len(runs.Runs) != demo.RunsPerBuild {
		t.Errorf("lists: apps %v, builds %+v, %d runs of %s", apps.Apps, builds.Builds, len(runs.Runs), head)
	}

	var cmp compared
	mcptest.Call(t, s, "compare_builds", diffArgs, &cmp)
	if cmp.Result != "FAIL" || cmp.MinChange != 0.01 || len(cmp.Regressions) == 0 {
		t.Fatalf("compare_builds: %+v", cmp)
	}
	top := cmp.Regressions[0]
	if top.Function != "regexp.MustCompile" || top.Kind != "new" || top.Path[len(top.Path)-2] != "checkout/pricing.ApplyDiscounts" ||
		!strings.Contains(cmp.Headline, "regexp.MustCompile") {
		t.Errorf("compare_builds' top regression %+v, headline %q", top, cmp.Headline)
	}

	type edge struct {
		Function           string
		Base, Head, Change float64
	}
	var calls struct {
		Base, Head       float64
		Callers, Callees []edge
	}
	mcptest.Call(t, s, "callers_callees", map[string]any{"app": app, "head": []string{head}, "base": []string{base},
		"function": "checkout/pricing.ApplyDiscounts"}, &calls)
	names := func(es []edge) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Function)
		}
		slices.Sort(out)
		return out
	}
	if got := names(calls.Callers); !slices.Equal(got, []string{"checkout/cart.(*Cart).Total"}) {
		t.Errorf("callers %v, the demo has one", got)
	}
	if got, want := names(calls.Callees), []string{"checkout/pricing.(*Rule).Match", "regexp.(*Regexp).MatchString", "regexp.MustCompile"}; !slices.Equal(got, want) {
		t.Errorf("callees %v, the demo has %v", got, want)
	}
	if len(calls.Callees) > 0 && (calls.Callees[0].Function != "regexp.MustCompile" || calls.Callees[0].Base != 0 ||
		!(calls.Callees[0].Change > 0) || !(calls.Head > calls.Base)) {
		t.Errorf("the largest change under ApplyDiscounts is %+v (function %v -> %v), want the new regexp.MustCompile",
			calls.Callees[0], calls.Base, calls.Head)
	}

	var fns struct{ Functions []struct{ Function string } }
	mcptest.Call(t, s, "functions", map[string]any{"app": app, "builds": []string{head}, "base": []string{base}, "top": 3}, &fns)
	if len(fns.Functions) != 3 {
		t.Errorf("functions: %+v", fns)
	}
	var evo struct{ Rows []map[string]any }
	mcptest.Call(t, s, "function_evolution", map[string]any{"app": app, "function": "regexp.MustCompile"}, &evo)
	if len(evo.Rows) != 2 {
		t.Errorf("function_evolution: %+v", evo)
	}
	var cps struct{ Rows []map[string]any }
	mcptest.Call(t, s, "change_points", map[string]any{"app": app}, &cps)
	if cps.Rows == nil {
		t.Error("change_points: no rows list")
	}

	// Bad input is a tool error with the query layer's short message.
	for tool, args := range map[string]map[string]any{
		"list_builds":     {"app": strings.Repeat("x", 1<<20)},
		"callers_callees": {"app": app, "head": []string{head}, "base": []string{base}, "function": strings.Repeat("x", 1<<20)},
		"compare_builds":  {"app": app, "head": []string{head}, "base": []string{base}, "normalize": "sideways"},
	} {
		res, err := s.CallTool(ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || len(mcptest.Text(res)) > 200 {
			t.Errorf("%s with bad input: %v, %.300s", tool, err, mcptest.Text(res))
		}
	}
}

// Over the streamable HTTP transport that serve's /mcp uses, the SDK's
// client gets the verdict it gets in process; a page of another origin
// is refused.
func TestStreamableHTTP(t *testing.T) {
	exec := demoExecutor(t)
	srv := httptest.NewServer(Handler(exec, "test"))
	t.Cleanup(srv.Close) // after the client's session, which holds a stream open
	var overHTTP, inProcess compared
	mcptest.Call(t, mcptest.Connect(t, &mcpsdk.StreamableClientTransport{Endpoint: srv.URL}), "compare_builds", diffArgs, &overHTTP)
	mcptest.Call(t, inMemory(t, exec), "compare_builds", diffArgs, &inProcess)
	if overHTTP.Result != "FAIL" || overHTTP.Headline != inProcess.Headline || overHTTP.Why != inProcess.Why {
		t.Errorf("over HTTP %+v, in process %+v", overHTTP, inProcess)
	}

	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize",`+
		`"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "http://attacker.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request from another origin: status %d, want 403", resp.StatusCode)
	}
}

// Three functions named stringify (two packages' and Node's), stored on
// one server and on the cluster: the over-time tools title each with its
// module, keep them apart, and give the planted change to qs's alone; a
// bare name they share is a tool error naming the titles.
func TestOverTimeToolsTitleSameNamedFunctions(t *testing.T) {
	for name, cluster := range map[string]bool{"one server": false, "cluster": true} {
		t.Run(name, func(t *testing.T) {
			if cluster {
				chtest.ClusterShards(t)
			}
			store, _ := teststore.Fresh(t, cluster)
			ctx := context.Background()
			if err := teststore.StoreStringifies(ctx, store, "app"); err != nil {
				t.Fatal(err)
			}
			s := inMemory(t, &query.Executor{Store: store, Stacks: loader.NewCache(0)})
			var cps struct{ Rows []map[string]any }
			mcptest.Call(t, s, "change_points", map[string]any{"app": "app"}, &cps)
			var found []string
			for _, r := range cps.Rows {
				if f, _ := r["function"].(string); strings.HasPrefix(f, "stringify") && r["significant"] == true {
					found = append(found, f+" at "+r["build"].(string))
				}
			}
			if want := []string{teststore.QsStringify + " at b3"}; !slices.Equal(found, want) {
				t.Errorf("change_points of a stringify: %q, want %q (rows %v)", found, want, cps.Rows)
			}
			for title, changed := range map[string]bool{teststore.QsStringify: true, teststore.FastStringify: false, teststore.NodeStringify: false} {
				var evo struct{ Rows []map[string]any }
				mcptest.Call(t, s, "function_evolution", map[string]any{"app": "app", "function": title}, &evo)
				if len(evo.Rows) != len(teststore.StringifyBuilds) {
					t.Fatalf("function_evolution of %s: %v", title, evo.Rows)
				}
				for i, r := range evo.Rows {
					if at := r["changepoint"] != 0.0; at != (changed && i == 3) {
						t.Errorf("function_evolution of %s: change point %v at build %d", title, r["changepoint"], i)
					}
				}
			}
			res, err := s.CallTool(ctx, &mcpsdk.CallToolParams{Name: "function_evolution", Arguments: map[string]any{"app": "app", "function": "stringify"}})
			if err != nil || !res.IsError || !strings.Contains(mcptest.Text(res), teststore.NodeStringify) {
				t.Errorf("function_evolution of a shared name: %v, %.400s", err, mcptest.Text(res))
			}
		})
	}
}
