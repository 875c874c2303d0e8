package chtest

import (
	"context"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Each shard knows every shard of ClusterName: a Distributed table over
// system.one counts one row per shard through either; a killed shard
// fails such a query until Restart brings it back.
func TestClusterShards(t *testing.T) {
	ctx := context.Background()
	o, err := clickhouse.ParseDSN(ClusterDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	shards := ClusterShards(t)
	count := func(c clickhouse.Conn) (uint64, error) {
		var n uint64
		return n, c.QueryRow(ctx, "SELECT count() FROM one").Scan(&n)
	}
	conns := make([]clickhouse.Conn, len(shards))
	for i, s := range shards {
		if conns[i], err = clickhouse.Open(&clickhouse.Options{Addr: []string{s.Addr}, Auth: o.Auth}); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
		admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{s.Addr}})
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if err := admin.Exec(ctx, "CREATE DATABASE "+o.Auth.Database); err != nil { // ClusterDSN's database does not exist
			t.Fatal(err)
		}
		if err := conns[i].Exec(ctx, "CREATE TABLE one (dummy UInt8) ENGINE = Distributed(?, 'system', 'one')", ClusterName); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		if n, err := count(c); err != nil || n != uint64(len(shards)) {
			t.Errorf("through shard %d: %d rows, %v; want one per shard", i+1, n, err)
		}
	}
	shards[1].Kill()
	if _, err := count(conns[0]); err == nil {
		t.Error("a query over a killed shard succeeded")
	}
	if err := shards[1].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := count(conns[0]); err != nil || n != uint64(len(shards)) {
		t.Errorf("after the restart: %d rows, %v", n, err)
	}
}
