package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/otlp"
	"github.com/flamediff/flamediff/pkg/storage"
)

// ingestOTLP stores the runs of an OTLP file (profiles or traces) in one
// commit. The flags that name a run, when given, replace what the data
// says; commit, branch, labels and time apply to every run.
func ingestOTLP(ctx context.Context, dsn *storeFlags, parse *parseOptions, runAttribute string, meta storage.RunMeta,
	file string, out io.Writer) error {
	data, err := os.ReadFile(file) // #nosec G304 -- the file the user names
	if err != nil {
		return err
	}
	var runs []otlp.Run
	var summary string
	if parse.format == string(ingest.OTLP) {
		batches, err := otlp.DecodeProfiles(data, file)
		if err != nil {
			return err
		}
		runs, err = otlp.ProfileRuns(otlp.ProfileOptions{SampleType: parse.sampleType, RunAttribute: runAttribute,
			App: meta.App, Build: meta.Build, Run: meta.Run}, file, batches...)
		if err != nil {
			return err
		}
	} else {
		if parse.sampleType != "" && parse.sampleType != "wall" {
			return usageError{fmt.Errorf("--sample-type %q: span runs have one sample type, wall", parse.sampleType)}
		}
		batches, err := otlp.DecodeTraces(data, file)
		if err != nil {
			return err
		}
		var sum otlp.TraceSummary
		runs, sum, err = otlp.TraceRuns(otlp.TraceOptions{RunAttribute: runAttribute,
			App: meta.App, Build: meta.Build, Run: meta.Run}, file, batches...)
		if err != nil {
			return err
		}
		summary = sum.String()
	}
	err = withStore(dsn, func(store *storage.Store) error {
		return store.WriteRuns(ctx, otlp.RunProfiles(runs, meta), progress(os.Stderr, "storing "+file))
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
