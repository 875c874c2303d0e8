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

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/web"
)

// reportCmd writes the panel's view of a diff or flame graph as one HTML
// file that opens from disk: a file a CI job can attach to a pull request.
func reportCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	typ := fs.String("type", "diff", "diff or flamegraph (files); --model names its own type")
	var head, base filesFlag
	fs.Var(&head, "head", "head profile `FILE`s, one per run (repeatable, or several after one flag)")
	fs.Var(&base, "base", "base profile `FILE`s, one per run")
	var system listFlag
	fs.Var(&system, "system", "extra `REGEX` marking system frames (name or module), repeatable")
	maxNodes := fs.Int("max-nodes", query.DefaultMaxNodes, "merge small nodes so at most `N` are shown")
	format := fs.String("format", "auto", "input format: auto, pprof, folded or perf")
	dsn := fs.String("dsn", "", "report stored runs of this ClickHouse `DSN` instead of files (with --model)")
	model := fs.String("model", "", "the query, a `JSON` object as Grafana sends it (SPEC §4); with --dsn")
	outFile := fs.String("o", "report.html", "write the report to `FILE`")
	title := fs.String("title", "", "the page's title (default: what is compared)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("unexpected argument %q (profile files go after --head or --base)", args[0])}
		}
		var r web.Report
		var err error
		if *dsn != "" || *model != "" {
			if len(head.listFlag) > 0 || len(base.listFlag) > 0 {
				return usageError{errors.New("--dsn/--model report stored runs; --head/--base files do not apply")}
			}
			r, err = storedReport(ctx, *dsn, *model)
		} else {
			r, err = fileReport(query.Type(*typ), head.listFlag, base.listFlag, *format, system, *maxNodes)
		}
		if err != nil {
			return err
		}
		if *title != "" {
			r.Title = *title
		}
		f, err := os.Create(*outFile)
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

// fileReport renders every variant of the files' tree (so the toolbar's
// toggles work offline) and one run per file for the run details.
func fileReport(typ query.Type, head, base []string, format string, system []string, maxNodes int) (web.Report, error) {
	if typ != query.Diff && typ != query.FlameGraph {
		return web.Report{}, usageError{fmt.Errorf("--type must be diff or flamegraph, not %q", typ)}
	}
	m := query.Model{QueryType: typ, App: "files", MaxNodes: maxNodes, Variants: true,
		Head: query.Selection{Builds: []string{"head"}}}
	if len(base) > 0 {
		m.Base.Builds = []string{"base"}
	}
	if err := validateLocal(&m, len(head), len(base), "json"); err != nil {
		return web.Report{}, usageError{err}
	}
	l, err := loadLocal(head, base, format, system)
	if err != nil {
		return web.Report{}, err
	}
	frames := query.Render(l.b, m, l.rules, l.unit)
	frames = append(frames, query.RunsFrames(fileRuns("head", head, l.headTotals), fileRuns("base", base, l.baseTotals), l.unit)...)
	title := names(head)
	if len(base) > 0 {
		title += " vs " + names(base)
	}
	return web.Report{Title: title, Frames: frames}, nil
}

// fileRuns describes each file as a run of build side, named by the file.
func fileRuns(side string, files []string, totals []int64) []storage.Run {
	runs := make([]storage.Run, len(files))
	for i, f := range files {
		runs[i] = storage.Run{Build: side, Run: filepath.Base(f), Total: totals[i]}
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
// every variant of a flame graph and, for a flame graph or diff, the runs
// of the same selections for the run details.
func storedReport(ctx context.Context, dsn, model string) (web.Report, error) {
	if dsn == "" || model == "" {
		return web.Report{}, usageError{errors.New("a stored report needs both --dsn and --model")}
	}
	m, err := query.Parse([]byte(model))
	if err != nil {
		return web.Report{}, usageError{err}
	}
	flame := m.QueryType == query.Diff || m.QueryType == query.FlameGraph
	m.Variants = m.Variants || flame
	rules, err := sysframes.New(nil)
	if err != nil {
		return web.Report{}, err
	}
	var frames data.Frames
	err = withStore(dsn, func(store *storage.Store) error {
		exec := &query.Executor{Store: store, Rules: rules}
		if frames, err = exec.Execute(ctx, m, query.Range{}); err != nil || !flame {
			return err
		}
		runs := m
		runs.QueryType = query.Runs
		more, err := exec.Execute(ctx, runs, query.Range{})
		frames = append(frames, more...)
		return err
	})
	if err != nil {
		return web.Report{}, err
	}
	title := m.App + " " + strings.Join(m.Head.Builds, ", ")
	if m.IsDiff() {
		title += " vs " + strings.Join(m.Base.Builds, ", ")
	}
	return web.Report{Title: title, Subtitle: string(m.QueryType), Frames: frames}, nil
}
