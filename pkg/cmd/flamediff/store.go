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

// openStore opens the store named by dsn; a missing DSN is a usage error.
func openStore(dsn string) (*storage.Store, error) {
	if dsn == "" {
		return nil, usageError{errors.New("--dsn is required")}
	}
	return storage.OpenDSN(dsn, storage.Tables{})
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

// migrateCmd creates the database and every missing table.
func migrateCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		store, err := openStore(*dsn)
		if err != nil {
			return err
		}
		defer store.Close()
		if err := store.Migrate(ctx); err != nil {
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
		_, err = fmt.Fprintf(out, "schema ready on ClickHouse %s: tables %s, %s, %s, %s, %s\n",
			version, t.Runs, t.Stacks, t.Frames, t.Samples, t.Changes)
		return err
	}
}
