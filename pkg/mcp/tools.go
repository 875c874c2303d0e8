package mcp

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/verdict"
)

type appInput struct {
	App string `json:"app" jsonschema:"the app"`
}

type listAppsOutput struct {
	Apps    []string `json:"apps"`
	Omitted int      `json:"omitted,omitempty"`
}

func (t *tools) listApps(ctx context.Context, _ *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, listAppsOutput, error) {
	apps, err := t.exec.Store.Apps(ctx)
	if err != nil {
		return nil, listAppsOutput{}, err
	}
	var out listAppsOutput
	out.Apps, out.Omitted = first(apps, maxRows)
	return nil, out, nil
}

type build struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	Runs int       `json:"runs"`
}

type listBuildsOutput struct {
	Builds  []build `json:"builds"`
	Omitted int     `json:"omitted,omitempty"`
}

func (t *tools) listBuilds(ctx context.Context, _ *mcpsdk.CallToolRequest, in appInput) (*mcpsdk.CallToolResult, listBuildsOutput, error) {
	if err := query.CheckName("app", in.App); err != nil {
		return nil, listBuildsOutput{}, err
	}
	builds, err := t.exec.Store.Builds(ctx, in.App)
	if err != nil {
		return nil, listBuildsOutput{}, err
	}
	var out listBuildsOutput
	builds, out.Omitted = newest(builds)
	for _, b := range builds {
		out.Builds = append(out.Builds, build{b.Name, b.Time, b.Runs})
	}
	return nil, out, nil
}

type listRunsInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds,omitempty" jsonschema:"only runs of these builds"`
}

type run struct {
	Build    string    `json:"build"`
	Run      string    `json:"run"`
	Start    time.Time `json:"start"`
	Duration string    `json:"duration"`
	Total    int64     `json:"total"`
	Unit     string    `json:"unit"`
}

type listRunsOutput struct {
	Runs    []run `json:"runs"`
	Omitted int   `json:"omitted,omitempty"`
}

func (t *tools) listRuns(ctx context.Context, _ *mcpsdk.CallToolRequest, in listRunsInput) (*mcpsdk.CallToolResult, listRunsOutput, error) {
	if err := query.CheckName("app", in.App); err != nil {
		return nil, listRunsOutput{}, err
	}
	if err := query.CheckNames("builds", in.Builds); err != nil {
		return nil, listRunsOutput{}, err
	}
	runs, err := t.exec.Store.Runs(ctx, in.App, in.Builds, nil)
	if err != nil {
		return nil, listRunsOutput{}, err
	}
	var out listRunsOutput
	runs, out.Omitted = newest(runs)
	for _, r := range runs {
		out.Runs = append(out.Runs, run{r.Build, r.Run, r.Start, r.Duration.String(), r.Total, r.Unit})
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

type compareOutput struct {
	// Verdict is the gate's: result, headline (the top culprit), why,
	// the run totals' change, and the culprits.
	*verdict.Verdict
	Unit             string `json:"unit"`
	MoreRegressions  int    `json:"moreRegressions,omitempty"`
	MoreImprovements int    `json:"moreImprovements,omitempty"`
}

func (t *tools) compareBuilds(ctx context.Context, _ *mcpsdk.CallToolRequest, in diffInput) (*mcpsdk.CallToolResult, compareOutput, error) {
	out, err := query.AnswerTree(ctx, t.exec, in.model(), func(q *query.Tree) (compareOutput, error) {
		var out compareOutput
		v, err := q.Verdict(query.NewJudge(nil))
		if err != nil {
			return out, err
		}
		v.Regressions, out.MoreRegressions = first(v.Regressions, top(in.Top))
		v.Improvements, out.MoreImprovements = first(v.Improvements, top(in.Top))
		v.Totals = verdict.Sides[[]float64]{} // per-run totals: the change says it in less
		out.Verdict, out.Unit = v, q.Unit
		return out, nil
	})
	return nil, out, err
}

type callInput struct {
	diffInput
	Function string `json:"function" jsonschema:"the function (frame) name"`
}

type edge struct {
	Function string  `json:"function"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	Change   float64 `json:"change" jsonschema:"head - base, per run"`
}

type callOutput struct {
	Function string  `json:"function"`
	Unit     string  `json:"unit"`
	Base     float64 `json:"base" jsonschema:"the function's total per run, each call path counted once"`
	Head     float64 `json:"head"`
	Callers  []edge  `json:"callers"`
	Callees  []edge  `json:"callees"`
	Omitted  int     `json:"omitted,omitempty"`
}

func (t *tools) callersCallees(ctx context.Context, _ *mcpsdk.CallToolRequest, in callInput) (*mcpsdk.CallToolResult, callOutput, error) {
	if in.Function == "" {
		return nil, callOutput{}, fmt.Errorf("function is required")
	}
	if err := query.CheckName("function", in.Function); err != nil {
		return nil, callOutput{}, err // not echoing what may be a megabyte
	}
	out, err := query.AnswerTree(ctx, t.exec, in.model(), func(q *query.Tree) (callOutput, error) {
		out := callOutput{Function: in.Function, Unit: q.Unit}
		n, err := query.CallersCallees(q.Builder, q.Model, q.Rules, in.Function)
		if err != nil {
			return out, fmt.Errorf("%w (the diff of %v against %v)", err, in.Head, in.Base)
		}
		out.Base, out.Head = n.Base, n.Head
		edges := func(ns []query.Neighbour) []edge {
			ns, omitted := first(ns, top(in.Top))
			out.Omitted += omitted
			es := make([]edge, len(ns))
			for i, n := range ns {
				es[i] = edge{n.Function, n.Base, n.Head, n.Change()}
			}
			return es
		}
		out.Callers, out.Callees = edges(n.Callers), edges(n.Callees)
		return out, nil
	})
	return nil, out, err
}

type functionsInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds" jsonschema:"the build(s) to read (the head of a diff)"`
	Base   []string `json:"base,omitempty" jsonschema:"base build(s): makes it a diff"`
	Top    int      `json:"top,omitempty" jsonschema:"rows (default 10, max 50)"`
}

type function struct {
	Function    string   `json:"function"`
	Self        float64  `json:"self"`
	Total       float64  `json:"total"`
	BaseSelf    *float64 `json:"baseSelf,omitempty"`
	BaseTotal   *float64 `json:"baseTotal,omitempty"`
	Change      *float64 `json:"change,omitempty"`
	Significant *bool    `json:"significant,omitempty"`
}

type functionsOutput struct {
	Unit      string     `json:"unit"`
	Functions []function `json:"functions"`
	Omitted   int        `json:"omitted,omitempty"`
}

func (t *tools) functions(ctx context.Context, _ *mcpsdk.CallToolRequest, in functionsInput) (*mcpsdk.CallToolResult, functionsOutput, error) {
	m := query.Model{QueryType: query.Functions, App: in.App, Head: query.Selection{Builds: in.Builds}}
	diff := len(in.Base) > 0
	if diff {
		m.QueryType, m.Base = query.Diff, query.Selection{Builds: in.Base}
	}
	out, err := query.AnswerTree(ctx, t.exec, m, func(q *query.Tree) (functionsOutput, error) {
		out := functionsOutput{Unit: q.Unit}
		rows := q.Builder.Functions(q.Options())
		sort.SliceStable(rows, func(i, j int) bool {
			if diff {
				return math.Abs(rows[i].Delta) > math.Abs(rows[j].Delta)
			}
			return rows[i].HeadTotal > rows[j].HeadTotal
		})
		rows, out.Omitted = first(rows, top(in.Top))
		for _, r := range rows {
			f := function{Function: r.Name, Self: r.HeadSelf, Total: r.HeadTotal}
			if diff {
				f.BaseSelf, f.BaseTotal, f.Change, f.Significant = &r.BaseSelf, &r.BaseTotal, &r.Delta, &r.Significant
			}
			out.Functions = append(out.Functions, f)
		}
		return out, nil
	})
	return nil, out, err
}

type overTimeInput struct {
	App    string   `json:"app" jsonschema:"the app"`
	Builds []string `json:"builds,omitempty" jsonschema:"the builds, in order (default: all, oldest first)"`
}

type rowsOutput struct {
	Rows    []map[string]any `json:"rows"`
	Omitted int              `json:"omitted,omitempty"`
}

func (t *tools) changePoints(ctx context.Context, _ *mcpsdk.CallToolRequest, in overTimeInput) (*mcpsdk.CallToolResult, rowsOutput, error) {
	return t.rows(ctx, query.Model{QueryType: query.ChangePoints, App: in.App, Builds: in.Builds}, false)
}

type evolutionInput struct {
	overTimeInput
	Function string `json:"function,omitempty" jsonschema:"the function: its name, or its title (name (module)) when functions of several modules share the name; empty: the run total"`
}

func (t *tools) functionEvolution(ctx context.Context, _ *mcpsdk.CallToolRequest, in evolutionInput) (*mcpsdk.CallToolResult, rowsOutput, error) {
	return t.rows(ctx, query.Model{QueryType: query.TimeSeries, App: in.App, Builds: in.Builds, Function: in.Function,
		Baseline: "previous"}, true)
}

// rows runs a query through the executor and answers its first frame's
// rows, at most maxRows (the newest when newest is set).
func (t *tools) rows(ctx context.Context, m query.Model, newest bool) (*mcpsdk.CallToolResult, rowsOutput, error) {
	var out rowsOutput
	if err := m.Validate(); err != nil {
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
	if n > maxRows {
		out.Omitted = n - maxRows
		if newest {
			lo = n - maxRows
		}
	}
	for i := lo; i < min(n, lo+maxRows); i++ {
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
