// Package storage keeps Flamediff's runs in ClickHouse: the schema and its
// migration, atomic and idempotent ingestion of a profile.Profile, and the
// aggregated reads the data source and the CLI need. docs/SCHEMA.md
// describes the tables and why they look the way they do.
//
// Every value in a query is a bound parameter (clickhouse-go's client-side
// binding, which quotes and escapes); table and database names are checked
// against identPattern. Reads aggregate in ClickHouse and stream the result.
package storage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultMaxRows is the default cap on the rows one StackValues or
// Timeline call may read (see Options.MaxRows).
const DefaultMaxRows = 5_000_000

// DefaultBatchRows is the default number of rows per INSERT.
const DefaultBatchRows = 250_000

// Options configures a Store.
type Options struct {
	// ClickHouse is the connection. Auth.Database, when set, is the
	// database that Migrate creates and unqualified table names live in.
	ClickHouse *clickhouse.Options
	// Tables names the tables; empty fields take the defaults.
	Tables Tables
	// Distributed, when not nil, overrides the detection of Distributed
	// tables (system.tables): true makes reads use GLOBAL IN for their
	// subqueries, false plain IN. CheckCluster reports an override that
	// contradicts the tables.
	Distributed *bool
	// MaxRows caps the distinct (group, stack[, time frame]) rows that one
	// StackValues or Timeline call reads; beyond it the call fails with
	// ErrTooManyRows. 0 means DefaultMaxRows.
	MaxRows int
	// BatchRows is the number of rows per INSERT during Write; 0 means
	// DefaultBatchRows.
	BatchRows int
}

// Store reads and writes Flamediff's tables. It is safe for concurrent use.
type Store struct {
	conn      driver.Conn
	opts      clickhouse.Options // a copy, for Migrate's database-less connection
	tables    Tables             // validated, with defaults
	q         quotedTables       // the same names, quoted for SQL
	override  *bool              // Options.Distributed
	mu        sync.Mutex         // guards detected
	detected  string             // "IN" or "GLOBAL IN" once known (see in)
	maxRows   int
	batchRows int
}

// ErrTooManyRows is returned (wrapped) when a read exceeds Options.MaxRows.
var ErrTooManyRows = errors.New("too many rows")

// identPattern is what a database or table name may look like: an
// identifier, optionally qualified with a database ("db.table").
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// quoteIdent checks an identifier and backquotes each dotted part.
func quoteIdent(name string) (string, error) {
	if !identPattern.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".") {
		return "", fmt.Errorf("invalid identifier %q: want letters, digits and _ (optionally db.table)", name)
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, "."), nil
}

// Open returns a Store over a clickhouse-go connection. It does not dial:
// the connection is made on first use (Ping checks it), so that a Store can
// be opened before Migrate creates its database.
func Open(opts Options) (*Store, error) {
	if opts.ClickHouse == nil {
		return nil, errors.New("storage: no ClickHouse options")
	}
	if opts.MaxRows < 0 || opts.BatchRows < 0 {
		return nil, fmt.Errorf("storage: negative MaxRows (%d) or BatchRows (%d)", opts.MaxRows, opts.BatchRows)
	}
	if db := opts.ClickHouse.Auth.Database; db != "" {
		if _, err := quoteIdent(db); err != nil || strings.Contains(db, ".") {
			return nil, fmt.Errorf("storage: database: invalid identifier %q", db)
		}
	}
	tables := opts.Tables.withDefaults()
	q, err := tables.quoted()
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	conn, err := clickhouse.Open(opts.ClickHouse)
	if err != nil {
		return nil, fmt.Errorf("storage: open clickhouse: %w", err)
	}
	s := &Store{
		conn:      conn,
		opts:      *opts.ClickHouse,
		tables:    tables,
		q:         q,
		override:  opts.Distributed,
		maxRows:   opts.MaxRows,
		batchRows: opts.BatchRows,
	}
	if s.maxRows == 0 {
		s.maxRows = DefaultMaxRows
	}
	if s.batchRows == 0 {
		s.batchRows = DefaultBatchRows
	}
	return s, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.conn.Close() }

// Tables returns the table names in use (defaults filled in).
func (s *Store) Tables() Tables { return s.tables }

// chUnknownDatabase is ClickHouse's UNKNOWN_DATABASE exception code.
const chUnknownDatabase = 81

// NoDatabase reports whether err is ClickHouse saying that the store's
// database does not exist: Migrate has not run on that server.
func NoDatabase(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == chUnknownDatabase
}

// Ping checks that the server answers and the database exists.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("connect to clickhouse: %w", err)
	}
	return nil
}

// ServerVersion returns the server's version string, e.g. "18.16.1".
func (s *Store) ServerVersion(ctx context.Context) (string, error) {
	var v string
	if err := s.conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return "", fmt.Errorf("query server version: %w", err)
	}
	return v, nil
}
