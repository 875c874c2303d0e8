package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/plugin"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
)

// storeFlags are the flags every storage command takes: the connection
// (--dsn) and the data source's settings (--settings), which give the
// table names, system-frame rules and read limits, and the connection
// when there is no --dsn.
type storeFlags struct{ dsn, settings string }

func dsnFlag(fs *flag.FlagSet) *storeFlags {
	f := &storeFlags{}
	fs.StringVar(&f.dsn, "dsn", "", "ClickHouse `DSN`, e.g. clickhouse://default:@127.0.0.1:9000/flamediff")
	fs.StringVar(&f.settings, "settings", "", "the data source's provisioning `FILE` (YAML): tables, system frames, "+
		"limits, and the connection when --dsn is not given")
	return f
}

// set reports whether the flags name a store.
func (f *storeFlags) set() bool { return f.dsn != "" || f.settings != "" }

// open opens the store the flags name and returns the system-frame rules
// of the settings (the built-in ones without --settings): for the commands
// that build trees.
func (f *storeFlags) open() (*storage.Store, *sysframes.Rules, error) {
	store, rules, _, err := f.openWithRules()
	return store, rules, err
}

// openWithRules is open with the settings it read.
func (f *storeFlags) openWithRules() (*storage.Store, *sysframes.Rules, plugin.Settings, error) {
	store, s, err := f.openStore()
	if err != nil {
		return nil, nil, s, err
	}
	rules, err := sysframes.New(s.SystemFrames)
	if err != nil {
		store.Close()
		return nil, nil, s, fmt.Errorf("%s: system frame rules: %w", f.settings, err)
	}
	return store, rules, s, nil
}

// executor opens the store the flags name and returns the data source's
// executor over it, for the commands that answer queries: the settings'
// system-frame rules and memory budget (maxQueryMemory; none without
// --settings). A server (serve, mcp) has the process's one stack cache,
// which all its endpoints share, and the settings' queryTimeout a query.
// Close its Store after.
func (f *storeFlags) executor(server bool) (*query.Executor, error) {
	store, rules, s, err := f.openWithRules()
	if err != nil {
		return nil, err
	}
	e := &query.Executor{Store: store, Rules: rules}
	if f.settings != "" {
		e.MaxMemory = s.QueryMemory()
	}
	if server {
		e.Stacks = loader.NewCache(0)
		if f.settings != "" {
			e.Timeout = s.QueryTimeoutDuration()
		}
	}
	return e, nil
}

// openStore opens the store the flags name, with the settings it read
// (none without --settings).
func (f *storeFlags) openStore() (*storage.Store, plugin.Settings, error) {
	var s plugin.Settings
	if err := f.require(); err != nil {
		return nil, s, err
	}
	opts := storage.Options{}
	if f.settings != "" {
		var err error
		if s, err = loadSettingsFile(f.settings); err != nil {
			return nil, s, err
		}
		opts = storage.Options{Tables: s.Tables, Distributed: s.Distributed, MaxRows: s.MaxStacks}
		if opts.ClickHouse, err = s.ClickHouseOptions(); err != nil {
			return nil, s, fmt.Errorf("%s: %w", f.settings, err)
		}
	}
	if f.dsn != "" {
		o, err := clickhouse.ParseDSN(f.dsn)
		if err != nil {
			return nil, s, fmt.Errorf("bad --dsn: %w", err)
		}
		opts.ClickHouse = o
	}
	store, err := storage.Open(opts)
	return store, s, err
}

// withStore runs do with the store the flags name and closes it after;
// neither --dsn nor --settings is a usage error. Commands that build no
// tree do not compile the system-frame rules: a bad rule fails the
// queries, not ingest or gc.
func withStore(f *storeFlags, do func(*storage.Store) error) error {
	store, _, err := f.openStore()
	if err != nil {
		return err
	}
	defer store.Close()
	return do(store)
}

// require reports a missing --dsn and --settings as a usage error.
func (f *storeFlags) require() error {
	if !f.set() {
		return usageError{errors.New("--dsn (or --settings) is required")}
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
		return withStore(dsn, func(store *storage.Store) error {
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
			_, err = fmt.Fprintf(out, "schema ready on ClickHouse %s: tables %s, %s, %s, %s, %s, %s, %s, %s\n",
				version, t.Runs, t.Stacks, t.Frames, t.Samples, t.RunStacks, t.Changes, t.RunFunctions, t.FunctionTimelines)
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
