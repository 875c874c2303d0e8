package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// queryCmd runs the engine of the data source on local files, one file per
// run, or any query on stored runs, so that any CI job can diff profiles
// and gate on the result.
func queryCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	typ := fs.String("type", "flamegraph", "the query type of files (stored queries take any type in --model):\n"+
		typesHelp(func(s query.Spec) bool { return s.Tree }))
	src := addSourceFlags(fs)
	inverted := fs.Bool("inverted", false, "flip stacks: callers under callees")
	collapse := fs.Bool("collapse-system", false, "collapse runs of system frames into the first")
	variants := fs.Bool("variants", false, "return the normal, inverted, collapsed and inverted+collapsed trees")
	normalize := fs.String("normalize", "absolute", "what a diff compares: absolute values, or relative shares of each side's total")
	alpha := fs.Float64("alpha", stats.DefaultAlpha, "false-discovery rate under which a change is significant")
	output := fs.String("output", "table", "`NAME` of what to print, one of:"+outputsHelp())
	var writes writesFlag
	fs.Var(&writes, "write", "write the output `NAME=FILE` too, from the same computation (one engine, one verdict; repeatable): "+
		"a CI look writes its verdict, comment and report at once")
	sourceRoot := fs.String("source-root", ".", "with --output github: the checkout that culprits' files are named relative to")
	top := fs.Int("top", 20, "print at most `N` functions (table) or changes per list (markdown); 0 prints all")
	gate := fs.Bool("fail-on-regression", false, "exit with code 3 when a function regressed significantly by at least --min-base-share")
	minBaseShare := minBaseShareFlag(fs)
	loop := addPlanFlags(fs)
	return func(ctx context.Context, args []string, out io.Writer) error {
		stored, err := src.check(args)
		if err != nil {
			return err
		}
		if _, ok := outputNamed(*output); !ok {
			var names []string
			for _, o := range outputs {
				names = append(names, o.name)
			}
			return usageError{fmt.Errorf("--output must be one of %s, not %q", strings.Join(names, ", "), *output)}
		}
		if *top < 0 || !(*minBaseShare >= 0) {
			return usageError{fmt.Errorf("--top (%d) and --min-base-share (%v) must not be negative", *top, *minBaseShare)}
		}
		a := answer{output: *output, writes: writes, top: *top, gate: *gate, minBaseShare: *minBaseShare, sourceRoot: *sourceRoot, loop: loop}
		if stored {
			return a.stored(ctx, src.store, *src.model, out)
		}
		a.m, err = src.localModel(query.Model{
			QueryType: query.Type(*typ), Inverted: *inverted, CollapseSystem: *collapse,
			Variants: *variants, Normalize: *normalize, Alpha: alpha,
		})
		if err != nil {
			return err
		}
		if err := a.check(); err != nil {
			return err
		}
		l, err := src.load()
		if err != nil {
			return err
		}
		a.rules, a.unit, a.sampleType = l.rules, l.unit, l.sampleType
		head, base := src.head.listFlag, src.base.listFlag
		a.report = &reportSource{title: filesTitle(head, base), runs: func() (data.Frames, error) {
			return frames.Runs(fileRuns("head", head, l.headTotals), fileRuns("base", base, l.baseTotals), l.unit), nil
		}}
		t := &query.Tree{Builder: l.b, Model: a.m, Rules: l.rules, Unit: l.unit}
		_, err = query.AnswerLocal(ctx, t, func(t *query.Tree) (struct{}, error) { return struct{}{}, a.write(out, t) })
		return err
	}
}

// minBaseShareFlag is the verdict's threshold, --min-base-share: the
// smallest regression that fails, a share of the base total.
// --min-change is its old name, kept for the scripts that pass it.
func minBaseShareFlag(fs *flag.FlagSet) *float64 {
	v := fs.Float64("min-base-share", verdict.DefaultMinBaseShare, "smallest regression the verdict and the gate count, "+
		"as a share of the base total (of the share with --normalize relative)")
	fs.Float64Var(v, "min-change", verdict.DefaultMinBaseShare, "deprecated: the old name of --min-base-share")
	return v
}

// typesHelp lists the query types keep accepts, a line each with its help.
func typesHelp(keep func(query.Spec) bool) string {
	var b strings.Builder
	for _, s := range query.Types() {
		if keep(s) {
			fmt.Fprintf(&b, "  %s: %s\n", s.Type, s.Help)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
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
	around     query.Model // sandwich, keep, drop, hideFrames, showFrom, only
}

func addSourceFlags(fs *flag.FlagSet) *sourceFlags {
	s := &sourceFlags{}
	fs.Var(&s.head, "head", "head profile `FILE`s, one per run, oldest first (repeatable, or several after one flag)")
	fs.Var(&s.base, "base", "base profile `FILE`s, one per run, oldest first")
	fs.Var(&s.system, "system", "extra `REGEX` marking system frames (name or module), repeatable")
	s.maxNodes = fs.Int("max-nodes", query.DefaultMaxNodes, "merge small nodes so at most `N` are returned")
	s.parse = parseFlags(fs)
	s.store = dsnFlag(fs) // stored runs instead of files (with --model)
	s.model = fs.String("model", "", "the query as Grafana sends it, a `JSON` object (docs/QUERIES.md); with --dsn or --settings")
	fs.StringVar(&s.around.Sandwich, "sandwich", "", "answer the callers and callees trees of `FUNCTION` (flamegraph, diff)")
	fs.StringVar(&s.around.Keep, "keep", "", "keep only the stacks through a frame matching `REGEX` (pprof's -focus)")
	fs.StringVar(&s.around.Drop, "drop", "", "drop the stacks through a frame matching `REGEX` (pprof's -ignore)")
	fs.StringVar(&s.around.Hide, "hide", "", "remove the frames matching `REGEX` from the stacks (pprof's -hide)")
	fs.StringVar(&s.around.ShowFrom, "show-from", "", "cut the stacks above their first frame matching `REGEX` (pprof's -show_from)")
	fs.StringVar(&s.around.Only, "only", "", "new or removed: keep only the stacks new in head or gone from it (a comparison)")
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
	unit, sampleType       string
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
	if l.unit, l.sampleType, l.headTotals, err = loadSide(l.b, tree.Head, s.head.listFlag, o); err != nil {
		return nil, err
	}
	if len(s.base.listFlag) > 0 {
		var baseUnit string
		if baseUnit, _, l.baseTotals, err = loadSide(l.b, tree.Base, s.base.listFlag, o); err != nil {
			return nil, err
		}
		if baseUnit != l.unit {
			return nil, fmt.Errorf("head is in %s but base in %s: profiles of different kinds cannot be compared", l.unit, baseUnit)
		}
	}
	return l, nil
}

// answer is how a tree query is printed, and whether it gates.
type answer struct {
	m            query.Model
	unit         string
	sampleType   string // pprof's sample type name (the profile type of a stored query)
	rules        *sysframes.Rules
	output       string
	writes       writesFlag
	top          int
	gate         bool
	minBaseShare float64
	sourceRoot   string
	// loop and plan make the verdict a sequential look (--max-runs).
	loop *planFlags
	plan *stats.Plan
	// report names what a report output shows beyond the engine.
	report *reportSource
}

// check rejects outputs and the gate where the query cannot have them.
func (a *answer) check() error {
	names := []string{a.output}
	for _, w := range a.writes {
		names = append(names, w.output)
	}
	for _, name := range names {
		o, _ := outputNamed(name)
		why := o.allows(a.m)
		switch {
		case why != "":
			return usageError{errors.New(why)}
		case !a.m.IsTree() && (name != a.output || o.name != "json" && o.name != "table"):
			return usageError{fmt.Errorf("a %s query answers --output json or table, and writes no files", a.m.QueryType)}
		case a.m.Sandwich != "" && name != "json":
			return usageError{fmt.Errorf("a sandwich answers two trees: --output json, not %s", name)}
		}
	}
	switch {
	case a.gate && !a.m.IsDiff() && !a.m.Spec().ListsChangePoints:
		return usageError{errors.New("--fail-on-regression needs a comparison (base runs) or a changepoints query")}
	case (a.output == "verdict" || *a.loop.maxRuns != 0) && !a.m.IsDiff():
		return usageError{errors.New("--output verdict and --max-runs need a comparison (base runs)")}
	}
	var err error
	a.plan, err = a.loop.plan(*a.m.Alpha, a.minBaseShare, a.m.Normalize)
	return err
}

// write prints the answer of a tree query and applies the gate.
func (a *answer) write(out io.Writer, t *query.Tree) error {
	a.unit = t.Unit
	var v *verdict.Verdict
	if a.m.IsDiff() {
		var err error
		if v, err = t.Verdict(query.Judge{MinBaseShare: a.minBaseShare, Plan: a.plan}); err != nil {
			return err
		}
	}
	c := &computed{answer: a, t: t, v: v}
	err := c.writeFiles()
	if err == nil {
		o, _ := outputNamed(a.output)
		err = o.write(c, out)
	}
	switch {
	case err != nil || v == nil:
		return err
	case a.plan != nil:
		return lookGate(v)
	case a.gate:
		return gate(v)
	}
	return nil
}

// stored runs a query model against ClickHouse through the data source's
// executor (with the tables, system-frame rules and memory budget of
// --settings), so CI jobs get exactly what the dashboards show.
func (a *answer) stored(ctx context.Context, sf *storeFlags, model string, out io.Writer) error {
	if !sf.set() || model == "" {
		return usageError{errors.New("a stored query needs --dsn (or --settings) and --model")}
	}
	m, err := query.Parse([]byte(model))
	if err != nil {
		return usageError{err}
	}
	a.m = m
	if err := a.check(); err != nil {
		return err
	}
	e, err := sf.executor(false)
	if err != nil {
		return err
	}
	defer e.Store.Close()
	a.rules = e.Rules
	if m.IsTree() {
		a.report = &reportSource{title: storedTitle(m), subtitle: string(m.QueryType), runs: func() (data.Frames, error) {
			runs := m
			runs.QueryType, runs.Variants = query.Runs, false
			return e.Execute(ctx, runs, query.Range{})
		}}
		_, err := query.AnswerTree(ctx, e, m, func(t *query.Tree) (struct{}, error) { return struct{}{}, a.write(out, t) })
		return err
	}
	ans, err := e.Answer(ctx, m, query.Range{})
	if err != nil {
		return err
	}
	switch {
	case m.Spec().ListsChangePoints:
		return changePointsOutput(out, ans, a.output, a.gate)
	case a.output == "json":
		return writeJSON(out, ans.Frames)
	}
	return writeFrames(out, ans.Frames)
}

// localModel completes m as the model of a query on the files: the head
// files are build "head" and the base files build "base", with --max-nodes;
// the query model's rules apply (a usage error when they fail).
func (s *sourceFlags) localModel(m query.Model) (query.Model, error) {
	heads, bases := len(s.head.listFlag), len(s.base.listFlag)
	m.App, m.MaxNodes, m.Head.Builds = "files", *s.maxNodes, []string{"head"}
	a := s.around
	m.Sandwich, m.Keep, m.Drop, m.Hide, m.ShowFrom, m.Only = a.Sandwich, a.Keep, a.Drop, a.Hide, a.ShowFrom, a.Only
	if bases > 0 {
		m.Base.Builds = []string{"base"}
	}
	switch {
	case !m.IsTree():
		return m, usageError{fmt.Errorf("--type must be flamegraph, diff or functions, not %q", m.QueryType)}
	case heads == 0:
		return m, usageError{errors.New("no --head files")}
	case m.Spec().Base == query.Required && bases == 0:
		return m, usageError{fmt.Errorf("a %s needs --base files", m.QueryType)}
	case m.Spec().Base == query.Unused && bases > 0:
		return m, usageError{errors.New("--base files need --type diff or functions")}
	}
	if err := m.Validate(); err != nil {
		return m, usageError{err}
	}
	return m, nil
}

// loadSide parses every file of one side into the engine (one run each, in
// the order given: name them chronologically) and returns their common
// unit, the first file's sample type and each file's total.
func loadSide(b *tree.Builder, side tree.Side, files []string, o ingest.Options) (unit, sampleType string, totals []int64, err error) {
	totals = make([]int64, len(files))
	b.SetRuns(side, len(files))
	for run, name := range files {
		p, err := parseFile(name, o)
		if err != nil {
			return "", "", nil, err
		}
		if unit != "" && p.Unit != unit {
			return "", "", nil, fmt.Errorf("%s: unit %s differs from the other runs' %s", name, p.Unit, unit)
		}
		unit, totals[run] = p.Unit, p.Total()
		if sampleType == "" {
			sampleType = p.SampleType
		}
		if err := b.AddRunProfile(side, run, p); err != nil {
			return "", "", nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return unit, sampleType, totals, nil
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
