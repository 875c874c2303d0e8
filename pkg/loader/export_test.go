package loader

import (
	"context"

	"github.com/flamediff/flamediff/pkg/storage"
)

// For the tests of package stacks_test, which run queries through
// pkg/query (which imports this package).

// FillRuns reads every stack of runs into c and lists their hashes.
func (c *Cache) FillRuns(ctx context.Context, store *storage.Store, runs []storage.Run) ([]uint64, error) {
	return c.fillRuns(ctx, store, runs, nil)
}

// Selection is the hashes of runs' stacks that c remembers, or nil.
func (c *Cache) Selection(runs []storage.Run) []uint64 { return c.selection(runs) }

// Lacking returns the hashes whose stacks c does not hold.
func (c *Cache) Lacking(hashes []uint64) []uint64 {
	return c.resolve(hashes, func(uint64, []uint32, *frameTable) {})
}
