package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/flamediff/flamediff/pkg/export"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// exportCmd prints what is stored for a run, or a whole build (its runs'
// values summed), as folded stacks, the profile in JSON, a pprof profile
// or a speedscope file (docs/EXPORT.md).
func exportCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	key := runKeyFlags(fs)
	run := fs.String("run", "", "run `NAME` (default: every run of the build, summed)")
	output := fs.String("output", "folded", "folded, json, pprof (gzipped protobuf) or speedscope")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := key.check(); err != nil {
			return err
		}
		switch *output {
		case "folded", "json", "pprof", "speedscope":
		default:
			return usageError{fmt.Errorf("--output must be folded, json, pprof or speedscope, not %q", *output)}
		}
		var p *profile.Profile
		err := withStore(dsn, func(store *storage.Store) (err error) {
			p, err = store.Export(ctx, key.app, key.build, *run)
			return err
		})
		if err != nil {
			return err
		}
		switch *output {
		case "folded":
			return ingest.WriteFolded(out, p)
		case "pprof":
			return export.Pprof(out, p)
		case "speedscope":
			name := key.app + " " + key.build
			if *run != "" {
				name += " " + *run
			}
			return export.Speedscope(out, name, p)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
}
