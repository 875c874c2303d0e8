package teststore

import (
	"context"
	"testing"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Migrated opens the store of dsn (chtest.DSN gives a fresh database),
// migrates it and closes it when the test ends.
func Migrated(t testing.TB, dsn string) *storage.Store {
	t.Helper()
	store, err := Open(dsn, storage.Tables{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return store
}

// StoreDemo stores builds [from, to) of a demo app (pkg/demo) with their
// runs and changes, as `flamediff seed` stores the whole demo, in one
// commit: a few builds of it cost a test a second, the whole demo half a
// minute.
func StoreDemo(ctx context.Context, store *storage.Store, app demo.App, from, to int) error {
	var runs []storage.Ingestion
	for _, b := range app.Builds[from:to] {
		for _, r := range b.Runs {
			runs = append(runs, storage.Ingestion{Meta: storage.RunMeta{App: app.Name, Build: r.Build, Run: r.Run, Start: r.Start,
				Commit: b.Commit}, Profile: r.Profile})
		}
		if len(b.Modified)+len(b.Added)+len(b.Removed) > 0 {
			c := changes.Changes{Modified: b.Modified, Added: b.Added, Removed: b.Removed}
			if err := store.SaveChanges(ctx, app.Name, b.Name, c); err != nil {
				return err
			}
		}
	}
	return store.IngestRuns(ctx, runs, nil)
}
