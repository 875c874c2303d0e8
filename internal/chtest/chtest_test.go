package chtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

func TestMain(m *testing.M) { Main(m) }

func TestDSNGivesFreshDatabases(t *testing.T) {
	ctx := context.Background()
	var dbs []string
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			o, err := clickhouse.ParseDSN(DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			conn, err := clickhouse.Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var n uint64
			if err := conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase()").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("new database has %d tables", n)
			}
			if err := conn.Exec(ctx, "CREATE TABLE t (x UInt8) ENGINE = Memory"); err != nil {
				t.Fatal(err)
			}
			dbs = append(dbs, o.Auth.Database)
		})
	}
	if len(dbs) != 2 || dbs[0] == dbs[1] {
		t.Fatalf("databases %v, want two distinct", dbs)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{Addr(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var left uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name IN (?, ?)", dbs[0], dbs[1]).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d test databases left after their tests ended", left)
	}
}

// The server the tests use plans queries on several threads whatever the
// machine, as real servers do: some bugs only show on parallel plans. It
// is the private server, or the one $FLAMEDIFF_CLICKHOUSE_ADDR names (the
// test command's is a private one too); either must run parallel plans,
// or the integration tests would pass without them.
func TestServerRunsParallelPlans(t *testing.T) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{Addr(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var threads string
	if err := conn.QueryRow(context.Background(), "SELECT value FROM system.settings WHERE name = 'max_threads'").Scan(&threads); err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(strings.Trim(threads, "'auto()")); err != nil || n < 4 {
		from := "the private server"
		if os.Getenv(AddrEnv) != "" {
			from = AddrEnv + "=" + Addr(t)
		}
		t.Errorf("max_threads %s on %s, want at least 4 (set it in the server's default profile)", threads, from)
	}
}
