package storage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// LocalSuffix ends the names of the per-shard tables that
// MigrateCluster puts behind the Distributed ones ("samples_local").
const LocalSuffix = "_local"

// Host is one server of a cluster as system.clusters lists it.
type Host struct {
	Shard, Replica uint32
	Addr           string // host:port of the native protocol
}

// hosts lists the servers of cluster from the system.clusters table
// of the server the store connects to.
func (s *Store) hosts(ctx context.Context, cluster string) ([]Host, error) {
	return clusterHosts(ctx, s.conn, cluster)
}

func clusterHosts(ctx context.Context, conn driver.Conn, cluster string) ([]Host, error) {
	rows, err := conn.Query(ctx, "SELECT shard_num, replica_num, host_address, port FROM system.clusters "+
		"WHERE cluster = ? ORDER BY shard_num, replica_num", cluster)
	if err != nil {
		return nil, fmt.Errorf("list the hosts of cluster %s: %w", cluster, err)
	}
	hosts, err := collect(rows, "list the hosts of cluster "+cluster, func(scan func(...any) error) (Host, error) {
		var h Host
		var addr string
		var port uint16
		err := scan(&h.Shard, &h.Replica, &addr, &port)
		h.Addr = net.JoinHostPort(addr, strconv.Itoa(int(port)))
		return h, err
	})
	if err == nil && len(hosts) == 0 {
		err = fmt.Errorf("cluster %q is not in system.clusters of the server (its remote_servers config)", cluster)
	}
	return hosts, err
}

// onHost runs do on a connection to host made with the store's options
// (credentials, TLS, timeouts) and no database, over the native protocol:
// system.clusters lists native ports whatever the store uses.
func (s *Store) onHost(host Host, do func(driver.Conn) error) error {
	o := s.opts
	o.Addr = []string{host.Addr}
	o.Protocol = clickhouse.Native
	return withoutDatabase(o, do)
}

// withoutDatabase runs do on a connection made with o but no database: one
// that works before Migrate creates it.
func withoutDatabase(o clickhouse.Options, do func(driver.Conn) error) error {
	o.Auth.Database = ""
	conn, err := clickhouse.Open(&o)
	if err != nil {
		return err
	}
	defer conn.Close()
	return do(conn)
}

// MigrateCluster creates the schema on every host of cluster, each host
// connected to directly (no ON CLUSTER, so no ZooKeeper or Keeper): the
// database, each table as a MergeTree named with LocalSuffix, and a
// Distributed table with the plain name in front of it, sharded by the
// table's shardBy. Statements are CREATE ... IF NOT EXISTS and columns an
// existing table lacks are added, so running it again migrates an existing
// cluster and completes a host that missed a run; local tables created
// beforehand (ReplicatedMergeTree, say) keep their engine. The store's
// table names must be the Distributed ones.
func (s *Store) MigrateCluster(ctx context.Context, cluster string) error {
	fail := func(err error) error { return fmt.Errorf("migrate cluster %s: %w", cluster, err) }
	// The entry server's database may not exist yet either.
	var hosts []Host
	err := withoutDatabase(s.opts, func(conn driver.Conn) (err error) {
		hosts, err = clusterHosts(ctx, conn, cluster)
		return err
	})
	if err != nil {
		return fail(err)
	}
	for _, h := range hosts {
		if err := s.onHost(h, func(conn driver.Conn) error { return s.migrateHost(ctx, conn, cluster) }); err != nil {
			return fail(fmt.Errorf("shard %d replica %d (%s): %w", h.Shard, h.Replica, h.Addr, err))
		}
	}
	err = s.backfillRunStacks(ctx)
	if err == nil {
		err = s.backfillFunctions(ctx)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// migrateHost creates one host's database, local and Distributed tables.
func (s *Store) migrateHost(ctx context.Context, conn driver.Conn, cluster string) error {
	db := s.opts.Auth.Database
	if db == "" {
		if err := conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&db); err != nil {
			return err
		}
	} else if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+db+"`"); err != nil { // checked by Open
		return fmt.Errorf("create database %s: %w", db, err)
	}
	var tables []tableRef
	for _, r := range s.tableRefs(db) {
		local, err := quoteIdent(r.db + "." + r.table + LocalSuffix)
		if err != nil {
			return err
		}
		dist, _ := quoteIdent(r.db + "." + r.table) // checked by Open
		if err := conn.Exec(ctx, r.schema.ddl(local)); err != nil {
			return fmt.Errorf("create %s: %w", local, err)
		}
		if err := conn.Exec(ctx, r.schema.distributedDDL(dist), cluster, r.db, r.table+LocalSuffix); err != nil {
			return fmt.Errorf("create %s: %w", dist, err)
		}
		tables = append(tables, tableRef{r.db, r.table + LocalSuffix, r.schema}, r)
	}
	return addMissingColumns(ctx, conn, tables)
}

// addMissingColumns adds to existing tables the columns of their schema
// they lack (an upgrade of tables created by an older version): local
// tables first, then the Distributed table in front, which reads them by
// name. ALTER TABLE ADD COLUMN changes metadata only; old rows read the
// column's default.
func addMissingColumns(ctx context.Context, conn driver.Conn, tables []tableRef) error {
	have, err := readColumns(ctx, conn, tables)
	if err != nil {
		return err
	}
	for _, t := range tables {
		q, _ := quoteIdent(t.db + "." + t.table) // checked by the caller
		for _, c := range t.schema.columns {
			if have[[2]string{t.db, t.table}][c.name] {
				continue
			}
			if err := conn.Exec(ctx, "ALTER TABLE "+q+" ADD COLUMN "+c.name+" "+c.typ); err != nil {
				return fmt.Errorf("add column %s to %s: %w", c.name, q, err)
			}
		}
	}
	return nil
}

// splitName splits "db.table" into its parts; an unqualified name is in
// database def.
func splitName(name, def string) (db, table string) {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[:i], name[i+1:]
	}
	return def, name
}

// tableRef is one of the store's tables, resolved to its database.
type tableRef struct {
	db, table string
	schema    *tableSchema
}

// tableRefs resolves the store's table names against the connection's
// current database.
func (s *Store) tableRefs(current string) []tableRef {
	t := s.tables
	var refs []tableRef
	for _, f := range t.fields() {
		db, table := splitName(*f.name, current)
		refs = append(refs, tableRef{db, table, f.schema})
	}
	return refs
}

// layout is what system.tables says about the store's tables.
type layout struct {
	current     string                   // the connection's database
	missing     int                      // tables that do not exist
	distributed map[[2]string]distTarget // the Distributed ones, by {db, table}
}

// distTarget is what a Distributed table reads: its cluster and the local
// table on each shard.
type distTarget struct{ cluster, db, table string }

// readLayout finds which of the store's tables exist and which are
// Distributed, from the engine_full of system.tables
// ("Distributed('cluster', 'db', 'table'[, key])").
func (s *Store) readLayout(ctx context.Context) (layout, error) {
	var current string
	if err := s.conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&current); err != nil {
		return layout{}, err
	}
	refs := s.tableRefs(current)
	var dbs, names []string
	for _, r := range refs {
		dbs, names = append(dbs, r.db), append(names, r.table)
	}
	rows, err := s.conn.Query(ctx, "SELECT database, name, engine, engine_full FROM system.tables WHERE database IN ? AND name IN ?",
		groupSet(dbs), groupSet(names))
	if err != nil {
		return layout{}, err
	}
	type found struct{ engine, full string }
	have := map[[2]string]found{}
	_, err = collect(rows, "read system.tables", func(scan func(...any) error) (struct{}, error) {
		var db, name string
		var f found
		err := scan(&db, &name, &f.engine, &f.full)
		have[[2]string{db, name}] = f
		return struct{}{}, err
	})
	if err != nil {
		return layout{}, err
	}
	l := layout{current: current, distributed: map[[2]string]distTarget{}}
	for _, r := range refs {
		f, ok := have[[2]string{r.db, r.table}]
		switch {
		case !ok:
			l.missing++
		case f.engine == "Distributed":
			args := strings.SplitN(strings.TrimSuffix(strings.TrimPrefix(f.full, "Distributed("), ")"), ",", 4)
			for i := range args {
				args[i] = strings.Trim(args[i], " '`\"\\")
			}
			if len(args) < 3 {
				return layout{}, fmt.Errorf("table %s.%s: cannot read its engine %q", r.db, r.table, f.full)
			}
			l.distributed[[2]string{r.db, r.table}] = distTarget{args[0], args[1], args[2]}
		}
	}
	return l, nil
}

// in returns the operator of the reads' subqueries: "GLOBAL IN" when the
// tables are Distributed (a plain IN would run the subquery on every shard
// over the Distributed table again, which ClickHouse refuses with code 288),
// else "IN"; Options.Distributed overrides the detection. A detection that
// fails, or that finds tables missing, is retried on the next read.
func (s *Store) in(ctx context.Context) string {
	if s.override != nil {
		return inOp(*s.override)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.detected == "" {
		l, err := s.readLayout(ctx)
		if err != nil {
			return "IN" // the read itself then fails with the cause
		}
		op := inOp(len(l.distributed) > 0)
		if l.missing > 0 {
			return op
		}
		s.detected = op
	}
	return s.detected
}

// notIn is the negation of in.
func (s *Store) notIn(ctx context.Context) string {
	return strings.Replace(s.in(ctx), "IN", "NOT IN", 1)
}

func inOp(distributed bool) string {
	if distributed {
		return "GLOBAL IN"
	}
	return "IN"
}

// CheckCluster checks what Distributed tables need beyond CheckTables: that
// Options.Distributed, if set, agrees with the tables; and for each
// Distributed table that every host of its cluster answers and has its
// local table. It returns a summary ("tables distributed over cluster c:
// 2 shards") or "" for local tables.
func (s *Store) CheckCluster(ctx context.Context) (string, error) {
	l, err := s.readLayout(ctx)
	if err != nil {
		return "", fmt.Errorf("check cluster: %w", err)
	}
	if s.override != nil && *s.override != (len(l.distributed) > 0) {
		if *s.override {
			return "", errors.New("the distributed setting is on but no table is Distributed: remove the setting (reads detect Distributed tables)")
		}
		return "", fmt.Errorf("the distributed setting is off but %d tables are Distributed, which makes every query fail (code 288): "+
			"remove the setting (reads detect Distributed tables)", len(l.distributed))
	}
	if len(l.distributed) == 0 {
		return "", nil
	}
	// Local tables per cluster, so that each host is visited once.
	locals := map[string][]tableRef{}
	for _, d := range l.distributed {
		locals[d.cluster] = append(locals[d.cluster], tableRef{db: d.db, table: d.table})
	}
	var problems, summary []string
	for cluster, want := range locals {
		hosts, err := s.hosts(ctx, cluster)
		if err != nil {
			return "", fmt.Errorf("check cluster: %w", err)
		}
		shards := map[uint32]bool{}
		for _, h := range hosts {
			shards[h.Shard] = true
			where := fmt.Sprintf("shard %d replica %d (%s) of cluster %s", h.Shard, h.Replica, h.Addr, cluster)
			missing, err := s.missingOnHost(ctx, h, want)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is down: %v", where, err))
			} else if len(missing) > 0 {
				problems = append(problems, fmt.Sprintf("%s lacks local tables %s", where, strings.Join(missing, ", ")))
			}
		}
		summary = append(summary, fmt.Sprintf("cluster %s: %d shards, %d hosts", cluster, len(shards), len(hosts)))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return "", fmt.Errorf("check cluster: %s", strings.Join(problems, "; "))
	}
	sort.Strings(summary)
	return "Distributed tables over " + strings.Join(summary, "; "), nil
}

// missingOnHost returns the tables of want that host lacks.
func (s *Store) missingOnHost(ctx context.Context, h Host, want []tableRef) ([]string, error) {
	var missing []string
	err := s.onHost(h, func(conn driver.Conn) error {
		have, err := readColumns(ctx, conn, want)
		for _, t := range want {
			if have[[2]string{t.db, t.table}] == nil {
				missing = append(missing, t.db+"."+t.table)
			}
		}
		return err
	})
	sort.Strings(missing)
	return missing, err
}

// readColumns returns the columns of those of tables that exist on conn,
// by {db, table}.
func readColumns(ctx context.Context, conn driver.Conn, tables []tableRef) (map[[2]string]map[string]bool, error) {
	var dbs, names []string
	for _, t := range tables {
		dbs, names = append(dbs, t.db), append(names, t.table)
	}
	rows, err := conn.Query(ctx, "SELECT database, table, name FROM system.columns WHERE database IN ? AND table IN ?",
		groupSet(dbs), groupSet(names))
	if err != nil {
		return nil, err
	}
	have := map[[2]string]map[string]bool{}
	_, err = collect(rows, "read system.columns", func(scan func(...any) error) (struct{}, error) {
		var k [2]string
		var col string
		err := scan(&k[0], &k[1], &col)
		if have[k] == nil {
			have[k] = map[string]bool{}
		}
		have[k][col] = true
		return struct{}{}, err
	})
	return have, err
}

// storedTable is where rows of one of the store's tables are kept: the
// table itself, or on a cluster one host's local table behind the
// Distributed one. Parts and mutations exist only there.
type storedTable struct {
	conn   driver.Conn
	quoted string // for SQL
	name   string // for system.parts and system.mutations: table or db.table
}

// eachStored calls do with every storedTable of the table named name (one
// of s.tables' names).
func (s *Store) eachStored(ctx context.Context, name string, do func(storedTable) error) error {
	l, err := s.readLayout(ctx)
	if err != nil {
		return err
	}
	db, table := splitName(name, l.current)
	d, ok := l.distributed[[2]string{db, table}]
	if !ok {
		q, _ := quoteIdent(name) // checked by Open
		return do(storedTable{s.conn, q, name})
	}
	hosts, err := s.hosts(ctx, d.cluster)
	if err != nil {
		return err
	}
	local := d.db + "." + d.table
	q, err := quoteIdent(local)
	if err != nil {
		return fmt.Errorf("local table of %s: %w", name, err)
	}
	for _, h := range hosts {
		err := s.onHost(h, func(conn driver.Conn) error { return do(storedTable{conn, q, local}) })
		if err != nil {
			return fmt.Errorf("shard %d replica %d (%s): %w", h.Shard, h.Replica, h.Addr, err)
		}
	}
	return nil
}
