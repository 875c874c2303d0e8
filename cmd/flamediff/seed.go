package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// seedCmd loads the demo data set (pkg/demo). Runs already stored are left
// alone and changes already recorded are not recorded again, so running it
// twice (every `docker compose up`) leaves the data as they are.
func seedCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	seed := fs.Int64("seed", 1, "random `SEED` of the demo generator: the same seed gives the same data")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return withStore(dsn, func(store *storage.Store) error {
			if err := store.Migrate(ctx); err != nil {
				return err
			}
			for _, app := range demo.Generate(*seed) {
				if err := seedApp(ctx, store, app, out); err != nil {
					return fmt.Errorf("seeding %s: %w", app.Name, err)
				}
			}
			return nil
		})
	}
}

// seedApp stores the runs and changes of app that are not stored yet and
// prints one summary line.
func seedApp(ctx context.Context, store *storage.Store, app demo.App, out io.Writer) error {
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
				Commit: b.Commit, Branch: "main", Labels: map[string]string{"source": "demo"},
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
