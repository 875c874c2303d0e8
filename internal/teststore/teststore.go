// Package teststore opens a storage.Store for the integration tests of the
// packages above the store (chtest gives the server and a fresh database);
// the plugin and the CLI build their options from settings instead. It is
// the store layer of the test kit: internal/testkit's doc says why the kit
// is two packages.
package teststore

import (
	"context"
	"fmt"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Open is storage.Open with a DSN such as
// clickhouse://default:@127.0.0.1:9000/flamediff (the path is the
// database) and default options otherwise.
func Open(dsn string, tables storage.Tables) (*storage.Store, error) {
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("storage: bad DSN: %w", err)
	}
	return storage.Open(storage.Options{ClickHouse: o, Tables: tables})
}

// Opened opens dsn's database with the default tables as they are (not
// migrated); the store is closed when the test ends.
func Opened(t testing.TB, dsn string) *storage.Store {
	t.Helper()
	store, err := Open(dsn, storage.Tables{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// Migrated is Opened with the tables migrated.
func Migrated(t testing.TB, dsn string) *storage.Store {
	t.Helper()
	store := Opened(t, dsn)
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return store
}

// Fresh opens a fresh database, migrated, and returns it with its DSN: on
// the private cluster (migrated on every shard) when cluster, else on one
// server.
func Fresh(t testing.TB, cluster bool) (*storage.Store, string) {
	t.Helper()
	if !cluster {
		dsn := chtest.DSN(t)
		return Migrated(t, dsn), dsn
	}
	dsn := chtest.ClusterDSN(t)
	store := Opened(t, dsn)
	if err := store.MigrateCluster(context.Background(), chtest.ClusterName); err != nil {
		t.Fatal(err)
	}
	return store, dsn
}

// Runs lists every stored run of app's builds.
func Runs(t testing.TB, store *storage.Store, app string, builds ...string) []storage.Run {
	t.Helper()
	runs, err := store.Runs(context.Background(), app, builds, nil)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
