package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/verdict"
	"github.com/flamediff/flamediff/pkg/web"
)

// reportCmd writes the panel's view of a diff or flame graph as one HTML
// file that opens from disk: a file a CI job can attach to a pull request.
func reportCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	typ := fs.String("type", "diff", "the query type of files (--model names its own):\n"+
		typesHelp(func(s query.Spec) bool { return s.Flame }))
	src := addSourceFlags(fs)
	outFile := fs.String("o", "report.html", "write the report to `FILE`")
	title := fs.String("title", "", "the page's title (default: what is compared)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		stored, err := src.check(args)
		if err != nil {
			return err
		}
		if src.around.Sandwich != "" {
			return errSandwichReport
		}
		var r web.Report
		if stored {
			r, err = storedReport(ctx, src.store, *src.model)
		} else {
			r, err = fileReport(ctx, query.Type(*typ), src)
		}
		if err != nil {
			return err
		}
		if *title != "" {
			r.Title = *title
		}
		f, err := os.Create(*outFile) // #nosec G703 -- the user names the file to write
		if err != nil {
			return err
		}
		if err := web.WriteReport(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "wrote %s\n", *outFile)
		return err
	}
}

// errSandwichReport: the report's page draws one tree at a time.
var errSandwichReport = usageError{errors.New("the report draws one tree: a sandwich's two trees come from query --output json")}

// fileReport renders every variant of the files' tree (so the toolbar's
// toggles work offline), its functions (the top table) and one run per
// file for the run details.
func fileReport(ctx context.Context, typ query.Type, src *sourceFlags) (web.Report, error) {
	if spec, _ := query.Lookup(typ); !spec.Flame {
		return web.Report{}, usageError{fmt.Errorf("--type must be diff or flamegraph, not %q", typ)}
	}
	head, base := src.head.listFlag, src.base.listFlag
	m, err := src.localModel(query.Model{QueryType: typ})
	if err != nil {
		return web.Report{}, err
	}
	l, err := src.load()
	if err != nil {
		return web.Report{}, err
	}
	runs := frames.Runs(fileRuns("head", head, l.headTotals), fileRuns("base", base, l.baseTotals), l.unit)
	t := &query.Tree{Builder: l.b, Model: m, Rules: l.rules, Unit: l.unit}
	r, err := query.AnswerLocal(ctx, t, func(t *query.Tree) (web.Report, error) { return reportPage(t, nil, runs) })
	r.Title = filesTitle(head, base)
	return r, err
}

// reportPage is the report of tree query t: every variant of its flame
// graph (so the toolbar's toggles work offline), its functions (the top
// table) and the runs frames given (the run details). A diff's culprits
// carry verdict v: the caller's judge's (query --write report, whose gate
// reads the same), or NewJudge's when nil.
func reportPage(t *query.Tree, v *verdict.Verdict, runs data.Frames) (web.Report, error) {
	page := *t
	page.Model.Variants = true
	answer, err := page.Render(v)
	if err != nil {
		return web.Report{}, err
	}
	page.Model.QueryType, page.Model.Variants = query.Functions, false
	functions, err := page.Render(v)
	if err != nil {
		return web.Report{}, err
	}
	return web.Report{Frames: append(append(answer, functions...), runs...)}, nil
}

// filesTitle is a report's title for the files it compares.
func filesTitle(head, base []string) string {
	if len(base) == 0 {
		return names(head)
	}
	return names(head) + " vs " + names(base)
}

// storedTitle is a report's title for stored runs: the app and builds.
func storedTitle(m query.Model) string {
	title := m.App + " " + strings.Join(m.Head.Builds, ", ")
	if m.IsDiff() {
		title += " vs " + strings.Join(m.Base.Builds, ", ")
	}
	return title
}

// fileRuns describes each file as a run of build side, named by the file.
func fileRuns(side string, files []string, totals []int64) []frames.Run {
	runs := make([]frames.Run, len(files))
	for i, f := range files {
		runs[i] = frames.Run{Build: side, Run: filepath.Base(f), Total: totals[i]}
	}
	return runs
}

// names lists files by base name, or counts them when there are many.
func names(files []string) string {
	if len(files) > 3 {
		return fmt.Sprintf("%d files (%s, ...)", len(files), filepath.Base(files[0]))
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return strings.Join(out, ", ")
}

// storedReport runs the model through the data source's executor, with
// every variant of a flame graph and, for a flame graph or diff, the
// functions (the top table) and the runs of the same selections (the run
// details).
func storedReport(ctx context.Context, sf *storeFlags, model string) (web.Report, error) {
	if !sf.set() || model == "" {
		return web.Report{}, usageError{errors.New("a stored report needs --dsn (or --settings) and --model")}
	}
	m, err := query.Parse([]byte(model))
	if err != nil {
		return web.Report{}, usageError{err}
	}
	if m.Sandwich != "" {
		return web.Report{}, errSandwichReport
	}
	flame := m.Spec().Flame
	m.Variants = m.Variants || flame
	exec, err := sf.executor(false)
	if err != nil {
		return web.Report{}, err
	}
	defer exec.Store.Close()
	frames, err := exec.Execute(ctx, m, query.Range{})
	if err != nil {
		return web.Report{}, err
	}
	if flame {
		for _, typ := range []query.Type{query.Functions, query.Runs} {
			more := m
			more.QueryType, more.Variants = typ, false
			answer, err := exec.Execute(ctx, more, query.Range{})
			if err != nil {
				return web.Report{}, err
			}
			frames = append(frames, answer...)
		}
	}
	return web.Report{Title: storedTitle(m), Subtitle: string(m.QueryType), Frames: frames}, nil
}
