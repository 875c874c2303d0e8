package tree

import (
	"cmp"
	"math"
	"slices"

	"github.com/flamediff/flamediff/pkg/stats"
)

// CulpritKind says how a change enters the tree at a culprit.
type CulpritKind uint8

const (
	// CulpritNew is a frame that only head runs (a new call).
	CulpritNew CulpritKind = iota
	// CulpritRemoved is a call gone from head: a caller no longer calls
	// a callee (Replaced) that only base runs. It is found at the
	// caller, whose code changed: a removed callee has no code in head.
	CulpritRemoved
	// CulpritSelf is a node whose own (self) value changed.
	CulpritSelf
	// CulpritSpread is a node whose whole subtree changed in proportion:
	// called more or less often, or doing more or less of everything.
	CulpritSpread
	// CulpritReplaced is a caller whose callees were replaced by others
	// (new ones where base had removed ones) with a net change of cost.
	CulpritReplaced
)

// String is "new", "removed", "self", "spread" or "replaced".
func (k CulpritKind) String() string {
	return [...]string{"new", "removed", "self", "spread", "replaced"}[k]
}

// Culprit is a place where a diff's change enters the tree: the nodes
// above it only carry it. See docs/CULPRITS.md.
type Culprit struct {
	// Sites are the nodes where the function is a culprit of this kind,
	// largest change first: Sites[0] is the call path shown, the others
	// are its other call sites.
	Sites []int
	// Callee is the child of Sites[0] that holds most (80% or more) of a
	// new, removed or spread culprit's change, the call to look at
	// first; the new callee of a replaced culprit; -1 when none does.
	Callee int
	// Replaced is the removed callee (the largest) of a replaced or
	// removed culprit; -1 for the other kinds.
	Replaced int
	// NewCallees and GoneCallees are a replaced culprit's swap at
	// Sites[0]: the callees it calls instead of those it no longer calls,
	// largest first.
	NewCallees, GoneCallees []int
	// Moved says that the culprit was found within work that moved (a
	// Move): its delta is the cost change inside it.
	Moved bool
	Frame uint32
	Kind  CulpritKind
	// Delta is the change of the sites' totals (self values for
	// CulpritSelf) in the tree's delta units, with its 95% interval and
	// Welch's p-value over the sites' summed per-run values. Where work
	// moved (Move), it is the cost change the culprit explains: a
	// function's self values summed over the moved work's subtrees, or the
	// net change of the new, removed or replaced callees and their caller's
	// self time.
	Delta, DeltaLow, DeltaHigh, PValue float64
	// QValue is PValue adjusted to the level the culprit was tested at:
	// PValue over half its weight, its share of the root totals (summed
	// over its sites), never below PValue (docs/CULPRITS.md). A culprit
	// whose interval holds 0 or whose QValue is alpha or more is not
	// reported.
	QValue float64
	// Share is Delta over the change of the root total (Absolute), or
	// over the summed delta of the culprits of its direction (Relative,
	// where the root does not change).
	Share float64
}

// Regression says whether the culprit makes head slower or larger.
func (c *Culprit) Regression() bool { return c.Delta > 0 }

// Path is the frames of node's path, from the root's child down to the
// node (leaf first in an inverted tree); empty for the root.
func (t *Tree) Path(node int) []uint32 {
	path := make([]uint32, t.Nodes[node].Depth)
	// In pre-order, the nearest node before a node one level up is its
	// parent.
	want := t.Nodes[node].Depth
	for i := node; i > 0 && want > 0; i-- {
		if t.Nodes[i].Depth == want {
			path[want-1] = t.Nodes[i].Frame
			want--
		}
	}
	return path
}

// Move is work that moved in the tree between base and head: under
// Parent, callees new or gone (a function split off, a wrapper added or
// removed, a change of inlining, a rename, a callee replaced) took over
// work that other parts of Parent (callees, or Parent's own self time) did.
// A move is no cost change: the cost changes within it are culprits.
type Move struct {
	// Parent is the node under which the work moved.
	Parent int
	// To are the parts of Parent that gained work, From those that lost
	// it, significantly, largest first: child nodes, or Parent itself for
	// its own (self) time.
	To, From []int
	// Moved is the work that moved, the smaller of what To gained and
	// From lost, in the tree's delta units (a share of the base total).
	Moved float64
	// Net is the change of Parent's self time and of every callee taking
	// part, with its 95% interval and Welch's p-value.
	Net, NetLow, NetHigh, PValue float64
}

// Culprits returns the places where the cost of a diff with statistics
// changed, largest change first: nil when t has no statistics or nothing
// changed significantly. See docs/CULPRITS.md for the method.
func (t *Tree) Culprits() []Culprit {
	cs, _ := t.Changes()
	return cs
}

// Changes returns the culprits (Culprits) and the places where work moved
// without being a change of cost by itself (docs/CULPRITS.md), largest
// moved first.
func (t *Tree) Changes() ([]Culprit, []Move) {
	if t.Stats == nil || len(t.Nodes) == 0 {
		return nil, nil
	}
	c := newCulpritFinder(t)
	var found []site
	c.find(0, &found)
	slices.SortStableFunc(c.moves, func(a, b Move) int { return cmp.Compare(b.Moved, a.Moved) })
	return c.group(found), c.moves
}

// site is one node found a culprit, before sites of one function are
// grouped.
type site struct {
	node int
	kind CulpritKind
	// q is the site's adjusted p-value, and weight the weight it was
	// tested at (weighted).
	q, weight float64
	// runs are the site's per-run values when they are not the node's
	// (a function's self values over moved work, or a net change); nil
	// otherwise.
	runs []float64
	// moved says that the site was found in moved work (a moveGroup).
	moved bool
	// replaced is a replaced or removed culprit's removed callee (-1:
	// none); newCallees and goneCallees a replaced culprit's swap.
	replaced                int
	newCallees, goneCallees []int
}

type culpritFinder struct {
	t     *Tree
	test  *tester
	w, hr int
	// self holds a node's per-run self values (selfRuns).
	self []float64
	// q[i] is node i's q-value in its parent's family, selfQ[i] that of
	// its self, once find has tested them (NaN before).
	q, selfQ []float64
	// holds[i] says whether node i's subtree holds a node significant in
	// a rescue family (the tree's family of totals, or selfRescued), on
	// both sides; holdsMove[i] whether it holds one only head or only base
	// has (a new or removed frame).
	holds, holdsMove []bool
	// runs[k] is culprit k's summed per-run values (while grouping).
	runs [][]float64
	// partAlpha is the level below which a part of a node is taken to
	// have changed differently from the node's culprits.
	partAlpha float64
	x, y      []float64
	moves     []Move
}

func newCulpritFinder(t *Tree) *culpritFinder {
	test := &tester{norm: t.Normalize, alpha: cmp.Or(t.Alpha, stats.DefaultAlpha), runs: t.Runs, exact: t.Exact,
		quantile: stats.NewTQuantiles(ciLevel)}
	root := append(slices.Clone(t.Stats[0].HeadRuns), t.Stats[0].BaseRuns...)
	test.setRoot(root)
	w, hr := test.width(), t.Runs[Head]
	test.x, test.y = make([]float64, hr), make([]float64, w-hr)
	c := &culpritFinder{t: t, test: test, w: w, hr: hr, x: make([]float64, hr), y: make([]float64, w-hr)}
	c.self = make([]float64, w)
	c.q, c.selfQ = make([]float64, len(t.Nodes)), make([]float64, len(t.Nodes))
	for i := range c.q {
		c.q[i], c.selfQ[i] = math.NaN(), math.NaN()
	}
	// One error budget: the descent's tests spend half of alpha
	// (weighted), the rescue families a quarter each (the tree's family,
	// Benjamini-Hochberg at alpha/4, and selfRescued): with nothing
	// changed, a culprit needs a false rejection in one of them
	// (docs/CULPRITS.md). q-values are scaled to be read
	// against alpha.
	//
	// A frame that only one side has is always a discovery of the family,
	// and may only have moved: those lead the descent to the moves
	// (holdsMove), and the family that leads it to changes of cost (holds)
	// is Benjamini-Hochberg over the other nodes, so that their number
	// does not lower the bar for the others' noise.
	c.holds, c.holdsMove = make([]bool, len(t.Nodes)), make([]bool, len(t.Nodes))
	family, oneSided := make([]float64, len(t.Nodes)), false
	for i, s := range t.Stats {
		family[i] = s.QValue
		if nd := t.Nodes[i]; (nd.HeadTotal == 0 || nd.BaseTotal == 0) && 2*s.QValue < test.alpha {
			oneSided = true
		}
	}
	if oneSided { // else the family is the tree's own
		for i, s := range t.Stats {
			family[i] = math.NaN()
			if nd := t.Nodes[i]; !math.IsNaN(s.QValue) && nd.HeadTotal != 0 && nd.BaseTotal != 0 {
				family[i] = s.PValue
			}
		}
		family = stats.BenjaminiHochberg(family)
	}
	parent := parents(t.Nodes)
	for i := len(t.Nodes) - 1; i > 0; i-- {
		c.holds[i] = c.holds[i] || rescueShare*family[i] < test.alpha || c.selfRescued(i)
		c.holdsMove[i] = c.holdsMove[i] || math.IsNaN(family[i]) && 2*t.Stats[i].QValue < test.alpha
		c.holds[parent[i]] = c.holds[parent[i]] || c.holds[i]
		c.holdsMove[parent[i]] = c.holdsMove[parent[i]] || c.holdsMove[i]
	}
	// The root, which no family of parts holds, changed when the tree's
	// family says so.
	c.q[0] = rescueShare * family[0]
	// Every node is a part of its parent once, and every self once.
	c.partAlpha = test.alpha / float64(2*len(t.Nodes))
	return c
}
