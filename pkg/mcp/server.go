// Package mcp is Flamediff's MCP server: read-only tools through which an
// assistant lists apps, builds and runs and compares builds (docs/MCP.md).
// Each tool is a thin handler over a domain call of pkg/query or the
// store: the tools that build trees answer through the query layer's
// pipeline (query.AnswerTree: admission, cancellation, deadline, panic
// recovery), compare_builds with the verdict of query.Judge, the same as
// the CLI's gate and the panel's culprits, and callers_callees from the
// sandwich's trees (query.CallersCallees). It opens nothing itself: the
// CLI gives it the process's one executor (store, rules and stack cache)
// and picks the transport (stdio for `flamediff mcp`, streamable HTTP for
// `flamediff serve`'s /mcp).
package mcp

import (
	"net/http"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Bounds of the answers, sized for a model's context.
const (
	defaultTop = 10
	maxTop     = 50
	maxRows    = 100
)

// tools answers the tools' calls over one executor.
type tools struct {
	exec *query.Executor
}

// New returns the MCP server of the tools over exec, which must have a
// Store; version is the server's version.
func New(exec *query.Executor, version string) *mcpsdk.Server {
	t := &tools{exec: exec}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "flamediff", Version: version}, &mcpsdk.ServerOptions{
		Instructions: "Flamediff stores profiles and span flame graphs of many runs per build of an app and compares builds " +
			"with statistics. Start with list_apps and list_builds, then compare_builds (base = the older build). " +
			"Values are per run, in the runs' unit. Every tool is read-only.",
	})
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	add := func(name, desc string, output ...*jsonschema.Schema) *mcpsdk.Tool {
		tool := &mcpsdk.Tool{Name: name, Description: desc, Annotations: readOnly}
		if len(output) > 0 {
			tool.OutputSchema = output[0]
		}
		return tool
	}
	mcpsdk.AddTool(s, add("list_apps", "Lists the apps that have runs (at most 100 names)."), t.listApps)
	mcpsdk.AddTool(s, add("list_builds", "Lists an app's builds, oldest first, with their run counts and first run time "+
		"(at most the 100 newest)."), t.listBuilds)
	mcpsdk.AddTool(s, add("list_runs", "Lists an app's runs (optionally of some builds), oldest first: build, run, start, "+
		"duration, total value, unit (at most the 100 newest)."), t.listRuns)
	mcpsdk.AddTool(s, add("compare_builds", "Compares head build(s) against base build(s) of an app: the verdict (PASS, FAIL or "+
		"INCONCLUSIVE), its headline and why, the run-level result (runs, change of the run totals with its 95% interval "+
		"and Mann-Whitney p), and the culprits — where each regression or improvement enters the call tree: function, "+
		"kind (new, removed, self, spread), call path, source file:line, change with interval and q, and the smallest "+
		"change it detects (mdc), with the runs a side that would decide one whose interval straddles the threshold "+
		"(runsToDecide); power: the smallest change of the total the runs detect with 80% power, what a PASS "+
		"rules out, and how many runs a side would decide an undecided verdict. At most top "+
		"(default 10, max 50) culprits a list.", compareSchema()), t.compareBuilds)
	mcpsdk.AddTool(s, add("callers_callees", "For one function on a diff of head against base builds: its callers and callees "+
		"with their head and base values through it and the change, largest first (at most top, default 10, max 50 each)."),
		t.callersCallees)
	mcpsdk.AddTool(s, add("functions", "The functions table (pprof -top) of builds, or of a diff when base is given: self "+
		"and total per function, the change and its significance on a diff; ordered by total (or by change on a diff), "+
		"at most top rows (default 10, max 50)."), t.functions)
	mcpsdk.AddTool(s, add("change_points", "Change points of an app across its builds (oldest first): for the total and each "+
		"function above 1% of it, the build where its per-run value changed, before and after, and the significance "+
		"(at most 100)."), t.changePoints)
	mcpsdk.AddTool(s, add("function_evolution", "The evolution of one function's inclusive value (or of the run total when "+
		"function is empty) across an app's builds: per build the mean per run and its change against the previous "+
		"build with p-value (at most the 100 newest builds)."), t.functionEvolution)
	return s
}

// Handler serves New's server over streamable HTTP. Requests from a page
// of another origin (the Origin check the MCP specification asks of local
// servers) are refused with 403; the caller's guard checks the Host.
func Handler(exec *query.Executor, version string) http.Handler {
	server := New(exec, version)
	return mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{CrossOriginProtection: http.NewCrossOriginProtection()})
}

// compareSchema is compare_builds' output schema: a verdict's numbers are
// null where the runs cannot define them (verdict.Number).
func compareSchema() *jsonschema.Schema {
	s, err := jsonschema.For[compareOutput](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[verdict.Number](): {Types: []string{"number", "null"}},
	}})
	if err != nil {
		panic(err) // a type the schema cannot describe: a programming error
	}
	return s
}

func top(n int) int {
	if n <= 0 {
		return defaultTop
	}
	return min(n, maxTop)
}

// newest keeps the last maxRows of xs (oldest first) and counts the
// others.
func newest[T any](xs []T) ([]T, int) {
	if len(xs) <= maxRows {
		return xs, 0
	}
	return xs[len(xs)-maxRows:], len(xs) - maxRows
}

// first keeps the first n of xs and counts the others.
func first[T any](xs []T, n int) ([]T, int) {
	if len(xs) <= n {
		return xs, 0
	}
	return xs[:n], len(xs) - n
}
