package teststore

import (
	"context"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/storage"
)

// StoreDemo stores builds [from, to) of a demo app (pkg/demo) with their
// runs and changes, as `flamediff seed` stores the whole demo, in one
// commit: a few builds of it cost a test a second, the whole demo half a
// minute.
func StoreDemo(ctx context.Context, store *storage.Store, app demo.App, from, to int) error {
	var runs []storage.RunProfile
	for _, b := range app.Builds[from:to] {
		for _, r := range b.Runs {
			runs = append(runs, storage.RunProfile{Meta: storage.RunMeta{App: app.Name, Build: r.Build, Run: r.Run, Start: r.Start,
				Commit: b.Commit}, Profile: r.Profile})
		}
		if len(b.Modified)+len(b.Added)+len(b.Removed) > 0 {
			c := changes.Changes{Modified: b.Modified, Added: b.Added, Removed: b.Removed}
			if err := store.SaveChanges(ctx, app.Name, b.Name, c); err != nil {
				return err
			}
		}
	}
	return store.WriteRuns(ctx, runs, nil)
}
