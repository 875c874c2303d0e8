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

var (
	mainCalled bool

	once    sync.Once
	server  *Server     // the private server, nil when AddrEnv is used
	admin   driver.Conn // creates and drops the per-test databases
	addr    string
	initErr error
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
	if admin != nil {
		admin.Close()
	}
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chtest: stopping clickhouse:", err)
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
	name := "flamediff_test_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("chtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("chtest: drop database %s: %v", name, err)
		}
	})
	return fmt.Sprintf("clickhouse://default:@%s/%s", addr, name)
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
