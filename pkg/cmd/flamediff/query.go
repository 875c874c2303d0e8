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
	var head, base filesFlag
	fs.Var(&head, "head", "head profile `FILE`s, one per run (repeatable, or several after one flag)")
	fs.Var(&base, "base", "base profile `FILE`s, one per run")
	inverted := fs.Bool("inverted", false, "flip stacks: callers under callees")
	collapse := fs.Bool("collapse-system", false, "collapse runs of system frames into the first")
	var system listFlag
	fs.Var(&system, "system", "extra `REGEX` marking system frames (name or module), repeatable")
	maxNodes := fs.Int("max-nodes", query.DefaultMaxNodes, "merge small nodes so at most `N` are returned")
	variants := fs.Bool("variants", false, "return the normal, inverted, collapsed and inverted+collapsed trees")
	output := fs.String("output", "table", "json, table or folded")
	parse := parseFlags(fs)
	store := dsnFlag(fs) // query stored runs instead of files (with --model)
	model := fs.String("model", "", "the query as Grafana sends it, a `JSON` object (docs/QUERIES.md); with --dsn or --settings")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("unexpected argument %q (profile files go after --head or --base)", args[0])}
		}
		if store.set() || *model != "" {
			if len(head.listFlag) > 0 || len(base.listFlag) > 0 {
				return usageError{errors.New("--dsn/--model query stored runs; --head/--base files do not apply")}
			}
			return storedQuery(ctx, store, *model, *output, out)
		}
		m := query.Model{
			QueryType: query.Type(*typ), App: "files", Inverted: *inverted, CollapseSystem: *collapse,
			MaxNodes: *maxNodes, Variants: *variants,
			Head: query.Selection{Builds: []string{"head"}},
		}
		if len(base.listFlag) > 0 {
			m.Base.Builds = []string{"base"}
		}
		if err := validateLocal(&m, len(head.listFlag), len(base.listFlag), *output); err != nil {
			return usageError{err}
		}
		f, err := parse.options()
		if err != nil {
			return err
		}
		rules, err := sysframes.New(system)
		if err != nil {
			return usageError{err}
		}
		b := tree.NewBuilder(tree.NewFrames())
		unit, err := loadSide(b, tree.Head, head.listFlag, f)
		if err != nil {
			return err
		}
		if len(base.listFlag) > 0 {
			baseUnit, err := loadSide(b, tree.Base, base.listFlag, f)
			if err != nil {
				return err
			}
			if baseUnit != unit {
				return fmt.Errorf("head is in %s but base in %s: profiles of different kinds cannot be compared", unit, baseUnit)
			}
		}
		if *output == "table" {
			m.QueryType = query.Functions // the table is the top functions of any view
		}
		frames := query.Render(b, m, rules, unit)
		switch *output {
		case "json":
			return writeJSON(out, frames)
		case "folded":
			return writeFolded(out, b, m, rules)
		default:
			return writeTable(out, frames[0], m)
		}
	}
}

// storedQuery runs a query model against ClickHouse through the data
// source's executor, so CI jobs get exactly what the dashboards show.
func storedQuery(ctx context.Context, sf *storeFlags, model, output string, out io.Writer) error {
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
	store, rules, err := sf.open()
	if err != nil {
		return err
	}
	defer store.Close()
	frames, err := (&query.Executor{Store: store, Rules: rules}).Execute(ctx, m, query.Range{})
	if err != nil {
		return err
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
// returns their common unit.
func loadSide(b *tree.Builder, side tree.Side, files []string, o ingest.Options) (string, error) {
	unit := ""
	for _, name := range files {
		p, err := o.ParseFile(name)
		if err != nil {
			return "", err
		}
		if unit != "" && p.Unit != unit {
			return "", fmt.Errorf("%s: unit %s differs from the other runs' %s", name, p.Unit, unit)
		}
		unit = p.Unit
		if err := b.AddProfile(side, p); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	b.SetRuns(side, len(files))
	return unit, nil
}

func writeJSON(out io.Writer, frames data.Frames) error {
	enc := json.NewEncoder(out)
	return enc.Encode(frames)
}

// writeFolded prints the averaged tree as folded stacks: `a;b;c value` for a
// single side, `a;b;c base head` (difffolded's format) for a diff.
func writeFolded(out io.Writer, b *tree.Builder, m query.Model, rules *sysframes.Rules) error {
	t := b.Build(query.TreeOptions(b, m, rules))
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
	_, err := io.WriteString(out, sb.String())
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
