package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// The MCP server lives beside the CLI's gate: compare_builds answers the
// gate's verdict (pkg/verdict), so an assistant and CI say the same thing.

// mcpCmd serves the MCP tools over stdin and stdout until the client
// closes them.
func mcpCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	return func(ctx context.Context, args []string, _ io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		store, rules, err := dsn.open()
		if err != nil {
			return err
		}
		defer store.Close()
		return newMCPServer(store, rules).Run(ctx, &mcp.StdioTransport{})
	}
}

// mcpHandler serves the MCP tools over streamable HTTP. Requests from a
// page of another origin (the Origin check the MCP specification asks of
// local servers) and, on loopback, with a foreign Host (DNS rebinding)
// are refused with 403.
func mcpHandler(store *storage.Store, rules *sysframes.Rules) http.Handler {
	server := newMCPServer(store, rules)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{CrossOriginProtection: http.NewCrossOriginProtection()})
}

// Bounds of the answers, sized for a model's context.
const (
	mcpDefaultTop = 10
	mcpMaxTop     = 50
	mcpMaxRows    = 100
)

type mcpTools struct {
	store *storage.Store
	exec  *query.Executor
	rules *sysframes.Rules
}

func newMCPServer(store *storage.Store, rules *sysframes.Rules) *mcp.Server {
	t := &mcpTools{store: store, rules: rules,
		exec: &query.Executor{Store: store, Rules: rules, Stacks: loader.NewCache(0)}}
	s := mcp.NewServer(&mcp.Implementation{Name: "flamediff", Version: version()}, &mcp.ServerOptions{
		Instructions: "Flamediff stores profiles and span flame graphs of many runs per build of an app and compares builds " +
			"with statistics. Start with list_apps and list_builds, then compare_builds (base = the older build). " +
			"Values are per run, in the runs' unit. Every tool is read-only.",
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	add := func(name, desc string, output ...*jsonschema.Schema) *mcp.Tool {
		tool := &mcp.Tool{Name: name, Description: desc, Annotations: readOnly}
		if len(output) > 0 {
			tool.OutputSchema = output[0]
		}
		return tool
	}
	mcp.AddTool(s, add("list_apps", "Lists the apps that have runs (at most 100 names)."), t.listApps)
	mcp.AddTool(s, add("list_builds", "Lists an app's builds, oldest first, with their run counts and first run time "+
		"(at most the 100 newest)."), t.listBuilds)
	mcp.AddTool(s, add("list_runs", "Lists an app's runs (optionally of some builds), oldest first: build, run, start, "+
		"duration, total value, unit (at most the 100 newest)."), t.listRuns)
	mcp.AddTool(s, add("compare_builds", "Compares head build(s) against base build(s) of an app: the verdict (PASS, FAIL or "+
		"INCONCLUSIVE), its headline and why, the run-level result (runs, change of the run totals with its 95% interval "+
		"and Mann-Whitney p), and the culprits — where each regression or improvement enters the call tree: function, "+
		"kind (new, removed, self, spread), call path, source file:line, change with interval and q, and the smallest "+
		"change it detects (mdc), with the runs a side that would decide one whose interval straddles the threshold "+
		"(runsToDecide); power: the smallest change of the total the runs detect with 80% power, what a PASS "+
		"rules out, and how many runs a side would decide an undecided verdict. At most top "+
		"(default 10, max 50) culprits a list.", compareSchema()), t.compareBuilds)
	mcp.AddTool(s, add("callers_callees", "For one function on a diff of head against base builds: its callers and callees "+
		"with their head and base values through it and the change, largest first (at most top, default 10, max 50 each)."),
		t.callersCallees)
	mcp.AddTool(s, add("functions", "The functions table (pprof -top) of builds, or of a diff when base is given: self "+
		"and total per function, the change and its significance on a diff; ordered by total (or by change on a diff), "+
		"at most top rows (default 10, max 50)."), t.functions)
	mcp.AddTool(s, add("change_points", "Change points of an app across its builds (oldest first): for the total and each "+
		"function above 1% of it, the build where its per-run value changed, before and after, and the significance "+
		"(at most 100)."), t.changePoints)
	mcp.AddTool(s, add("function_evolution", "The evolution of one function's inclusive value (or of the run total when "+
		"function is empty) across an app's builds: per build the mean per run and its change against the previous "+
		"build with p-value (at most the 100 newest builds)."), t.functionEvolution)
	return s
}

type appInput struct {
	App string `json:"app" jsonschema:"the app"`
}

type listAppsOutput struct {
	Apps    []string `json:"apps"`
	Omitted int      `json:"omitted,omitempty"`
}

func (t *mcpTools) listApps(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listAppsOutput, error) {
	apps, err := t.store.Apps(ctx)
	if err != nil {
		return nil, listAppsOutput{}, err
	}
	var out listAppsOutput
	out.Apps, out.Omitted = first(apps, mcpMaxRows)
	return nil, out, nil
}

type mcpBuild struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	Runs int       `json:"runs"`
}

type listBuildsOutput struct {
	Builds  []mcpBuild `json:"builds"`
	Omitted int        `json:"omitted,omitempty"`
}

func (t *mcpTools) listBuilds(ctx context.Context, _ *mcp.CallToolRequest, in appInput) (*mcp.CallToolResult, listBuildsOutput, error) {
	if err := query.CheckName("app", in.App); err != nil {
		return nil, listBuildsOutput{}, err
	}
	builds, err := t.store.Builds(ctx, in.App)
	if err != nil {
		return nil, listBuildsOutput{}, err
	}
	var out listBuildsOutput
	builds, out.Omitted = newest(builds)
	for _, b := range builds {
		out.Builds = append(out.Builds, mcpBuild{b.Name, b.Time, b.Runs})
	}
	return nil, out, nil
}

// newest keeps the last mcpMaxRows of xs (oldest first) and counts the
// others.
func newest[T any](xs []T) ([]T, int) {
	if len(xs) <= mcpMaxRows {
		return xs, 0
	}
	return xs[len(xs)-mcpMaxRows:], len(xs) - mcpMaxRows
}

// first keeps the first n of xs and counts the others.
func first[T any](xs []T, n int) ([]T, int) {
	if len(xs) <= n {
		return xs, 0
	}
	return xs[:n], len(xs) - n
}

type listRunsInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds,omitempty" jsonschema:"only runs of these builds"`
}

type mcpRun struct {
	Build    string    `json:"build"`
	Run      string    `json:"run"`
	Start    time.Time `json:"start"`
	Duration string    `json:"duration"`
	Total    int64     `json:"total"`
	Unit     string    `json:"unit"`
}

type listRunsOutput struct {
	Runs    []mcpRun `json:"runs"`
	Omitted int      `json:"omitted,omitempty"`
}

func (t *mcpTools) listRuns(ctx context.Context, _ *mcp.CallToolRequest, in listRunsInput) (*mcp.CallToolResult, listRunsOutput, error) {
	if err := query.CheckName("app", in.App); err != nil {
		return nil, listRunsOutput{}, err
	}
	if err := query.CheckNames("builds", in.Builds); err != nil {
		return nil, listRunsOutput{}, err
	}
	runs, err := t.store.Runs(ctx, in.App, in.Builds, nil)
	if err != nil {
		return nil, listRunsOutput{}, err
	}
	var out listRunsOutput
	runs, out.Omitted = newest(runs)
	for _, r := range runs {
		out.Runs = append(out.Runs, mcpRun{r.Build, r.Run, r.Start, r.Duration.String(), r.Total, r.Unit})
	}
	return nil, out, nil
}

type diffInput struct {
	App       string   `json:"app" jsonschema:"the app"`
	Head      []string `json:"head" jsonschema:"the new build(s)"`
	Base      []string `json:"base" jsonschema:"the build(s) to compare against"`
	Normalize string   `json:"normalize,omitempty" jsonschema:"absolute (default) or relative: compare shares of the run total"`
	Top       int      `json:"top,omitempty" jsonschema:"rows per list (default 10, max 50)"`
}

// model is the diff query of in.
func (in diffInput) model() query.Model {
	return query.Model{QueryType: query.Diff, App: in.App, Normalize: in.Normalize,
		Head: query.Selection{Builds: in.Head}, Base: query.Selection{Builds: in.Base}}
}

// parsed gives m the checks and defaults every query gets.
func parsed(m query.Model) (query.Model, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return m, err
	}
	return query.Parse(raw)
}

// engine loads the diff or profile of m.
func (t *mcpTools) engine(ctx context.Context, m query.Model) (*tree.Builder, string, query.Model, error) {
	m, err := parsed(m)
	if err != nil {
		return nil, "", m, err
	}
	b, unit, err := t.exec.Engine(ctx, m)
	return b, unit, m, err
}

func top(n int) int {
	if n <= 0 {
		return mcpDefaultTop
	}
	return min(n, mcpMaxTop)
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

type compareOutput struct {
	// Verdict is the gate's: result, headline (the top culprit), why,
	// the run totals' change, and the culprits.
	*verdict.Verdict
	Unit             string `json:"unit"`
	MoreRegressions  int    `json:"moreRegressions,omitempty"`
	MoreImprovements int    `json:"moreImprovements,omitempty"`
}

func (t *mcpTools) compareBuilds(ctx context.Context, _ *mcp.CallToolRequest, in diffInput) (*mcp.CallToolResult, compareOutput, error) {
	var out compareOutput
	b, unit, m, err := t.engine(ctx, in.model())
	if err != nil {
		return nil, out, err
	}
	// The gate's threshold and modified functions, so that the assistant
	// and the CLI give one verdict.
	modified, err := t.exec.Modified(ctx, m)
	if err != nil {
		return nil, out, err
	}
	v, err := verdict.Of(b, verdict.Input{Options: query.TreeOptions(b, m, t.rules), MinChange: verdict.DefaultMinBaseShare, Modified: modified})
	if err != nil {
		return nil, out, err
	}
	v.Regressions, out.MoreRegressions = first(v.Regressions, top(in.Top))
	v.Improvements, out.MoreImprovements = first(v.Improvements, top(in.Top))
	v.Totals = verdict.Sides[[]float64]{} // per-run totals: the change says it in less
	out.Verdict, out.Unit = v, unit
	return nil, out, nil
}

type callInput struct {
	diffInput
	Function string `json:"function" jsonschema:"the function (frame) name"`
}

type mcpEdge struct {
	Function string  `json:"function"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	Change   float64 `json:"change" jsonschema:"head - base, per run"`
}

type callOutput struct {
	Function string    `json:"function"`
	Unit     string    `json:"unit"`
	Base     float64   `json:"base" jsonschema:"the function's total per run, each call path counted once"`
	Head     float64   `json:"head"`
	Callers  []mcpEdge `json:"callers"`
	Callees  []mcpEdge `json:"callees"`
	Omitted  int       `json:"omitted,omitempty"`
}

func (t *mcpTools) callersCallees(ctx context.Context, _ *mcp.CallToolRequest, in callInput) (*mcp.CallToolResult, callOutput, error) {
	if in.Function == "" {
		return nil, callOutput{}, fmt.Errorf("function is required")
	}
	if err := query.CheckName("function", in.Function); err != nil {
		return nil, callOutput{}, err // not echoing what may be a megabyte
	}
	out := callOutput{Function: in.Function}
	m := in.model()
	m.MaxNodes = query.MaxMaxNodes
	b, unit, m, err := t.engine(ctx, m)
	if err != nil {
		return nil, out, err
	}
	out.Unit = unit
	tr, err := b.Build(query.TreeOptions(b, m, t.rules))
	if err != nil {
		return nil, out, err
	}
	callers, callees := map[string]*mcpEdge{}, map[string]*mcpEdge{}
	addEdge := func(to map[string]*mcpEdge, name string, n tree.Node) {
		e := to[name]
		if e == nil {
			e = &mcpEdge{Function: name}
			to[name] = e
		}
		e.Base += n.BaseTotal
		e.Head += n.HeadTotal
	}
	found := false
	var parents []int // ancestors of the node being looked at, by depth
	for i, n := range tr.Nodes {
		parents = append(parents[:n.Depth], i)
		if tr.Label(i) != in.Function {
			continue
		}
		found = true
		// Count a path once: a recursive call inside it is not another one.
		outer := true
		for _, a := range parents[:n.Depth] {
			outer = outer && tr.Label(a) != in.Function
		}
		if outer {
			out.Base += n.BaseTotal
			out.Head += n.HeadTotal
		}
		if n.Depth > 1 {
			addEdge(callers, tr.Label(parents[n.Depth-1]), n)
		}
		for c := i + 1; c < i+int(n.Size); c += int(tr.Nodes[c].Size) {
			addEdge(callees, tr.Label(c), tr.Nodes[c])
		}
	}
	if !found {
		return nil, out, fmt.Errorf("no function %q in the diff of %v against %v", in.Function, in.Head, in.Base)
	}
	sorted := func(m map[string]*mcpEdge) []mcpEdge {
		es := []mcpEdge{}
		for _, e := range m {
			e.Change = e.Head - e.Base
			es = append(es, *e)
		}
		sort.Slice(es, func(i, j int) bool {
			return math.Abs(es[i].Change) > math.Abs(es[j].Change) ||
				es[i].Change == es[j].Change && es[i].Function < es[j].Function
		})
		es, omitted := first(es, top(in.Top))
		out.Omitted += omitted
		return es
	}
	out.Callers, out.Callees = sorted(callers), sorted(callees)
	return nil, out, nil
}

type functionsInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds" jsonschema:"the build(s) to read (the head of a diff)"`
	Base   []string `json:"base,omitempty" jsonschema:"base build(s): makes it a diff"`
	Top    int      `json:"top,omitempty" jsonschema:"rows (default 10, max 50)"`
}

type mcpFunction struct {
	Function    string   `json:"function"`
	Self        float64  `json:"self"`
	Total       float64  `json:"total"`
	BaseSelf    *float64 `json:"baseSelf,omitempty"`
	BaseTotal   *float64 `json:"baseTotal,omitempty"`
	Change      *float64 `json:"change,omitempty"`
	Significant *bool    `json:"significant,omitempty"`
}

type functionsOutput struct {
	Unit      string        `json:"unit"`
	Functions []mcpFunction `json:"functions"`
	Omitted   int           `json:"omitted,omitempty"`
}

func (t *mcpTools) functions(ctx context.Context, _ *mcp.CallToolRequest, in functionsInput) (*mcp.CallToolResult, functionsOutput, error) {
	var out functionsOutput
	m := query.Model{QueryType: query.Functions, App: in.App, Head: query.Selection{Builds: in.Builds}}
	if len(in.Base) > 0 {
		m.QueryType, m.Base = query.Diff, query.Selection{Builds: in.Base}
	}
	b, unit, m, err := t.engine(ctx, m)
	if err != nil {
		return nil, out, err
	}
	out.Unit = unit
	rows := b.Functions(query.TreeOptions(b, m, t.rules))
	diff := len(in.Base) > 0
	sort.SliceStable(rows, func(i, j int) bool {
		if diff {
			return math.Abs(rows[i].Delta) > math.Abs(rows[j].Delta)
		}
		return rows[i].HeadTotal > rows[j].HeadTotal
	})
	rows, out.Omitted = first(rows, top(in.Top))
	for _, r := range rows {
		f := mcpFunction{Function: r.Name, Self: r.HeadSelf, Total: r.HeadTotal}
		if diff {
			f.BaseSelf, f.BaseTotal, f.Change, f.Significant = &r.BaseSelf, &r.BaseTotal, &r.Delta, &r.Significant
		}
		out.Functions = append(out.Functions, f)
	}
	return nil, out, nil
}

type overTimeInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds,omitempty" jsonschema:"the builds, in order (default: all, oldest first)"`
}

type rowsOutput struct {
	Rows    []map[string]any `json:"rows"`
	Omitted int              `json:"omitted,omitempty"`
}

func (t *mcpTools) changePoints(ctx context.Context, _ *mcp.CallToolRequest, in overTimeInput) (*mcp.CallToolResult, rowsOutput, error) {
	return t.rows(ctx, query.Model{QueryType: query.ChangePoints, App: in.App, Builds: in.Builds}, false)
}

type evolutionInput struct {
	overTimeInput
	Function string `json:"function,omitempty" jsonschema:"the function; empty: the run total"`
}

func (t *mcpTools) functionEvolution(ctx context.Context, _ *mcp.CallToolRequest, in evolutionInput) (*mcp.CallToolResult, rowsOutput, error) {
	return t.rows(ctx, query.Model{QueryType: query.TimeSeries, App: in.App, Builds: in.Builds, Function: in.Function,
		Baseline: "previous"}, true)
}

// rows runs a query through the executor and answers its first frame's
// rows, at most mcpMaxRows (the newest when newest is set).
func (t *mcpTools) rows(ctx context.Context, m query.Model, newest bool) (*mcp.CallToolResult, rowsOutput, error) {
	var out rowsOutput
	m, err := parsed(m)
	if err != nil {
		return nil, out, err
	}
	frames, err := t.exec.Execute(ctx, m, query.Range{})
	if err != nil {
		return nil, out, err
	}
	out.Rows = []map[string]any{}
	if len(frames) == 0 {
		return nil, out, nil
	}
	f := frames[0]
	n, _ := f.RowLen()
	lo := 0
	if n > mcpMaxRows {
		out.Omitted = n - mcpMaxRows
		if newest {
			lo = n - mcpMaxRows
		}
	}
	for i := lo; i < min(n, lo+mcpMaxRows); i++ {
		out.Rows = append(out.Rows, frameRow(f, i))
	}
	return nil, out, nil
}

// frameRow is row i of f by field name; non-finite numbers are left out
// (JSON has none).
func frameRow(f *data.Frame, i int) map[string]any {
	row := map[string]any{}
	for _, field := range f.Fields {
		v, ok := field.ConcreteAt(i)
		if !ok {
			continue
		}
		if x, isFloat := v.(float64); isFloat && (math.IsNaN(x) || math.IsInf(x, 0)) {
			continue
		}
		row[field.Name] = v
	}
	return row
}
