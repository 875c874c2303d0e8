package storage

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Errors of the run selection; returned wrapped with the missing name, so
// test them with errors.Is.
var (
	ErrUnknownApp   = errors.New("unknown app")
	ErrUnknownBuild = errors.New("unknown build")
	ErrUnknownRun   = errors.New("unknown run")
	ErrNoRuns       = errors.New("no runs selected")
)

// Run is one committed, visible run.
type Run struct {
	App, Build, Run string
	// IngestID names the rows of the ingest that is visible; reads select
	// samples by it, so a Run value keeps reading the same data even if the
	// run is re-ingested meanwhile.
	IngestID    uint64
	CommittedAt time.Time
	Start       time.Time
	Duration    time.Duration
	Commit      string
	Branch      string
	Labels      map[string]string
	SampleType  string
	Unit        string
	Total       int64  // sum of all sample values
	Samples     uint64 // samples in the ingested profile
	Stacks      uint64 // distinct stacks
	// Buckets is the number of time buckets (TimeBuckets); BucketNs is
	// the width of one in nanoseconds, or 0 when the profile had no sample
	// times and the buckets split the samples by position instead.
	Buckets  int
	BucketNs uint64
	// StacksSummed says that the ingest wrote the sum of every stack to
	// the run stacks table before committing, which spares readers
	// counting its rows there (false for ingests of older versions, which
	// readers check; see Store.StackValues).
	StacksSummed bool
	// FunctionsSummed says the same of the run functions table, its rows
	// keyed by FunctionHash (FunctionsVersion; see Store.RunFunctionValues).
	FunctionsSummed bool
	// StackSet is StackSetHash of the run's stacks (0: not known, an
	// ingest of an older version).
	StackSet uint64
}

// Build is a build of an app with its visible runs.
type Build struct {
	Name string
	Time time.Time // the earliest start of its runs
	Runs int
}

// latest is the subquery of the visible ingest ids: the newest commit of
// every run of app (tombstones included; callers filter deleted = 0).
func (s *Store) latest() string {
	return "SELECT argMax(ingest_id, committed_ns) FROM " + s.q.runs + " WHERE app = ? GROUP BY build, run"
}

// visible is the subquery of the ingest ids of app's visible runs.
func (s *Store) visible(ctx context.Context) string {
	return "SELECT ingest_id FROM " + s.q.runs + " WHERE app = ? AND deleted = 0 AND ingest_id " + s.in(ctx) + " (" + s.latest() + ")"
}

// Apps lists the apps that have visible runs, sorted. Listings group
// rather than use DISTINCT: on 18.16, DISTINCT with an IN subquery and
// ORDER BY repeats rows when the plan runs on several threads.
func (s *Store) Apps(ctx context.Context) ([]string, error) {
	rows, err := s.conn.Query(ctx, "SELECT app FROM "+s.q.runs+" WHERE deleted = 0 AND ingest_id "+s.in(ctx)+
		" (SELECT argMax(ingest_id, committed_ns) FROM "+s.q.runs+" GROUP BY app, build, run) GROUP BY app ORDER BY app")
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	return collect(rows, "list apps", func(scan func(...any) error) (string, error) {
		var a string
		return a, scan(&a)
	})
}

// Builds lists the builds of app that have visible runs, oldest first (by
// their earliest run start, then name). An app without any gives
// ErrUnknownApp.
func (s *Store) Builds(ctx context.Context, app string) ([]Build, error) {
	rows, err := s.conn.Query(ctx, "SELECT build, min(start_time) AS t, toUInt64(count()) FROM "+s.q.runs+
		" WHERE app = ? AND deleted = 0 AND ingest_id "+s.in(ctx)+" ("+s.latest()+") GROUP BY build ORDER BY t, build", app, app)
	if err != nil {
		return nil, fmt.Errorf("list builds of %q: %w", app, err)
	}
	builds, err := collect(rows, "list builds", func(scan func(...any) error) (Build, error) {
		var b Build
		var n uint64
		err := scan(&b.Name, &b.Time, &n)
		b.Runs = int(n) // #nosec G115 -- a count of runs rows: far below 2^63
		return b, err
	})
	if err == nil && len(builds) == 0 {
		err = fmt.Errorf("%w %q", ErrUnknownApp, app)
	}
	return builds, err
}

// Runs returns the visible runs of app in builds (empty: every build)
// whose names are in runs (empty: every run of those builds), ordered by
// start time, build and name. A run name matches in any selected build.
// It fails with ErrUnknownApp, ErrUnknownBuild or ErrUnknownRun naming
// the first missing name, or ErrNoRuns when nothing is left.
func (s *Store) Runs(ctx context.Context, app string, builds, runs []string) ([]Run, error) {
	q := "SELECT build, run, ingest_id, committed_ns, start_time, start_nanos, duration_ns, commit, branch, " +
		"label_keys, label_values, sample_type, unit, total, samples, stacks, time_frames, time_frame_ns, stacks_summed, functions_summed, stack_set FROM " +
		s.q.runs + " WHERE app = ? AND deleted = 0"
	args := []any{app}
	if len(builds) > 0 {
		q += " AND build IN ?"
		args = append(args, groupSet(builds))
	}
	q += " AND ingest_id " + s.in(ctx) + " (" + s.latest() + ") ORDER BY start_time, start_nanos, build, run"
	args = append(args, app)
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs of %q: %w", app, err)
	}
	all, err := collect(rows, "list runs", func(scan func(...any) error) (Run, error) {
		r := Run{App: app}
		var committed, duration uint64
		var nanos uint32
		var keys, values []string
		var buckets, summed, fnSummed uint8
		err := scan(&r.Build, &r.Run, &r.IngestID, &committed, &r.Start, &nanos, &duration, &r.Commit, &r.Branch,
			&keys, &values, &r.SampleType, &r.Unit, &r.Total, &r.Samples, &r.Stacks, &buckets, &r.BucketNs, &summed, &fnSummed, &r.StackSet)
		r.StacksSummed, r.FunctionsSummed = summed == 1, fnSummed == FunctionsVersion
		r.CommittedAt = time.Unix(0, int64(committed)) // #nosec G115 -- written from a time.Time in int64 nanoseconds (unixNanos)
		r.Start = r.Start.Add(time.Duration(nanos))
		r.Duration = time.Duration(duration) // #nosec G115 -- written from a time.Duration
		r.Buckets = int(buckets)
		if len(keys) > 0 {
			r.Labels = make(map[string]string, len(keys))
			for i, k := range keys {
				if i < len(values) {
					r.Labels[k] = values[i]
				}
			}
		}
		return r, err
	})
	if err != nil {
		return nil, err
	}
	return s.selectRuns(ctx, app, builds, runs, all)
}

// selectRuns filters all (the runs of the selected builds) by run name and
// explains an empty or partial result.
func (s *Store) selectRuns(ctx context.Context, app string, builds, runs []string, all []Run) ([]Run, error) {
	if len(all) == 0 {
		if _, err := s.Builds(ctx, app); err != nil {
			return nil, err // ErrUnknownApp, or the query failed
		}
	}
	haveBuild := map[string]bool{}
	for _, r := range all {
		haveBuild[r.Build] = true
	}
	for _, b := range builds {
		if !haveBuild[b] {
			return nil, fmt.Errorf("%w %q of app %q", ErrUnknownBuild, b, app)
		}
	}
	if len(runs) > 0 {
		want := map[string]bool{}
		for _, r := range runs {
			want[r] = true
		}
		var picked []Run
		found := map[string]bool{}
		for _, r := range all {
			if want[r.Run] {
				picked = append(picked, r)
				found[r.Run] = true
			}
		}
		for _, r := range runs {
			if !found[r] {
				return nil, fmt.Errorf("%w %q in builds %s of app %q", ErrUnknownRun, r, quoteList(builds), app)
			}
		}
		all = picked
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w for app %q", ErrNoRuns, app)
	}
	return all, nil
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "(all)"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// runRows are the runs rows that make the staged ingests visible. A
// row's version (committed_ns) is above every earlier commit of its run
// even if clocks went back, so the newest ingest always wins.
func (s *Store) runRows(ctx context.Context, w *writeSet) ([]runRow, error) {
	rows := make([]runRow, len(w.runs))
	versions := map[[3]string]uint64{}
	byApp := map[string][]string{}
	for _, in := range w.runs {
		byApp[in.Meta.App] = append(byApp[in.Meta.App], in.Meta.Run)
	}
	for app, runs := range byApp {
		if err := s.lastVersions(ctx, app, runs, versions); err != nil {
			return nil, err
		}
	}
	now := unixNanos(time.Now())
	for i, in := range w.runs {
		meta, p, r := in.Meta, in.Profile, w.prepared[i]
		keys := make([]string, 0, len(meta.Labels))
		for k := range meta.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		values := make([]string, len(keys))
		for j, k := range keys {
			values[j] = meta.Labels[k]
		}
		rows[i] = runRow{
			meta: meta, ingestID: w.ids[i], version: max(now, versions[[3]string{meta.App, meta.Build, meta.Run}]+1),
			start: w.starts[i], duration: r.duration,
			labelKeys: keys, labelValues: values, sampleType: p.SampleType, unit: p.Unit,
			total: r.total, samples: uint64(len(p.Samples)), stacks: uint64(len(r.stackHash)), stackSet: StackSetHash(r.stackHash),
			bucketNs: r.bucketNs,
		}
	}
	return rows, nil
}

// lastVersions adds the last commit version of app's runs named runs (of
// any build) to versions, keyed by app, build and run. The names go in
// lists of at most listBytes, so that a commit of any number of runs stays
// under ClickHouse's max_query_size.
func (s *Store) lastVersions(ctx context.Context, app string, runs []string, versions map[[3]string]uint64) error {
	for _, part := range nameLists(runs) {
		rows, err := s.conn.Query(ctx, "SELECT build, run, max(committed_ns) FROM "+s.q.runs+
			" WHERE app = ? AND run IN ? GROUP BY build, run", app, groupSet(part))
		if err != nil {
			return fmt.Errorf("read the runs' last commits: %w", err)
		}
		_, err = collect(rows, "read the runs' last commits", func(scan func(...any) error) (struct{}, error) {
			var build, run string
			var v uint64
			err := scan(&build, &run, &v)
			versions[[3]string{app, build, run}] = v
			return struct{}{}, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// nextVersion returns a commit version above every earlier one of the run.
func (s *Store) nextVersion(ctx context.Context, app, build, run string) (uint64, error) {
	versions := map[[3]string]uint64{}
	if err := s.lastVersions(ctx, app, []string{run}, versions); err != nil {
		return 0, err
	}
	return max(unixNanos(time.Now()), versions[[3]string{app, build, run}]+1), nil
}

// unixNanos is t as the versions (committed_ns) store it: nanoseconds
// since 1970, none before.
func unixNanos(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano())) // #nosec G115 -- not negative
}

type runRow struct {
	meta                   RunMeta
	ingestID, version      uint64
	deleted                bool
	start                  time.Time
	duration               time.Duration
	labelKeys, labelValues []string
	sampleType, unit       string
	total                  int64
	samples, stacks        uint64
	stackSet               uint64
	bucketNs               uint64
}

func (s *Store) insertRun(ctx context.Context, r runRow) error {
	return s.insertRuns(ctx, []runRow{r})
}

// insertRuns writes runs rows in one INSERT (one block: all or none).
func (s *Store) insertRuns(ctx context.Context, rows []runRow) error {
	return s.insertBatches(ctx, s.q.runs, &runsSchema, len(rows), max(1, len(rows)), nil, func(b driver.Batch, lo, hi int) error {
		for _, r := range rows[lo:hi] {
			deleted, buckets, summed, fnSummed := uint8(0), uint8(TimeBuckets), uint8(1), uint8(FunctionsVersion)
			if r.deleted {
				deleted, buckets, summed, fnSummed = 1, 0, 0, 0
			}
			// Stack and function sums are written together.
			m := r.meta
			err := b.Append(m.App, m.Build, m.Run, r.ingestID, r.version, deleted,
				time.Unix(r.start.Unix(), 0), uint32(r.start.Nanosecond()), uint64(r.duration), // #nosec G115 -- Nanosecond is in [0, 1e9); durations are checked non-negative
				m.Commit, m.Branch, r.labelKeys, r.labelValues, r.sampleType, r.unit,
				r.total, r.samples, r.stacks, buckets, r.bucketNs, summed, fnSummed, r.stackSet)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteRun hides a run by committing a tombstone for it; its rows stay,
// invisible, like those of a replaced ingest. Ingesting the run again
// brings it back. A run that is not visible gives ErrUnknownRun.
func (s *Store) DeleteRun(ctx context.Context, app, build, run string) error {
	if _, err := s.Runs(ctx, app, []string{build}, []string{run}); err != nil {
		return fmt.Errorf("delete run: %w", err)
	}
	version, err := s.nextVersion(ctx, app, build, run)
	if err == nil {
		err = s.insertRun(ctx, runRow{
			meta: RunMeta{App: app, Build: build, Run: run}, ingestID: newIngestID(), version: version,
			deleted: true, start: time.Unix(0, 0),
		})
	}
	if err != nil {
		return fmt.Errorf("delete run %s/%s/%s: %w", app, build, run, err)
	}
	return nil
}
