// Package teststore opens a storage.Store on a clickhouse-go DSN, as the
// integration tests of several packages do (chtest.DSN gives one); the
// plugin and the CLI build their options from settings instead.
package teststore

import (
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/pkg/storage"
)

// Open is storage.Open with a DSN such as
// clickhouse://default:@127.0.0.1:9000/flamediff (the path is the
// database) and default options otherwise.
func Open(dsn string, tables storage.Tables) (*storage.Store, error) {
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("storage: bad DSN: %w", err)
	}
	return storage.Open(storage.Options{ClickHouse: o, Tables: tables})
}
