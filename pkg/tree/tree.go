package tree

import (
	"fmt"
	"math"
)

// Special frame ids of nodes that stand for no interned frame.
const (
	// RootFrame is the frame of the synthetic root node (label "total").
	RootFrame uint32 = math.MaxUint32
	// OtherFrame is the frame of a node that merges siblings too small to
	// keep under Options.MaxNodes (label "other").
	OtherFrame uint32 = math.MaxUint32 - 1
)

// Node is one node of a Tree. Values are per run: the sum over a side's runs
// divided by its run count. A node's Total is its value including callees;
// Self is Total minus the children's Totals.
type Node struct {
	// Frame is a frame id of the tree's Frames, RootFrame or OtherFrame.
	Frame uint32
	// Depth is 0 for the root and parent depth + 1 otherwise.
	Depth uint32
	// Size is the number of nodes in the subtree, the node included: the
	// subtree is Nodes[i:i+Size] and the next sibling is at i+Size.
	Size uint32

	HeadTotal, HeadSelf float64
	// BaseTotal and BaseSelf are 0 unless the tree is a diff.
	BaseTotal, BaseSelf float64
}

// Tree is a flame graph tree as a flat array of nodes in depth-first
// pre-order: Nodes[0] is the root (RootFrame, depth 0), and the children of a
// node follow it in display order (first seen, or alphabetical when
// inverted). A Tree built from no data has just the root, with zero values.
type Tree struct {
	Frames *Frames
	Nodes  []Node
	// Diff says whether the base side took part (Options and SetRuns).
	Diff bool
	// Normalize is what Delta and Stats compare (Options.Normalize).
	Normalize Normalization
	// Alpha is the false-discovery rate of Stats' Significant.
	Alpha float64
	// Runs is the run count of each side (indexed by Side).
	Runs [2]int
	// Stats parallels Nodes in a diff built from per-run values (AddRun,
	// at least 2 runs a side); nil otherwise, with StatsNotice saying why
	// for a diff.
	Stats       []NodeStats
	StatsNotice string
	// Exact says that the costs do not vary between runs of a side (every
	// run the same, or one run a side of exact profiles): Stats' p-values
	// are 0 for a change and 1 for none, their intervals of width 0
	// (docs/STATISTICS.md).
	Exact bool
	// Notice says why a tree has no stack when Options.Filter or Only
	// left none of the stacks there were; "" otherwise.
	Notice string
}

// Len is the number of nodes.
func (t *Tree) Len() int { return len(t.Nodes) }

// Label is the text drawn for node i: the frame name, "total" for the root
// and "other" for merged nodes.
func (t *Tree) Label(i int) string {
	switch f := t.Nodes[i].Frame; f {
	case RootFrame:
		return "total"
	case OtherFrame:
		return "other"
	default:
		return t.Frames.Name(f)
	}
}

// Title is Label with Frames.Title for a frame: how node i's function is
// named where it stands alone.
func (t *Tree) Title(i int) string {
	if f := t.Nodes[i].Frame; f != RootFrame && f != OtherFrame {
		return t.Frames.Title(f)
	}
	return t.Label(i)
}

// Delta is node i's change: (head total - base total) / base root total
// (Absolute: a share of the whole base), or head total / head root total -
// base total / base root total (Relative: the change of its share). It is
// 0 when the tree is not a diff or a root total it divides by is 0 (no
// finite share exists).
func (t *Tree) Delta(i int) float64 {
	if !t.Diff {
		return 0
	}
	return deltaOf(t.Nodes[i].HeadTotal, t.Nodes[i].BaseTotal, t.Nodes[0], t.Normalize)
}

// SelfDelta is node i's change of self value, in Delta's units.
func (t *Tree) SelfDelta(i int) float64 {
	if !t.Diff {
		return 0
	}
	return deltaOf(t.Nodes[i].HeadSelf, t.Nodes[i].BaseSelf, t.Nodes[0], t.Normalize)
}

// EachStack calls fn for every node with a non-zero self on either side,
// in pre-order, with the node's path from the root (excluding the root; a
// path may contain OtherFrame) and its head and base self values. The
// stack slice is reused between calls. It is the tree in folded form.
func (t *Tree) EachStack(fn func(stack []uint32, head, base float64)) {
	var path []uint32
	for i, n := range t.Nodes {
		if i > 0 {
			path = append(path[:n.Depth-1], n.Frame)
		}
		if n.HeadSelf != 0 || n.BaseSelf != 0 {
			fn(path, n.HeadSelf, n.BaseSelf)
		}
	}
}

// CheckValid verifies the tree's invariants: a single root, pre-order depth
// and subtree sizes that agree, children one level below their parent, on
// each side total = self + children's totals and, with statistics, total =
// the average of the node's runs (up to float rounding).
func (t *Tree) CheckValid() error {
	n := len(t.Nodes)
	if n == 0 {
		return fmt.Errorf("tree has no root")
	}
	root := t.Nodes[0]
	if root.Frame != RootFrame || root.Depth != 0 || int(root.Size) != n {
		return fmt.Errorf("root: frame %d, depth %d, size %d of %d nodes", root.Frame, root.Depth, root.Size, n)
	}
	if t.Stats != nil && len(t.Stats) != n {
		return fmt.Errorf("%d stats for %d nodes", len(t.Stats), n)
	}
	tol := 1e-9 * max(1, math.Abs(root.HeadTotal), math.Abs(root.BaseTotal))
	for i, nd := range t.Nodes {
		end := i + int(nd.Size)
		if nd.Size == 0 || end > n {
			return fmt.Errorf("node %d: size %d out of range", i, nd.Size)
		}
		if i > 0 && (nd.Frame == RootFrame || nd.Depth == 0) {
			return fmt.Errorf("node %d: a second root", i)
		}
		if !t.Diff && (nd.BaseTotal != 0 || nd.BaseSelf != 0) {
			return fmt.Errorf("node %d: base values in a tree that is not a diff", i)
		}
		var head, base float64
		c := i + 1
		for c < end {
			ch := t.Nodes[c]
			if ch.Depth != nd.Depth+1 || ch.Size == 0 {
				return fmt.Errorf("node %d: child %d has depth %d, size %d under depth %d", i, c, ch.Depth, ch.Size, nd.Depth)
			}
			head += ch.HeadTotal
			base += ch.BaseTotal
			c += int(ch.Size)
		}
		if c != end {
			return fmt.Errorf("node %d: children overrun its subtree", i)
		}
		if math.Abs(nd.HeadTotal-nd.HeadSelf-head) > tol || math.Abs(nd.BaseTotal-nd.BaseSelf-base) > tol {
			return fmt.Errorf("node %d (%s): total != self + children (head %g = %g + %g, base %g = %g + %g)",
				i, t.Label(i), nd.HeadTotal, nd.HeadSelf, head, nd.BaseTotal, nd.BaseSelf, base)
		}
		if t.Stats != nil {
			if h, b := meanOf(t.Stats[i].HeadRuns), meanOf(t.Stats[i].BaseRuns); math.Abs(h-nd.HeadTotal) > tol || math.Abs(b-nd.BaseTotal) > tol {
				return fmt.Errorf("node %d (%s): runs average %g/%g, totals %g/%g", i, t.Label(i), h, b, nd.HeadTotal, nd.BaseTotal)
			}
		}
	}
	return nil
}

func meanOf(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
