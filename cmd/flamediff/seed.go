package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// seedCmd loads the demo data set (pkg/demo), or with a DIR the runs of
// its files, each subdirectory a build, read by the format table. Runs
// already stored are left alone and changes already recorded are not
// recorded again, so running it twice (every `docker compose up`) leaves
// the data as they are.
func seedCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	seed := fs.Int64("seed", 1, "random `SEED` of the demo generator: the same seed gives the same data")
	app := fs.String("app", "", "with DIR: app `NAME` of its runs (default: DIR's name)")
	parse := parseFlags(fs)
	return func(ctx context.Context, args []string, out io.Writer) error {
		if len(args) > 1 {
			return usageError{errors.New("seed takes at most one DIR (a subdirectory a build, a file a run)")}
		}
		// Every file is read before the store: bad input stores nothing.
		var apps []demo.App
		source := "demo"
		if len(args) == 1 {
			o, err := parse.options()
			if err != nil {
				return err
			}
			a, err := filesApp(args[0], *app, o, parse.format)
			if err != nil {
				return err
			}
			apps, source = []demo.App{a}, "seed"
		}
		return withStore(dsn, func(store *storage.Store) error {
			if err := store.Migrate(ctx); err != nil {
				return err
			}
			if source == "demo" {
				apps = demo.Generate(*seed)
			}
			for _, app := range apps {
				if err := seedApp(ctx, store, app, source, out); err != nil {
					return fmt.Errorf("seeding %s: %w", app.Name, err)
				}
			}
			return nil
		})
	}
}

// filesApp reads dir as an app: each subdirectory a build (in name order),
// each file in it a run named by the file, or the runs a file names (the
// OTLP formats). A run starts when its profile says, else when its file
// was written.
func filesApp(dir, name string, o ingest.Options, format string) (demo.App, error) {
	app := demo.App{Name: cmp.Or(name, filepath.Base(filepath.Clean(dir)))}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return app, err
	}
	row, _ := ingest.Lookup(format)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b := demo.Build{Name: e.Name()}
		files, err := runFiles([]string{filepath.Join(dir, e.Name())})
		if err != nil {
			return app, err
		}
		for _, file := range files {
			runs, err := seedRuns(file, app.Name, b.Name, row, o)
			if err != nil {
				return app, err
			}
			b.Runs = append(b.Runs, runs...)
		}
		app.Builds = append(app.Builds, b)
	}
	if len(app.Builds) == 0 {
		return app, fmt.Errorf("%s: no build directories (a subdirectory a build, a file a run)", dir)
	}
	return app, nil
}

// seedRuns reads the runs of one file of build.
func seedRuns(file, app, build string, row ingest.FormatInfo, o ingest.Options) ([]demo.Run, error) {
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !row.Runs {
		p, err := parseFile(file, o)
		if err != nil {
			return nil, err
		}
		return []demo.Run{{Build: build, Run: runName(file), Start: cmp.Or(p.Start, info.ModTime().UTC()), Profile: p}}, nil
	}
	data, err := os.ReadFile(file) // #nosec G304 -- a file of the directory the user names
	if err != nil {
		return nil, err
	}
	runs, _, err := ingest.ParseRuns(data, file, row.Name, ingest.RunOptions{SampleType: o.SampleType, App: app, Build: build})
	if err != nil {
		return nil, err
	}
	out := make([]demo.Run, len(runs))
	for i, r := range runs {
		out[i] = demo.Run{Build: build, Run: r.Run, Start: cmp.Or(r.Profile.Start, info.ModTime().UTC()), Profile: r.Profile}
	}
	return out, nil
}

// seedApp stores the runs and changes of app that are not stored yet,
// labelled source (demo or seed), and prints one summary line.
func seedApp(ctx context.Context, store *storage.Store, app demo.App, source string, out io.Writer) error {
	stored, err := storedRuns(ctx, store, app.Name)
	if err != nil {
		return err
	}
	recorded, err := store.Changes(ctx, app.Name, nil)
	if err != nil {
		return err
	}
	var todo []storage.RunMeta
	var profiles []*profile.Profile
	var skipped, changed int
	for _, b := range app.Builds {
		for _, r := range b.Runs {
			if stored[[2]string{r.Build, r.Run}] {
				skipped++
				continue
			}
			todo = append(todo, storage.RunMeta{
				App: app.Name, Build: r.Build, Run: r.Run, Start: r.Start,
				Commit: b.Commit, Branch: "main", Labels: map[string]string{"source": source},
			})
			profiles = append(profiles, r.Profile)
		}
		c := changes.Changes{Modified: sorted(b.Modified), Added: sorted(b.Added), Removed: sorted(b.Removed)}
		if len(c.Modified)+len(c.Added)+len(c.Removed) == 0 || sameChanges(recorded[b.Name], c) {
			continue
		}
		if err := store.SaveChanges(ctx, app.Name, b.Name, c); err != nil {
			return fmt.Errorf("build %s changes: %w", b.Name, err)
		}
		changed++
	}
	err = parallel(ctx, len(todo), seedWorkers, func(ctx context.Context, i int) error {
		if err := store.Write(ctx, todo[i], profiles[i], nil); err != nil {
			return fmt.Errorf("build %s run %s: %w", todo[i].Build, todo[i].Run, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s: %d builds, %d runs ingested, %d already stored, %d builds' changes recorded\n",
		app.Name, len(app.Builds), len(todo), skipped, changed)
	return err
}

// seedWorkers is the number of runs ingested at once: an ingest mostly
// waits for the server, so a few in flight make seeding several times faster.
const seedWorkers = 4

// parallel calls do(ctx, i) for every i in [0, n) on up to workers
// goroutines and returns the first error, cancelling the calls still to come.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := do(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// storedRuns returns the (build, run) keys of app's visible runs; an app
// that has none yet gives an empty set.
func storedRuns(ctx context.Context, store *storage.Store, app string) (map[[2]string]bool, error) {
	apps, err := store.Apps(ctx)
	if err != nil || !slices.Contains(apps, app) {
		return nil, err
	}
	runs, err := store.Runs(ctx, app, nil, nil)
	if err != nil {
		return nil, err
	}
	keys := make(map[[2]string]bool, len(runs))
	for _, r := range runs {
		keys[[2]string{r.Build, r.Run}] = true
	}
	return keys, nil
}

func sorted(names []string) []string {
	return slices.Sorted(slices.Values(names))
}

func sameChanges(a, b changes.Changes) bool {
	return slices.Equal(a.Modified, b.Modified) && slices.Equal(a.Added, b.Added) && slices.Equal(a.Removed, b.Removed)
}
