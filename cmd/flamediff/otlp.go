package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/receiver"
	"github.com/flamediff/flamediff/pkg/storage"
)

// ingestRuns stores the runs of a file whose format names them (the
// table's OTLP rows: profiles or traces) in one commit. The flags that name a run, when given, replace what the data
// says; commit, branch, labels and time apply to every run.
func ingestRuns(ctx context.Context, dsn *storeFlags, parse *parseOptions, runAttribute string, meta storage.RunMeta,
	file string, out io.Writer) error {
	data, err := os.ReadFile(file) // #nosec G304 -- the file the user names
	if err != nil {
		return err
	}
	runs, summary, err := ingest.ParseRuns(data, file, ingest.Format(parse.format), ingest.RunOptions{SampleType: parse.sampleType,
		RunAttribute: runAttribute, App: meta.App, Build: meta.Build, Run: meta.Run})
	if err != nil {
		return err
	}
	err = withStore(dsn, func(store *storage.Store) error {
		return store.WriteRuns(ctx, receiver.Stored(runs, meta), progress(os.Stderr, "storing "+file))
	})
	if err != nil {
		return err
	}
	for _, r := range runs {
		p := r.Profile
		if _, err := fmt.Fprintf(out, "stored %s/%s/%s: %d samples, total %d %s\n",
			r.App, r.Build, r.Run, len(p.Samples), p.Total(), p.Unit); err != nil {
			return err
		}
	}
	if summary != "" {
		_, err = fmt.Fprintln(out, "traces:", summary)
	}
	return err
}
