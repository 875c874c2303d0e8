package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/flamediff/flamediff/pkg/storage"
)

// appsCmd lists the apps that have visible runs, one per line.
func appsCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return withStore(dsn, func(store *storage.Store) error {
			apps, err := store.Apps(ctx)
			for _, a := range apps {
				fmt.Fprintln(out, a)
			}
			return err
		})
	}
}

// buildsCmd lists an app's builds, oldest first, with their run counts.
func buildsCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	app := fs.String("app", "", "app `NAME` (required)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := requireFlag("app", *app); err != nil {
			return err
		}
		return withStore(dsn, func(store *storage.Store) error {
			builds, err := store.Builds(ctx, *app)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "BUILD\tFIRST RUN\tRUNS")
			for _, b := range builds {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", b.Name, b.Time.UTC().Format(time.RFC3339), b.Runs)
			}
			return tw.Flush()
		})
	}
}

// runsCmd lists an app's runs (of some builds), by start time.
func runsCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	app := fs.String("app", "", "app `NAME` (required)")
	var builds listFlag
	fs.Var(&builds, "build", "build `NAME` (repeatable; default: every build)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := requireFlag("app", *app); err != nil {
			return err
		}
		return withStore(dsn, func(store *storage.Store) error {
			runs, err := store.Runs(ctx, *app, builds, nil)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "BUILD\tRUN\tSTART\tDURATION\tSAMPLES\tSTACKS\tTOTAL\tUNIT\tCOMMIT")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Build, r.Run, r.Start.UTC().Format(time.RFC3339),
					r.Duration, r.Samples, r.Stacks, r.Total, r.Unit, r.Commit)
			}
			return tw.Flush()
		})
	}
}

// deleteCmd hides a run; `gc` later removes its rows.
func deleteCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	key := runKeyFlags(fs)
	run := fs.String("run", "", "run `NAME` (required)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := key.check(); err != nil {
			return err
		}
		if err := requireFlag("run", *run); err != nil {
			return err
		}
		return withStore(dsn, func(store *storage.Store) error {
			if err := store.DeleteRun(ctx, key.app, key.build, *run); err != nil {
				return err
			}
			_, err := fmt.Fprintf(out, "deleted %s/%s/%s\n", key.app, key.build, *run)
			return err
		})
	}
}

// gcCmd removes the rows of superseded, deleted and never committed
// ingests older than the grace period.
func gcCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	grace := fs.Duration("grace", time.Hour, "keep what is younger than this `DURATION`: longer than any ingest or query runs")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if *grace < 0 {
			return usageError{fmt.Errorf("--grace %v is negative", *grace)}
		}
		return withStore(dsn, func(store *storage.Store) error {
			res, err := store.GC(ctx, *grace)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "removed %d superseded and %d uncommitted ingests: %d sample rows\n",
				res.Superseded, res.Uncommitted, res.SampleRows)
			return err
		})
	}
}
