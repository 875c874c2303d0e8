package query

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/tree"
)

// ErrTooBig means a query would hold more memory than its budget.
var ErrTooBig = errors.New("query too big")

// Rough costs of what a query holds at its peak (the process's peak
// resident memory over an idle one's): one (run, stack) row (its per-run
// value, its share of the statistics' per-run totals and of the frame's
// per-run arrays, the garbage of decoding it), one distinct stack (its
// text, interned, and its share of the tree; counted as the widest run's),
// and a tree node with its data frame row and the row's encodings for
// gRPC (from the sizes of their fields). BenchmarkDiffRuns's diffs of 50
// and 100 runs a side over 50,000 stacks grew the process by 43-52 bytes
// a row, all costs in; see docs/PERFORMANCE.md.
const (
	bytesPerNode   = 400
	bytesPerRunRow = 48
	bytesPerStack  = 600
)

// trees is how many trees the query returns.
func (m Model) trees() int {
	if !m.Spec().Flame {
		return 1
	}
	n := len(m.sandwichParts())
	if m.Variants {
		n *= len(Variants)
	}
	return n
}

// checkMemory fails with ErrTooBig, naming what to change, when the
// trees the query asks for of b's stacks could exceed budget bytes (0: no
// budget). A tree has at most MaxNodes nodes, and no more than its
// stacks' frames (plus an "other" per parent).
func (m Model) checkMemory(b *tree.Builder, budget int64) error {
	if !m.Spec().Flame {
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

// admit refuses, before anything is read, runs whose (run, stack) rows
// (Run.Stacks each) and stacks would take the engine over the memory
// budget.
func (e *Executor) admit(runs []storage.Run) error {
	n := loader.Rows(runs)
	var widest uint64
	for _, r := range runs {
		widest = max(widest, r.Stacks)
	}
	need := int64(n)*bytesPerRunRow + int64(widest)*bytesPerStack // #nosec G115 -- a run's distinct stacks, far below 2^63
	if e.MaxMemory == 0 || need <= e.MaxMemory {
		return nil
	}
	return fmt.Errorf("%w: %d runs of %d (run, stack) rows would take about %d MB, above the data source's maxQueryMemory of %d MB: select fewer runs",
		ErrTooBig, len(runs), n, need>>20, e.MaxMemory>>20)
}
