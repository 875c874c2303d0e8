package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/cespare/xxhash/v2"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// oldTables are the tables the old database has rows in, in the order an
// ingest writes them.
var oldTables = []string{"frames", "stacks", "samples", "run_stacks", "function_timelines", "run_functions", "runs"}

// dumpOldDatabase, with -olddb-dump DSN, writes the rows of the database
// of DSN, filled by `flamediff ingest` of an older version, into
// testdata/olddb (README.md there says how it was made): one JSON object
// per table, its columns by name. The stacks' frame_bytes and frame_tops
// are left out (their DEFAULT recomputes them from frame_hashes, as the
// old version computed them): JSON holds no bytes that are not UTF-8.
var dumpOldDatabase = flag.String("olddb-dump", "", "write testdata/olddb from the database of this `DSN`")

// oldTable is one table's rows, column by column.
type oldTable struct {
	Table   string
	Columns []string
	Values  []json.RawMessage // a JSON array per column
}

// loadOldDatabase fills the database of dsn with what `flamediff ingest`
// of commit f7053c9, the last version that keyed frames by their full
// module path, stored (testdata/olddb/README.md): base and head runs of
// one binary at /opt/app/1.2/app-base and /opt/app/1.3/app-head.
func loadOldDatabase(t *testing.T, dsn string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "olddb", "f7053c9.json.gz")
	ctx := clickhouse.Context(context.Background(), clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	if *dumpOldDatabase != "" {
		writeOldDatabase(t, ctx, chtest.Conn(t, *dumpOldDatabase), path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	conn := chtest.Conn(t, dsn)
	dec := json.NewDecoder(z)
	for _, name := range oldTables {
		var tb oldTable
		if err := dec.Decode(&tb); err != nil || tb.Table != name {
			t.Fatalf("old database: table %q, want %s: %v", tb.Table, name, err)
		}
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+name+" ("+strings.Join(tb.Columns, ", ")+")")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "SELECT "+strings.Join(tb.Columns, ", ")+" FROM "+name+" LIMIT 0")
		if err != nil {
			t.Fatal(err)
		}
		types := rows.ColumnTypes()
		rows.Close()
		for i, typ := range types {
			col := reflect.New(reflect.SliceOf(typ.ScanType()))
			if err := json.Unmarshal(tb.Values[i], col.Interface()); err != nil {
				t.Fatalf("%s.%s: %v", name, tb.Columns[i], err)
			}
			if err := batch.Column(i).Append(col.Elem().Interface()); err != nil {
				t.Fatalf("%s.%s: %v", name, tb.Columns[i], err)
			}
		}
		if err := batch.Send(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// It is old data: the executable's frames are keyed by their full path.
	var hash uint64
	var name string
	if err := conn.QueryRow(ctx, "SELECT frame_hash, name FROM frames WHERE module = '/opt/app/1.2/app-base' AND name = 'runtime.main' LIMIT 1").Scan(&hash, &name); err != nil {
		t.Fatal(err)
	}
	if hash != xxhash.Sum64String(name+"\x00/opt/app/1.2/app-base") || hash == storage.FrameHash(name, "/opt/app/1.2/app-base", false) {
		t.Fatalf("frame %s of the old database has hash %x: not the old key", name, hash)
	}
}

// writeOldDatabase writes the tables of conn's database to path.
func writeOldDatabase(t *testing.T, ctx context.Context, conn driver.Conn, path string) {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(z)
	for _, name := range oldTables {
		cols := "*"
		if name == "stacks" {
			cols = "app, stack_hash, frame_hashes"
		}
		rows, err := conn.Query(ctx, "SELECT "+cols+" FROM "+name+" ORDER BY tuple(*)")
		if err != nil {
			t.Fatal(err)
		}
		tb := oldTable{Table: name, Columns: rows.Columns()}
		values := make([]reflect.Value, len(tb.Columns))
		for i, ct := range rows.ColumnTypes() {
			values[i] = reflect.New(reflect.SliceOf(ct.ScanType())).Elem()
		}
		for rows.Next() {
			dest := make([]any, len(values))
			for i, c := range values {
				dest[i] = reflect.New(c.Type().Elem()).Interface()
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			for i := range values {
				values[i] = reflect.Append(values[i], reflect.ValueOf(dest[i]).Elem())
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for _, c := range values {
			b, err := json.Marshal(c.Interface())
			if err != nil {
				t.Fatal(err)
			}
			tb.Values = append(tb.Values, b)
		}
		if err := enc.Encode(tb); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Runs stored before frames were keyed by identity compare with each
// other and with runs stored now, before and after `flamediff migrate`:
// readers meet frames by the name and module stored with them.
func TestDataStoredBeforeIdentity(t *testing.T) {
	now := atPaths(t, "/srv/app/2.0/app")
	diff := func(head, base string) string {
		return `{"queryType":"diff","app":"app","head":{"builds":["` + head + `"]},"base":{"builds":["` + base + `"]}}`
	}
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			if name == "one server" {
				// The schema f7053c9 made: frames had no inline mark, which
				// migrate adds as it adds any column.
				if err := chtest.Conn(t, dsn).Exec(context.Background(), "ALTER TABLE frames DROP COLUMN inlined"); err != nil {
					t.Fatal(err)
				}
				loadOldDatabase(t, dsn)
				mustRun(t, "migrate", "--dsn", dsn)
			} else {
				loadOldDatabase(t, dsn)
			}
			old := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", diff("head", "base")))
			unchanged(t, "old runs", old)
			for i, f := range now {
				mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", "now", "--run", strconv.Itoa(i+1), f)
			}
			for _, migrated := range []bool{false, true} {
				if migrated && name == "cluster" {
					mustRun(t, "migrate", "--dsn", dsn, "--cluster", chtest.ClusterName)
				} else if migrated {
					mustRun(t, "migrate", "--dsn", dsn)
				}
				mixed := answerTree(t, mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", diff("now", "base")))
				unchanged(t, "a new build against an old one", mixed)
				if !reflect.DeepEqual(mixed.Base, old.Base) {
					t.Errorf("migrated %v: new runs against old give %d nodes, old against old %d", migrated, len(mixed.Base), len(old.Base))
				}
				if out, err := flamediff(t, "query", "--dsn", dsn, "--model", diff("now", "head"), "--output", "markdown", "--fail-on-regression"); err != nil || strings.Contains(out, "FAIL") {
					t.Errorf("migrated %v: gate of the new build against the old head: %v\n%s", migrated, err, out)
				}
			}
		})
	}
}
