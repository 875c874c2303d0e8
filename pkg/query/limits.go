package query

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/pkg/tree"
)

// ErrTooBig means a query would hold more memory than its budget.
var ErrTooBig = errors.New("query too big")

// Rough costs, on the high side, of what a query holds at its peak: one
// (side, stack) row while the engine is filled (the row, the interned
// stack and its frames; BenchmarkUnderLoad's 500k-stack diffs peak at
// about 200 bytes a row), and a tree node with its data frame row and
// the row's encodings for gRPC (from the sizes of their fields).
const (
	bytesPerNode     = 400
	bytesPerStackRow = 250
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

// tooManyRows reports whether an engine filled with rows (side, stack)
// rows would exceed the executor's memory budget.
func (e *Executor) tooManyRows(rows int) bool {
	return e.MaxMemory > 0 && int64(rows)*bytesPerStackRow > e.MaxMemory
}

func (e *Executor) tooBig(rows int) error {
	return fmt.Errorf("%w: more than %d (side, stack) rows would take over the data source's maxQueryMemory of %d MB: select fewer runs",
		ErrTooBig, rows-1, e.MaxMemory>>20)
}
