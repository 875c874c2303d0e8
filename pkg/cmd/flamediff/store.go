package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/flamediff/flamediff/pkg/storage"
)

// dsnFlag registers the --dsn flag every storage command takes.
func dsnFlag(fs *flag.FlagSet) *string {
	return fs.String("dsn", "", "ClickHouse `DSN`, e.g. clickhouse://default:@127.0.0.1:9000/flamediff")
}

// withStore runs do with the store named by dsn and closes it after; a
// missing DSN is a usage error.
func withStore(dsn string, do func(*storage.Store) error) error {
	if err := requireDSN(dsn); err != nil {
		return err
	}
	store, err := storage.OpenDSN(dsn, storage.Tables{})
	if err != nil {
		return err
	}
	defer store.Close()
	return do(store)
}

// requireDSN reports a missing --dsn as a usage error.
func requireDSN(dsn string) error {
	if dsn == "" {
		return usageError{errors.New("--dsn is required")}
	}
	return nil
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

// migrateCmd creates the database and every missing table, on one server
// or on every host of a cluster.
func migrateCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	cluster := fs.String("cluster", "", "create `NAME`d cluster's local and Distributed tables on each of its hosts (system.clusters)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return withStore(*dsn, func(store *storage.Store) error {
			migrate := store.Migrate
			if *cluster != "" {
				migrate = func(ctx context.Context) error { return store.MigrateCluster(ctx, *cluster) }
			}
			if err := migrate(ctx); err != nil {
				return err
			}
			if err := store.CheckTables(ctx); err != nil {
				return err
			}
			version, err := store.ServerVersion(ctx)
			if err != nil {
				return err
			}
			t := store.Tables()
			_, err = fmt.Fprintf(out, "schema ready on ClickHouse %s: tables %s, %s, %s, %s, %s, %s\n",
				version, t.Runs, t.Stacks, t.Frames, t.Samples, t.RunStacks, t.Changes)
			if err != nil || *cluster == "" {
				return err
			}
			summary, err := store.CheckCluster(ctx)
			if err == nil {
				_, err = fmt.Fprintln(out, summary)
			}
			return err
		})
	}
}
