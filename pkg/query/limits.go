package query

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/pkg/tree"
)

// ErrTooBig means a query would hold more memory than its budget.
var ErrTooBig = errors.New("query too big")

// Rough costs of what a query holds at its peak, measured with the
// plugin's diff benchmark: a tree node with its data frame row and the
// row's encodings for gRPC (on the high side), and one (run, stack) row
// while the engine is filled: the row waiting for its stack (32 bytes),
// its slot among the per-run values (8 bytes a run of its side that has
// the stack or not: ~32 where a stack is in a quarter of the runs, as in
// the benchmark) and its share of the stack it names (interned frames and
// cache entry, ~400 bytes, shared by the runs that have the stack). Runs
// that share few stacks cost more per row than this typical figure.
const (
	bytesPerNode     = 400
	bytesPerStackRow = 100
)

// trees is how many trees the query returns.
func (m Model) trees() int {
	if m.Variants && m.QueryType != Functions {
		return len(Variants)
	}
	return 1
}

// checkMemory fails with ErrTooBig, naming what to change, when the
// trees the query asks for of b's stacks could exceed budget bytes (0: no
// budget). A tree has at most MaxNodes nodes, and no more than its
// stacks' frames (plus an "other" per parent).
func (m Model) checkMemory(b *tree.Builder, budget int64) error {
	if m.QueryType == Functions {
		return nil // a row per function, not per node
	}
	nodes := int64(min(m.MaxNodes, 2*b.FrameRefs()+1))
	need := int64(m.trees()) * nodes * bytesPerNode
	if budget == 0 || need <= budget {
		return nil
	}
	advice := "lower maxNodes"
	if m.trees() > 1 {
		advice += " or turn variants off"
	}
	return fmt.Errorf("%w: %d trees of up to %d nodes could take %d MB, above the data source's maxQueryMemory of %d MB: %s",
		ErrTooBig, m.trees(), nodes, need>>20, budget>>20, advice)
}

// StackRowsWithin is how many (run, stack) rows a query may read into
// the engine within budget bytes.
func StackRowsWithin(budget int64) int {
	return int(budget / bytesPerStackRow)
}
