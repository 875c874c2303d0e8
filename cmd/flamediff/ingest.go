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
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// ingestCmd parses profile files and stores each as a run. Every file is
// parsed completely before anything is written, so bad input stores
// nothing; then each run commits on its own.
func ingestCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	key := runKeyFlags(fs)
	run := fs.String("run", "", "run `NAME` (required for one FILE; many files or a directory name each run by its file)")
	start := fs.String("time", "", "run start as `RFC3339` (default: the profile's, else now)")
	commit := fs.String("commit", "", "commit `SHA` of the build")
	branch := fs.String("branch", "", "branch `NAME` of the build")
	var labels listFlag
	fs.Var(&labels, "label", "run label `k=v` (repeatable)")
	runAttribute := fs.String("run-attribute", "", "OTLP: the attribute whose value names the run "+
		"(default: "+ingest.DefaultRunAttribute+" for profiles; for traces each trace is a run, named by its id)")
	parse := parseFlags(fs)
	return func(ctx context.Context, args []string, out io.Writer) error {
		if len(args) == 0 {
			return usageError{errors.New("ingest takes a profile FILE, many files or a directory of them")}
		}
		row, _ := ingest.Lookup(parse.format)
		otlpFormat := row.Runs
		single := len(args) == 1 && !isDir(args[0])
		if otlpFormat && !single {
			return usageError{fmt.Errorf("--format %s takes one FILE (it names its runs)", parse.format)}
		}
		if !otlpFormat { // OTLP data names its runs
			if err := key.check(); err != nil {
				return err
			}
			if single {
				if err := requireFlag("run", *run); err != nil {
					return err
				}
			} else if *run != "" {
				return usageError{errors.New("--run names one file's run: many files are named by their files")}
			}
		}
		// Before parsing: a large file should not be read for nothing.
		if err := dsn.require(); err != nil {
			return err
		}
		meta := storage.RunMeta{App: key.app, Build: key.build, Run: *run, Commit: *commit, Branch: *branch}
		if *start != "" {
			t, err := time.Parse(time.RFC3339, *start)
			if err != nil {
				return usageError{fmt.Errorf("--time %q is not RFC3339 (e.g. 2026-09-01T09:00:00Z)", *start)}
			}
			meta.Start = t
		}
		var err error
		if meta.Labels, err = parseLabels(labels); err != nil {
			return err
		}
		if otlpFormat {
			return ingestRuns(ctx, dsn, parse, *runAttribute, meta, args[0], out)
		}
		o, err := parse.options()
		if err != nil {
			return err
		}
		files, err := runFiles(args)
		if err != nil {
			return err
		}
		if *run == "" {
			names := make(map[string]string, len(files))
			for _, file := range files {
				name := runName(file)
				if other, dup := names[name]; dup {
					return usageError{fmt.Errorf("%s and %s would both be run %q", other, file, name)}
				}
				names[name] = file
			}
		}
		profiles := make([]*profile.Profile, len(files))
		for i, file := range files {
			if profiles[i], err = profilefile.Parse(file, o); err != nil {
				return err
			}
		}
		return withStore(dsn, func(store *storage.Store) error {
			for i, p := range profiles {
				m := meta
				if m.Run == "" {
					m.Run = runName(files[i])
				}
				if err := store.Write(ctx, m, p, progress(os.Stderr, "storing "+files[i])); err != nil {
					return fmt.Errorf("%s: %w", files[i], err)
				}
				if _, err := fmt.Fprintf(out, "stored %s/%s/%s: %d samples, total %d %s\n",
					m.App, m.Build, m.Run, len(p.Samples), p.Total(), p.Unit); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// isDir reports whether path is a directory (a missing file is not: its
// open names it).
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// runFiles expands the arguments of ingest: files as given, a directory
// as its files (not its subdirectories), by name.
func runFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		if !isDir(a) {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := len(files)
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no files in the directory", a)
		}
	}
	return files, nil
}

// runName is the run a file of many is stored as: its name without the
// format's extension (and .gz).
func runName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".gz")
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// parseOptions holds the flags that say how profile files are read.
type parseOptions struct {
	format, sampleType string
	sourceMaps         string
	strict, threads    bool
	warn               io.Writer
}

func parseFlags(fs *flag.FlagSet) *parseOptions {
	o := &parseOptions{warn: fs.Output()}
	fs.StringVar(&o.format, "format", "auto", "input `FORMAT`: "+ingest.Names()+" (docs/FORMATS.md)")
	fs.StringVar(&o.sampleType, "sample-type", "", "pprof sample `TYPE` to read, e.g. alloc_space (default: the profile's default)")
	fs.BoolVar(&o.strict, "strict", false, "fail on perf script lines the collapse ignores instead of counting them")
	fs.BoolVar(&o.threads, "threads", false, "put each sample's thread at the root of its stack ("+threadFormats()+"; docs/FORMATS.md)")
	fs.StringVar(&o.sourceMaps, "source-maps", "", "`DIR` of source maps (main-3F2A9C1B.js.map for main-3F2A9C1B.js): name bundled scripts' functions by their original sources (cpuprofile, trace-events; a file:// script's own map is found beside it; docs/FORMATS.md)")
	return o
}

// threadFormats lists the formats whose row says what a thread is, for
// --threads' help.
func threadFormats() string {
	var names []string
	for _, f := range ingest.Formats() {
		if f.Threads != "" {
			names = append(names, string(f.Name))
		}
	}
	return strings.Join(names, ", ")
}

// options returns the ingest options; notes about skipped input go to the
// command's error output.
func (o *parseOptions) options() (ingest.Options, error) {
	f, err := ingest.ParseFormat(o.format)
	if err != nil {
		return ingest.Options{}, usageError{err}
	}
	return ingest.Options{Format: f, SampleType: o.sampleType, Strict: o.strict, Threads: o.threads,
		SourceMaps: profilefile.SourceMaps(o.sourceMaps),
		Warn:       func(note string) { fmt.Fprintln(o.warn, "flamediff:", note) }}, nil
}

// runKey holds the --app and --build flags that name a build.
type runKey struct{ app, build string }

func runKeyFlags(fs *flag.FlagSet) *runKey {
	k := &runKey{}
	fs.StringVar(&k.app, "app", "", "app `NAME` (required)")
	fs.StringVar(&k.build, "build", "", "build `NAME` (required)")
	return k
}

// requireFlag is the usage error of a required flag left empty, or nil.
func requireFlag(name, value string) error {
	if value == "" {
		return usageError{fmt.Errorf("--%s is required", name)}
	}
	return nil
}

func (k *runKey) check() error {
	if k.app == "" || k.build == "" {
		return usageError{errors.New("--app and --build are required")}
	}
	return nil
}

// parseLabels turns k=v flags into a map; the value may contain '='.
func parseLabels(labels []string) (map[string]string, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(labels))
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, usageError{fmt.Errorf("--label %q must be k=v with a non-empty k", l)}
		}
		if _, dup := m[k]; dup {
			return nil, usageError{fmt.Errorf("--label %q given twice", k)}
		}
		m[k] = v
	}
	return m, nil
}

// progress returns a progress callback drawing a bar on w when w is a
// terminal, and nil (no output) when it is a pipe or a file, so that logs
// of CI jobs stay clean.
func progress(w *os.File, what string) func(done, total int) {
	if !term.IsTerminal(int(w.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish())
		}
		_ = bar.Set(done) // drawing errors on a terminal are not worth failing an ingest
		if done >= total {
			_ = bar.Finish()
		}
	}
}
