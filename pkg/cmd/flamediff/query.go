package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// queryCmd runs the engine of the data source on local files, one file per
// run, so that any CI job can diff profiles without ClickHouse.
func queryCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	typ := fs.String("type", "flamegraph", "flamegraph, diff or functions (files); stored queries take any type in --model")
	src := addSourceFlags(fs)
	inverted := fs.Bool("inverted", false, "flip stacks: callers under callees")
	collapse := fs.Bool("collapse-system", false, "collapse runs of system frames into the first")
	variants := fs.Bool("variants", false, "return the normal, inverted, collapsed and inverted+collapsed trees")
	output := fs.String("output", "table", "json, table or folded")
	failOnRegression := fs.Bool("fail-on-regression", false, "exit 3 when a significant regression is found (changepoints: one starting at the newest build)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		stored, err := src.check(args)
		if err != nil {
			return err
		}
		if stored {
			return storedQuery(ctx, src.store, *src.model, *output, *failOnRegression, out)
		}
		m := query.Model{
			QueryType: query.Type(*typ), App: "files", Inverted: *inverted, CollapseSystem: *collapse,
			MaxNodes: *src.maxNodes, Variants: *variants,
			Head: query.Selection{Builds: []string{"head"}},
		}
		if len(src.base.listFlag) > 0 {
			m.Base.Builds = []string{"base"}
		}
		if err := validateLocal(&m, len(src.head.listFlag), len(src.base.listFlag), *output); err != nil {
			return usageError{err}
		}
		l, err := src.load()
		if err != nil {
			return err
		}
		if *output == "table" {
			m.QueryType = query.Functions // the table is the top functions of any view
		}
		frames, err := query.Render(l.b, m, l.rules, l.unit)
		if err != nil {
			return err
		}
		switch *output {
		case "json":
			return writeJSON(out, frames)
		case "folded":
			return writeFolded(out, l.b, m, l.rules)
		default:
			return writeTable(out, frames[0], m)
		}
	}
}

// sourceFlags name what a command reads: profile files of each side (with
// how to parse them, system frame rules and node budget), or stored runs (a
// store and a query model).
type sourceFlags struct {
	head, base filesFlag
	system     listFlag
	maxNodes   *int
	parse      *parseOptions
	store      *storeFlags
	model      *string
}

func addSourceFlags(fs *flag.FlagSet) *sourceFlags {
	s := &sourceFlags{}
	fs.Var(&s.head, "head", "head profile `FILE`s, one per run (repeatable, or several after one flag)")
	fs.Var(&s.base, "base", "base profile `FILE`s, one per run")
	fs.Var(&s.system, "system", "extra `REGEX` marking system frames (name or module), repeatable")
	s.maxNodes = fs.Int("max-nodes", query.DefaultMaxNodes, "merge small nodes so at most `N` are returned")
	s.parse = parseFlags(fs)
	s.store = dsnFlag(fs) // stored runs instead of files (with --model)
	s.model = fs.String("model", "", "the query as Grafana sends it, a `JSON` object (docs/QUERIES.md); with --dsn or --settings")
	return s
}

// check rejects positional arguments and files mixed with stored runs; it
// reports whether stored runs are asked for.
func (s *sourceFlags) check(args []string) (stored bool, err error) {
	if len(args) > 0 {
		return false, usageError{fmt.Errorf("unexpected argument %q (profile files go after --head or --base)", args[0])}
	}
	stored = s.store.set() || *s.model != ""
	if stored && (len(s.head.listFlag) > 0 || len(s.base.listFlag) > 0) {
		return false, usageError{errors.New("--dsn/--model query stored runs; --head/--base files do not apply")}
	}
	return stored, nil
}

// local is the engine filled from profile files, one run per file.
type local struct {
	b                      *tree.Builder
	rules                  *sysframes.Rules
	unit                   string
	headTotals, baseTotals []int64 // each file's total, in file order
}

// load parses the head and base files into one engine.
func (s *sourceFlags) load() (*local, error) {
	o, err := s.parse.options()
	if err != nil {
		return nil, err
	}
	l := &local{b: tree.NewBuilder(tree.NewFrames())}
	if l.rules, err = sysframes.New(s.system); err != nil {
		return nil, usageError{err}
	}
	if l.unit, l.headTotals, err = loadSide(l.b, tree.Head, s.head.listFlag, o); err != nil {
		return nil, err
	}
	if len(s.base.listFlag) > 0 {
		var baseUnit string
		if baseUnit, l.baseTotals, err = loadSide(l.b, tree.Base, s.base.listFlag, o); err != nil {
			return nil, err
		}
		if baseUnit != l.unit {
			return nil, fmt.Errorf("head is in %s but base in %s: profiles of different kinds cannot be compared", l.unit, baseUnit)
		}
	}
	return l, nil
}

// storedQuery runs a query model against ClickHouse through the data
// source's executor, so CI jobs get exactly what the dashboards show.
func storedQuery(ctx context.Context, sf *storeFlags, model, output string, failOnRegression bool, out io.Writer) error {
	if !sf.set() || model == "" {
		return usageError{errors.New("a stored query needs --dsn (or --settings) and --model")}
	}
	if output != "json" && output != "table" && output != "folded" {
		return usageError{fmt.Errorf("--output must be json, table or folded, not %q", output)}
	}
	m, err := query.Parse([]byte(model))
	if err != nil {
		return usageError{err}
	}
	if failOnRegression && m.QueryType != query.ChangePoints {
		return usageError{fmt.Errorf("--fail-on-regression applies to changepoints queries, not %s", m.QueryType)}
	}
	store, rules, err := sf.open()
	if err != nil {
		return err
	}
	defer store.Close()
	frames, err := (&query.Executor{Store: store, Rules: rules}).Execute(ctx, m, query.Range{})
	if err != nil {
		return err
	}
	if m.QueryType == query.ChangePoints {
		return changePointsOutput(out, frames, output, failOnRegression)
	}
	switch output {
	case "json":
		return writeJSON(out, frames)
	case "folded":
		return writeFoldedFrame(out, frames)
	}
	if m.QueryType == query.Functions {
		return writeTable(out, frames[0], m)
	}
	for _, f := range frames {
		table, err := f.StringTable(-1, -1)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(out, table); err != nil {
			return err
		}
	}
	return nil
}

// validateLocal applies the query model's rules to a local query.
func validateLocal(m *query.Model, heads, bases int, output string) error {
	switch m.QueryType {
	case query.FlameGraph, query.Diff, query.Functions:
	default:
		return fmt.Errorf("--type must be flamegraph, diff or functions, not %q", m.QueryType)
	}
	if heads == 0 {
		return errors.New("no --head files")
	}
	if m.QueryType == query.Diff && bases == 0 {
		return errors.New("a diff needs --base files")
	}
	if m.QueryType == query.FlameGraph && bases > 0 {
		return errors.New("--base files need --type diff or functions")
	}
	switch output {
	case "json", "table", "folded":
	default:
		return fmt.Errorf("--output must be json, table or folded, not %q", output)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	*m, err = query.Parse(raw)
	return err
}

// loadSide parses every file of one side into the engine (one run each) and
// returns their common unit and each file's total.
func loadSide(b *tree.Builder, side tree.Side, files []string, o ingest.Options) (string, []int64, error) {
	unit := ""
	totals := make([]int64, len(files))
	for i, name := range files {
		p, err := o.ParseFile(name)
		if err != nil {
			return "", nil, err
		}
		if unit != "" && p.Unit != unit {
			return "", nil, fmt.Errorf("%s: unit %s differs from the other runs' %s", name, p.Unit, unit)
		}
		unit, totals[i] = p.Unit, p.Total()
		if err := b.AddProfile(side, p); err != nil {
			return "", nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	b.SetRuns(side, len(files))
	return unit, totals, nil
}

func writeJSON(out io.Writer, frames data.Frames) error {
	enc := json.NewEncoder(out)
	return enc.Encode(frames)
}

// writeFolded prints the averaged tree as folded stacks: `a;b;c value` for a
// single side, `a;b;c base head` (difffolded's format) for a diff.
func writeFolded(out io.Writer, b *tree.Builder, m query.Model, rules *sysframes.Rules) error {
	t, err := b.Build(query.TreeOptions(b, m, rules))
	if err != nil {
		return err
	}
	var sb strings.Builder
	names := make([]string, 0, 64)
	t.EachStack(func(stack []uint32, head, base float64) {
		names = names[:0]
		for _, id := range stack {
			names = append(names, labelOf(t, id))
		}
		sb.WriteString(strings.Join(names, ";"))
		if t.Diff {
			fmt.Fprintf(&sb, " %s %s\n", number(base), number(head))
		} else {
			fmt.Fprintf(&sb, " %s\n", number(head))
		}
	})
	_, err = io.WriteString(out, sb.String())
	return err
}

func labelOf(t *tree.Tree, id uint32) string {
	if id == tree.OtherFrame {
		return "other"
	}
	return t.Frames.Name(id)
}

// number prints a per-run value without a needless fraction.
func number(v float64) string {
	return fmt.Sprintf("%.10g", v)
}

// writeTable prints the top functions like `pprof -top`, largest self first.
func writeTable(out io.Writer, f *data.Frame, m query.Model) error {
	rows, err := f.RowLen()
	if err != nil {
		return err
	}
	order := make([]int, rows)
	for i := range order {
		order[i] = i
	}
	selfField := "self"
	if m.IsDiff() {
		selfField = "selfHead"
	}
	self := fieldIndex(f, selfField)
	sort.SliceStable(order, func(a, b int) bool {
		return f.Fields[self].At(order[a]).(float64) > f.Fields[self].At(order[b]).(float64)
	})
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, fld := range f.Fields {
		fmt.Fprintf(tw, "%s\t", fld.Name)
	}
	fmt.Fprintln(tw)
	for _, r := range order {
		for _, fld := range f.Fields {
			switch v := fld.At(r).(type) {
			case float64:
				fmt.Fprintf(tw, "%s\t", number(v))
			default:
				fmt.Fprintf(tw, "%v\t", v)
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func fieldIndex(f *data.Frame, name string) int {
	for i, fld := range f.Fields {
		if fld.Name == name {
			return i
		}
	}
	return 0
}
