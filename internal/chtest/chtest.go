package chtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// AddrEnv names the environment variable holding host:port (native
// protocol) of a running server to use instead of starting a private one.
const AddrEnv = "FLAMEDIFF_CLICKHOUSE_ADDR"

// ClusterEnv names the environment variable that, when not empty, asks
// integration suites to keep their tables on the private cluster instead
// of a single server (see OnCluster).
const ClusterEnv = "FLAMEDIFF_CLICKHOUSE_CLUSTER"

// dropTimeout bounds the drop of a test's database on all its servers.
const dropTimeout = 2 * time.Minute

// clusterShards is the number of shards of the private cluster.
const clusterShards = 2

var (
	mainCalled bool

	once    sync.Once
	server  *Server     // the private server, nil when AddrEnv is used
	admin   driver.Conn // creates and drops the per-test databases
	addr    string
	initErr error

	clusterOnce   sync.Once
	cluster       *Cluster
	clusterAdmins []driver.Conn // one per shard
	clusterErr    error
)

// Main runs the tests of a package that uses DSN and then stops the private
// server, if one was started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { chtest.Main(m) }
//
// cleanups run after the tests, before the server stops (Main exits the
// process, so deferred calls in TestMain would not run).
func Main(m *testing.M, cleanups ...func()) {
	mainCalled = true
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	for _, c := range append(clusterAdmins, admin) {
		if c != nil {
			c.Close()
		}
	}
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chtest: stopping clickhouse:", err)
		}
	}
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chtest: stopping the clickhouse cluster:", err)
		}
	}
	os.Exit(code)
}

// DSN returns a clickhouse-go DSN of a fresh, empty database that is
// dropped when the test ends. The server is the one at $FLAMEDIFF_CLICKHOUSE_ADDR
// or else a private one started on first use (which requires Main in
// TestMain, so that it is stopped). Without either, the test fails with
// instructions: integration tests never skip silently.
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(connect)
	if initErr != nil {
		t.Fatalf("chtest: %v", initErr)
	}
	return fmt.Sprintf("clickhouse://default:@%s/%s", addr, freshDatabase(t, admin))
}

// Conn opens a raw connection to the database of dsn, for tests that look
// under the store (count rows, empty a table); it closes when the test ends.
func Conn(t testing.TB, dsn string) driver.Conn {
	t.Helper()
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// freshDatabase creates a database with a new name on every server of
// conns and drops it there when the test ends.
func freshDatabase(t testing.TB, conns ...driver.Conn) string {
	t.Helper()
	name := unusedDatabase(t, conns...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range conns {
		if err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("chtest: create database %s: %v", name, err)
		}
	}
	return name
}

// unusedDatabase returns a new database name, and drops the database of
// that name on every server of conns when the test ends.
func unusedDatabase(t testing.TB, conns ...driver.Conn) string {
	name := "flamediff_test_" + randomHex(6)
	t.Cleanup(func() {
		// A drop waits for the tables' merges to stop: seconds per table on
		// a busy machine after hundreds of small ingests.
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		for _, c := range conns {
			if err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
				t.Errorf("chtest: drop database %s: %v", name, err)
			}
		}
	})
	return name
}

// ClusterDSN returns the DSN of a new database on the private cluster
// (ClusterName), entering through the first shard. The database exists on
// no shard, as on a cluster set up from nothing: `flamediff migrate
// --cluster` with ClusterName creates it and the tables on every shard.
// The cluster starts on first use (which requires Main in TestMain)
// whatever AddrEnv says: it needs servers that know each other.
func ClusterDSN(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("clickhouse://default:@%s/%s", ClusterShards(t)[0].Addr, unusedDatabase(t, clusterAdmins...))
}

// ClusterShards returns the private cluster's servers, starting them if
// needed; tests may Kill and Restart them.
func ClusterShards(t testing.TB) []*Server {
	t.Helper()
	clusterOnce.Do(startCluster)
	if clusterErr != nil {
		t.Fatalf("chtest: %v", clusterErr)
	}
	return cluster.Shards
}

// OnCluster reports whether ClusterEnv asks for the cluster: suites then
// run their tests on ClusterDSN instead of DSN.
func OnCluster() bool { return os.Getenv(ClusterEnv) != "" }

func startCluster() {
	if !mainCalled {
		clusterErr = fmt.Errorf("chtest.Main is not in TestMain: add `func TestMain(m *testing.M) { chtest.Main(m) }` " +
			"so the private cluster can be started and stopped")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*startTimeout)
	defer cancel()
	if cluster, clusterErr = StartCluster(ctx, clusterShards); clusterErr != nil {
		return
	}
	for _, s := range cluster.Shards {
		c, err := clickhouse.Open(&clickhouse.Options{Addr: []string{s.Addr}, DialTimeout: 5 * time.Second})
		if err != nil {
			clusterErr = err
			return
		}
		clusterAdmins = append(clusterAdmins, c)
	}
}

// Addr returns host:port (native protocol) of the server DSN uses,
// starting it if needed; for tests that need a connection without a
// database.
func Addr(t testing.TB) string {
	t.Helper()
	once.Do(connect)
	if initErr != nil {
		t.Fatalf("chtest: %v", initErr)
	}
	return addr
}

// connect finds or starts the server and opens the admin connection.
func connect() {
	addr = os.Getenv(AddrEnv)
	if addr == "" {
		if !mainCalled {
			initErr = fmt.Errorf("no %s set and chtest.Main is not in TestMain: "+
				"add `func TestMain(m *testing.M) { chtest.Main(m) }` so a private server can be started and stopped", AddrEnv)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*startTimeout)
		defer cancel()
		if server, initErr = Start(ctx); initErr != nil {
			return
		}
		addr = server.Addr
	}
	admin, initErr = clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, DialTimeout: 5 * time.Second})
	if initErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.Ping(ctx); err != nil {
			initErr = fmt.Errorf("clickhouse at %s (from %s or the private server) does not answer: %w", addr, AddrEnv, err)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
