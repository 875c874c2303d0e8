package storage

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/profile"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// newStore opens a migrated store on a fresh database: on the private
// cluster when chtest.OnCluster, else on one server.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if chtest.OnCluster() {
		return clusterStore(t, opts)
	}
	s := openStore(t, opts)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// singleStore is newStore on one server whatever chtest.OnCluster says.
func singleStore(t testing.TB, opts Options) *Store {
	t.Helper()
	return migrated(t, chtest.DSN(t), "", opts)
}

// clusterStore opens a store on a fresh database of the private cluster,
// migrated with MigrateCluster.
func clusterStore(t testing.TB, opts Options) *Store {
	t.Helper()
	return migrated(t, chtest.ClusterDSN(t), chtest.ClusterName, opts)
}

// migrated opens a store on dsn and migrates it: on every host of cluster,
// or on the one server when cluster is "".
func migrated(t testing.TB, dsn, cluster string, opts Options) *Store {
	t.Helper()
	s := openDSN(t, dsn, opts)
	migrate := s.Migrate
	if cluster != "" {
		migrate = func(ctx context.Context) error { return s.MigrateCluster(ctx, cluster) }
	}
	if err := migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// openStore opens a store on a fresh database without migrating.
func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if !chtest.OnCluster() {
		return openDSN(t, chtest.DSN(t), opts)
	}
	s := openDSN(t, chtest.ClusterDSN(t), opts)
	// ClusterDSN's database exists on no shard yet.
	for _, shard := range chtest.ClusterShards(t) {
		err := withoutDatabase(clickhouse.Options{Addr: []string{shard.Addr}}, func(conn driver.Conn) error {
			return conn.Exec(context.Background(), "CREATE DATABASE "+s.opts.Auth.Database)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func openDSN(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	opts.ClickHouse = o
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// build makes a profile from lines "a;b;c VALUE" or "a;b;c VALUE @tTIME"
// (frame names may hold spaces; a frame "f@mod" has module mod).
func build(lines ...string) *profile.Profile {
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds"}
	for _, l := range lines {
		at := int64(-1)
		rest, last := cutLast(l)
		if strings.HasPrefix(last, "@t") {
			at, _ = strconv.ParseInt(last[2:], 10, 64)
			rest, last = cutLast(rest)
		}
		value, err := strconv.ParseInt(last, 10, 64)
		if err != nil {
			panic("bad test line " + l)
		}
		var ids []uint32
		for _, f := range strings.Split(rest, ";") {
			name, module, _ := strings.Cut(f, "@")
			ids = append(ids, p.Intern(profile.Frame{Name: name, Module: module}))
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: ids, Value: value, Time: at})
	}
	return p
}

func cutLast(s string) (string, string) {
	i := strings.LastIndex(s, " ")
	return s[:i], s[i+1:]
}

// totals sums a profile's values per stack text ("name@module;...").
func totals(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Samples {
		parts := make([]string, len(s.Stack))
		for i, id := range s.Stack {
			f := p.Frames[id]
			parts[i] = f.Name + "@" + f.Module
		}
		out[strings.Join(parts, ";")] += s.Value
	}
	return out
}

func sumTotals(ms ...map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, m := range ms {
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

func equalTotals(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("per-stack totals differ:\n got %v\nwant %v", got, want)
	}
}

func meta(app, build, run string) RunMeta {
	return RunMeta{App: app, Build: build, Run: run, Start: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func ingest(t testing.TB, s *Store, m RunMeta, p *profile.Profile) {
	t.Helper()
	if err := s.Write(context.Background(), m, p, nil); err != nil {
		t.Fatal(err)
	}
}

func export(t testing.TB, s *Store, app, build, run string) map[string]int64 {
	t.Helper()
	return totals(exportProfile(t, s, app, build, run))
}

func exportProfile(t testing.TB, s *Store, app, build, run string) *profile.Profile {
	t.Helper()
	p, err := s.Export(context.Background(), app, build, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// withSources gives p's frames the file and line of sources[name].
func withSources(p *profile.Profile, sources map[string]profile.Frame) *profile.Profile {
	for i, f := range p.Frames {
		if src, ok := sources[f.Name]; ok {
			p.Frames[i].File, p.Frames[i].Line = src.File, src.Line
		}
	}
	return p
}

// count runs a count() query, for checks of what reached the tables.
func count(t testing.TB, s *Store, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := s.conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
