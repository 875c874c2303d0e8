package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/export"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
	"github.com/flamediff/flamediff/pkg/web"
)

// need is what an output needs of the query.
type need int

const (
	anyQuery   need = iota // any query type
	treeQuery              // a tree: flamegraph, diff or functions
	flameQuery             // a flame graph: flamegraph or diff
	diffQuery              // a comparison (base runs)
)

func (n need) String() string {
	return [...]string{"any query", "a flamegraph, diff or functions query", "a flamegraph or diff query", "a comparison (base runs)"}[n]
}

// output is a way query writes its answer: to stdout (--output) or to a
// file (--write NAME=FILE), every one from the same computation (one
// engine, one verdict). The help, the check and docs/CLI.md read this
// table.
type output struct {
	name  string
	needs need
	help  string
	write func(c *computed, w io.Writer) error
}

// computed is one tree query's computation that every output writes from.
type computed struct {
	*answer
	t *query.Tree
	v *verdict.Verdict // nil without a base
}

var outputs = []output{
	{"table", anyQuery, "the top functions (a diff's under its verdict), or any frames as tables", (*computed).writeTable},
	{"json", anyQuery, "the data frames, as the data source answers", func(c *computed, w io.Writer) error {
		frames, err := c.t.Render(c.v)
		if err != nil {
			return err
		}
		return writeJSON(w, frames)
	}},
	{"folded", treeQuery, "the averaged tree as folded stacks (a diff's as base and head columns)", func(c *computed, w io.Writer) error {
		return writeFolded(w, c.t.Builder, c.m, c.rules)
	}},
	{"pprof", treeQuery, "the tree as a pprof profile (docs/EXPORT.md)", func(c *computed, w io.Writer) error { return c.writeExport(w, c.t.Builder, "pprof") }},
	{"speedscope", treeQuery, "the tree as a speedscope file (docs/EXPORT.md)", func(c *computed, w io.Writer) error {
		return c.writeExport(w, c.t.Builder, "speedscope")
	}},
	{"verdict", diffQuery, "the verdict as JSON", func(c *computed, w io.Writer) error { return json.NewEncoder(w).Encode(c.v) }},
	{"markdown", diffQuery, "the verdict as a pull request comment", func(c *computed, w io.Writer) error {
		return writeMarkdown(w, c.v, c.unit, c.top)
	}},
	{"github", diffQuery, "workflow commands annotating the culprits' lines", func(c *computed, w io.Writer) error {
		return writeGitHub(w, c.v, c.sourceRoot)
	}},
	{"report", flameQuery, "the one-file HTML report (docs/REPORT.md), with this verdict", (*computed).writeReport},
	{"result", diffQuery, "the verdict's result alone: PASS, FAIL, INCONCLUSIVE or CONTINUE", func(c *computed, w io.Writer) error {
		_, err := fmt.Fprintln(w, c.v.Result)
		return err
	}},
	{"more", diffQuery, "the runs a side to add before the next look (--max-runs), 0 once decided", func(c *computed, w io.Writer) error {
		more := 0
		if s := c.v.Sequential; s != nil && c.v.Result == verdict.Continue {
			more = cmp.Or(s.More, s.Batch)
		}
		_, err := fmt.Fprintln(w, more)
		return err
	}},
}

// outputNamed returns the output of the name.
func outputNamed(name string) (output, bool) {
	for _, o := range outputs {
		if o.name == name {
			return o, true
		}
	}
	return output{}, false
}

// outputsHelp lists the outputs for --output's and --write's help.
func outputsHelp() string {
	var b strings.Builder
	for _, o := range outputs {
		fmt.Fprintf(&b, "\n  %s: %s", o.name, o.help)
		if o.needs != anyQuery {
			fmt.Fprintf(&b, " (needs %s)", o.needs)
		}
	}
	return b.String()
}

// allows says why query m cannot have output o ("" when it can).
func (o output) allows(m query.Model) string {
	ok := map[need]bool{anyQuery: true, treeQuery: m.IsTree(), flameQuery: m.Spec().Flame, diffQuery: m.IsDiff()}[o.needs]
	if ok {
		return ""
	}
	return fmt.Sprintf("--output %s needs %s", o.name, o.needs)
}

// writesFlag is --write NAME=FILE, repeatable: outputs to files.
type writesFlag []struct{ output, file string }

func (w *writesFlag) String() string { return "" }

func (w *writesFlag) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if _, known := outputNamed(name); !ok || !known || file == "" {
		return fmt.Errorf("want NAME=FILE with NAME one of the outputs, not %q", v)
	}
	*w = append(*w, struct{ output, file string }{name, file})
	return nil
}

// writeFiles writes each --write output to its file.
func (c *computed) writeFiles() error {
	for _, w := range c.writes {
		o, _ := outputNamed(w.output)
		f, err := os.Create(w.file) // #nosec G304 -- the user names the file to write
		if err != nil {
			return err
		}
		err = o.write(c, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--write %s=%s: %w", w.output, w.file, err)
		}
	}
	return nil
}

// writeTable prints the top functions of any view, under a diff's verdict.
func (c *computed) writeTable(out io.Writer) error {
	if c.v != nil {
		if err := writeVerdict(out, c.v); err != nil {
			return err
		}
	}
	o := c.t.Options()
	rows := c.t.Builder.Functions(o)
	if err := writeFunctions(out, rows, c.m.IsDiff(), c.unit, c.top); err != nil {
		return err
	}
	if len(rows) == 0 {
		if why := c.t.Builder.EmptyNotice(o); why != "" {
			_, err := fmt.Fprintln(out, why)
			return err
		}
	}
	return nil
}

// writeReport writes the report of this computation: the verdict on its
// page is the one the gate and the other outputs read.
func (c *computed) writeReport(out io.Writer) error {
	if c.m.Sandwich != "" {
		return errSandwichReport
	}
	if c.report == nil {
		return errors.New("no runs to report")
	}
	runs, err := c.report.runs()
	if err != nil {
		return err
	}
	r, err := reportPage(c.t, c.v, runs)
	if err != nil {
		return err
	}
	r.Title, r.Subtitle = c.report.title, c.report.subtitle
	return web.WriteReport(out, r)
}

// reportSource is what a report needs beyond the engine: its title and
// the runs frames of its run details.
type reportSource struct {
	title, subtitle string
	runs            func() (data.Frames, error)
}

// writeExport writes the query's tree as pprof or speedscope.
func (c *computed) writeExport(out io.Writer, b *tree.Builder, format string) error {
	t, err := b.Build(query.TreeOptions(b, c.m, c.rules))
	if err != nil {
		return err
	}
	if format == "pprof" {
		return export.PprofTree(out, t, cmp.Or(c.sampleType, c.m.ProfileType, "samples"), c.unit)
	}
	name := c.m.App + " " + strings.Join(c.m.Head.Builds, ",")
	if c.m.IsDiff() {
		name += " vs " + strings.Join(c.m.Base.Builds, ",")
	}
	return export.SpeedscopeTree(out, name, t, c.unit)
}
