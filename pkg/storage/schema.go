package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Tables names Flamediff's tables. A name is an identifier, optionally
// qualified with a database ("db.table"); unqualified names live in the
// connection's database. The names may be Distributed tables (see
// MigrateCluster); reads detect them.
type Tables struct {
	Runs      string `json:"runs,omitempty"`
	Stacks    string `json:"stacks,omitempty"`
	Frames    string `json:"frames,omitempty"`
	Samples   string `json:"samples,omitempty"`
	RunStacks string `json:"runStacks,omitempty"`
	Changes   string `json:"changes,omitempty"`
	// RunFunctions holds each run's sum per function, FunctionTimelines
	// its sums per function and time bucket (over-time queries).
	RunFunctions      string `json:"runFunctions,omitempty"`
	FunctionTimelines string `json:"functionTimelines,omitempty"`
}

// DefaultTables are the names used where Tables leaves a field empty.
var DefaultTables = Tables{Runs: "runs", Stacks: "stacks", Frames: "frames", Samples: "samples",
	RunStacks: "run_stacks", Changes: "changes", RunFunctions: "run_functions", FunctionTimelines: "function_timelines"}

func (t Tables) withDefaults() Tables {
	for _, f := range t.fields() {
		if *f.name == "" {
			*f.name = *f.def
		}
	}
	return t
}

type tableField struct {
	name, def *string
	schema    *tableSchema
}

// fields pairs each name with its default and its schema, in creation order.
func (t *Tables) fields() []tableField {
	d := DefaultTables
	return []tableField{
		{&t.Frames, &d.Frames, &framesSchema},
		{&t.Stacks, &d.Stacks, &stacksSchema},
		{&t.Samples, &d.Samples, &samplesSchema},
		{&t.RunStacks, &d.RunStacks, &runStacksSchema},
		{&t.Runs, &d.Runs, &runsSchema},
		{&t.Changes, &d.Changes, &changesSchema},
		{&t.RunFunctions, &d.RunFunctions, &runFunctionsSchema},
		{&t.FunctionTimelines, &d.FunctionTimelines, &functionTimelinesSchema},
	}
}

type quotedTables struct {
	runs, stacks, frames, samples, runStacks, changes, runFunctions, functionTimelines string
}

func (t Tables) quoted() (quotedTables, error) {
	var q quotedTables
	for _, p := range []struct {
		name, kind string
		dst        *string
	}{
		{t.Runs, "runs", &q.runs}, {t.Stacks, "stacks", &q.stacks}, {t.Frames, "frames", &q.frames},
		{t.Samples, "samples", &q.samples}, {t.RunStacks, "run stacks", &q.runStacks}, {t.Changes, "changes", &q.changes},
		{t.RunFunctions, "run functions", &q.runFunctions}, {t.FunctionTimelines, "function timelines", &q.functionTimelines},
	} {
		s, err := quoteIdent(p.name)
		if err != nil {
			return q, fmt.Errorf("%s table: %w", p.kind, err)
		}
		*p.dst = s
	}
	return q, nil
}

// column is one column of a table; typ may end in a DEFAULT clause, which
// rows written without the column get (see runStacksSchema).
type column struct{ name, typ string }

// tableSchema is the portable default DDL of one table, declared once so
// that Migrate and CheckTables agree. Only types and engines that 18.16
// and current servers share.
type tableSchema struct {
	columns []column
	engine  string
	orderBy string
	// shardBy is the sharding key of the table's Distributed table on a
	// cluster (docs/CLUSTER.md says why each).
	shardBy string
	// granularity, when not 0, is the table's index_granularity: rows
	// per mark, the least a read takes of a key range.
	granularity int
}

// framesSchema: a frame is identified by name and module (frame_hash);
// file and line say where its source is, "" and 0 when the profile did
// not say or the row predates the columns (readers take a non-empty one);
// inlined = 1 marks a call its caller inlined (0 in older rows).
var framesSchema = tableSchema{
	columns: []column{{"app", "String"}, {"frame_hash", "UInt64"}, {"name", "String"}, {"module", "String"},
		{"file", "String"}, {"line", "Int64"}, {"inlined", "UInt8"}},
	engine:  "ReplacingMergeTree()",
	orderBy: "app, frame_hash",
	shardBy: "frame_hash",
}

// stacksSchema keeps each stack's frame hashes twice: as an array, and
// packed for reading (frame_bytes, frame_tops: see packFrames). Ingests
// write both; rows written before the packed columns existed compute them
// on read from the array, the way the readers once did in every query
// (about a fifth of the server's time for a cold read of 200k stacks).
var stacksSchema = tableSchema{
	columns: []column{{"app", "String"}, {"stack_hash", "UInt64"}, {"frame_hashes", "Array(UInt64)"},
		{"frame_bytes", "String DEFAULT " + frameBytesSQL}, {"frame_tops", "String DEFAULT " + frameTopsSQL}},
	engine:  "ReplacingMergeTree()",
	orderBy: "app, stack_hash",
	shardBy: "stack_hash",
}

var samplesSchema = tableSchema{
	columns: []column{
		{"app", "String"}, {"build", "String"}, {"run", "String"}, {"ingest_id", "UInt64"},
		{"stack_hash", "UInt64"}, {"time_frame", "UInt8"}, {"first_seen", "UInt64"}, {"value", "Int64"},
	},
	engine:  "MergeTree()",
	orderBy: "app, ingest_id, stack_hash, time_frame",
	shardBy: "ingest_id",
}

// runStacksSchema holds one row per (ingest, stack) with the stack's sums
// over the whole run: what a tree query reads (a fraction of the sample
// rows, one per stack and time frame, and no aggregation), and what a cold
// read of a run's stack texts selects them by. Rows without the sums
// (listed before the columns existed, or by an older CLI) have first_seen
// = unsummed; readers take those ingests from the samples.
var runStacksSchema = tableSchema{
	columns: []column{
		{"app", "String"}, {"ingest_id", "UInt64"}, {"stack_hash", "UInt64"},
		{"value", "Int64"}, {"first_seen", "UInt64 DEFAULT " + unsummedSQL},
	},
	engine:  "MergeTree()",
	orderBy: "app, ingest_id, stack_hash",
	shardBy: "ingest_id",
}

// runFunctionsSchema holds one row per (ingest, function) with the
// function's inclusive sum over the run, each stack that holds it counted
// once (FunctionHash; loader.FunctionIndex's sums), and a row of hash 0
// with the run's total, written in the same INSERT: its presence says the
// ingest's rows are all there. key_version is FunctionsVersion, 0 in rows
// written before it existed (keyed by name): readers take the rows of
// this version only, so that migrate can write them beside the older
// ones (which stay, unread). It is what the over-time queries read for
// each run's value of each function: a run has far fewer functions than
// stacks (2,000 against 20,000 in issue 30's year of builds). Ingests
// write it; migrate fills it in for ingests written before it existed.
var runFunctionsSchema = tableSchema{
	columns: []column{{"app", "String"}, {"ingest_id", "UInt64"}, {"function_hash", "UInt64"}, {"value", "Int64"}, {"key_version", "UInt8"}},
	engine:  "MergeTree()",
	orderBy: "app, ingest_id, function_hash",
	shardBy: "ingest_id",
}

// functionTimelinesSchema holds one row per (ingest, time bucket,
// function) with the function's inclusive sum in the bucket, as
// runFunctionsSchema's over the run, and a row of hash 0 per bucket with
// the bucket's total: the evolution matrix's execution timelines. It is
// ordered by function first, so that a query reads the rows of the few
// functions the matrix can show (and the totals) however many the runs
// have. key_version as runFunctionsSchema's. A function's rows over a
// year of builds are a few thousand (one time frame a run), a fraction of
// the default 8,192-row mark: smaller marks keep a read of 170 functions
// from taking 8,192 rows each. An ingest writes it before its run
// functions rows.
var functionTimelinesSchema = tableSchema{
	columns:     []column{{"app", "String"}, {"function_hash", "UInt64"}, {"ingest_id", "UInt64"}, {"time_frame", "UInt8"}, {"value", "Int64"}, {"key_version", "UInt8"}},
	engine:      "MergeTree()",
	orderBy:     "app, function_hash, ingest_id, time_frame",
	shardBy:     "ingest_id",
	granularity: 1024,
}

// unsummedSQL is the first_seen of run stacks rows without sums: no real
// first-seen key (a sample time in ns, or a position) comes near it.
const unsummedSQL = "18446744073709551615"

var runsSchema = tableSchema{
	columns: []column{
		{"app", "String"}, {"build", "String"}, {"run", "String"}, {"ingest_id", "UInt64"},
		{"committed_ns", "UInt64"}, {"deleted", "UInt8"},
		{"start_time", "DateTime"}, {"start_nanos", "UInt32"}, {"duration_ns", "UInt64"},
		{"commit", "String"}, {"branch", "String"},
		{"label_keys", "Array(String)"}, {"label_values", "Array(String)"},
		{"sample_type", "String"}, {"unit", "String"},
		{"total", "Int64"}, {"samples", "UInt64"}, {"stacks", "UInt64"},
		{"time_frames", "UInt8"}, {"time_frame_ns", "UInt64"},
		// 1 when the ingest wrote its run stacks rows with sums (see
		// Run.StacksSummed); 0 in rows of older versions and tombstones.
		{"stacks_summed", "UInt8"},
		// FunctionsVersion when the ingest wrote its run functions rows
		// (see Run.FunctionsSummed); 1 in rows of versions that keyed
		// them by name, 0 in older ones and tombstones.
		{"functions_summed", "UInt8"},
		// StackSetHash of the run's stacks; 0 in rows of older versions
		// and tombstones.
		{"stack_set", "UInt64"},
	},
	engine:  "MergeTree()",
	orderBy: "app, build, run, committed_ns",
	shardBy: "cityHash64(app, build, run)",
}

var changesSchema = tableSchema{
	columns: []column{
		{"app", "String"}, {"build", "String"}, {"recorded_ns", "UInt64"},
		{"modified", "Array(String)"}, {"added", "Array(String)"}, {"removed", "Array(String)"},
	},
	engine:  "MergeTree()",
	orderBy: "app, build, recorded_ns",
	shardBy: "cityHash64(app, build)",
}

func (ts *tableSchema) ddl(quotedName string) string {
	engine := ts.engine + " ORDER BY (" + ts.orderBy + ")"
	if ts.granularity != 0 {
		engine += fmt.Sprintf(" SETTINGS index_granularity = %d", ts.granularity)
	}
	return ts.create(quotedName, engine)
}

// distributedDDL creates a Distributed table in front of the local ones;
// it binds three parameters: the cluster, database and local table.
func (ts *tableSchema) distributedDDL(quotedName string) string {
	return ts.create(quotedName, "Distributed(?, ?, ?, "+ts.shardBy+")")
}

func (ts *tableSchema) create(quotedName, engine string) string {
	cols := make([]string, len(ts.columns))
	for i, c := range ts.columns {
		cols[i] = "    " + c.name + " " + c.typ
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n%s\n) ENGINE = %s", quotedName, strings.Join(cols, ",\n"), engine)
}

// columnList is the explicit column list of an INSERT.
func (ts *tableSchema) columnList() string {
	names := make([]string, len(ts.columns))
	for i, c := range ts.columns {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// DDL returns the CREATE statements Migrate runs, in order, for these table
// names (defaults filled in); docs/SCHEMA.md shows them.
func (t Tables) DDL() ([]string, error) {
	t = t.withDefaults()
	var out []string
	for _, f := range t.fields() {
		q, err := quoteIdent(*f.name)
		if err != nil {
			return nil, err
		}
		out = append(out, f.schema.ddl(q))
	}
	return out, nil
}

// CheckTables verifies that every table exists with every column Flamediff
// uses, and returns an error naming each missing table and column.
// Distributed tables pass when they expose the same columns.
func (s *Store) CheckTables(ctx context.Context) error {
	var current string
	if err := s.conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&current); err != nil {
		if NoDatabase(err) {
			return fmt.Errorf("check tables: database %s does not exist (run `flamediff migrate`): %v", s.opts.Auth.Database, err)
		}
		return fmt.Errorf("check tables: %w", err)
	}
	refs := s.tableRefs(current)
	have, err := readColumns(ctx, s.conn, refs)
	if err != nil {
		return fmt.Errorf("check tables: %w", err)
	}
	var problems []string
	for _, r := range refs {
		cols := have[[2]string{r.db, r.table}]
		if cols == nil {
			problems = append(problems, fmt.Sprintf("table %s.%s is missing", r.db, r.table))
			continue
		}
		var missing []string
		for _, c := range r.schema.columns {
			if !cols[c.name] {
				missing = append(missing, c.name)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("table %s.%s lacks columns %s", r.db, r.table, strings.Join(missing, ", ")))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("check tables: %s (run `flamediff migrate`)", strings.Join(problems, "; "))
	}
	return nil
}

// groupSet makes a bound "(a, b, c)" list for IN; callers ensure it is
// not empty.
func groupSet[T any](vals []T) clickhouse.GroupSet {
	g := clickhouse.GroupSet{Value: make([]any, len(vals))}
	for i, v := range vals {
		g.Value[i] = v
	}
	return g
}
