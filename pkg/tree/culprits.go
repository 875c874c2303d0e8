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

// rescueShare is the share of alpha each rescue family spends, one over
// it: the descent spends half, the tree's family and the self family a
// quarter each.
const rescueShare = 4

// selfRescued says whether node i's self value changed significantly in
// the self family: every function's own time, a partition of the root's,
// each tested at alpha/4 times its weight (weighted Bonferroni, valid
// under any dependence). It finds a large function's change that the
// descent cannot reach, as in a time-boxed run where every change is
// offset and no ancestor's total moves, and that the tree's family misses
// among thousands of small nodes. A node only one side has is left to the
// moves.
func (c *culpritFinder) selfRescued(i int) bool {
	nd := c.t.Nodes[i]
	if nd.Frame == OtherFrame || nd.HeadTotal == 0 || nd.BaseTotal == 0 || nd.HeadSelf == 0 && nd.BaseSelf == 0 {
		return false
	}
	// weighted reads p at the descent's level, alpha/2 times the weight.
	return c.weighted(c.selfP(i), nd.HeadSelf, nd.BaseSelf)*rescueShare/2 < c.test.alpha
}

// selfP is the p-value of node i's self values: its total's for a leaf,
// whose self is its total.
func (c *culpritFinder) selfP(i int) float64 {
	if c.t.Nodes[i].Size == 1 {
		return c.t.Stats[i].PValue
	}
	return c.test.test(c.selfRuns(i), 0).PValue
}

// selfRuns is node i's per-run self values, its totals less its
// children's, in a buffer the next call reuses: computed for the few
// nodes that need them rather than kept for every node (a row of runs
// per node, as much again as the tree's per-run totals).
func (c *culpritFinder) selfRuns(i int) []float64 {
	t, row := c.t, c.self
	copy(row, t.Stats[i].HeadRuns)
	copy(row[c.hr:], t.Stats[i].BaseRuns)
	for ch := i + 1; ch < i+int(t.Nodes[i].Size); ch += int(t.Nodes[ch].Size) {
		s := t.Stats[ch]
		for r, v := range s.HeadRuns {
			row[r] -= v
		}
		for r, v := range s.BaseRuns {
			row[c.hr+r] -= v
		}
	}
	return row
}

func (c *culpritFinder) selfDelta(i int) float64 {
	nd := c.t.Nodes[i]
	return deltaOf(nd.HeadSelf, nd.BaseSelf, c.test.root, c.t.Normalize)
}

// significant says whether node i was found changed in its family.
func (c *culpritFinder) significant(i int) bool { return c.q[i] < c.test.alpha }

// testParts tests node i's parts: its children (their totals' tests) and
// its self (but the root's, which is no function's: under Focus it is
// what lies outside the path). Each part is tested at alpha/2 times its
// weight, its mean share of the two sides' root totals (q is p over half
// the weight): the weights of disjoint parts add up to at most 1, so the
// descent rejects a true null anywhere with probability at most alpha/2
// (weighted Bonferroni, applied top down; docs/CULPRITS.md).
func (c *culpritFinder) testParts(i int) {
	t := c.t
	nd := t.Nodes[i]
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		if k := t.Nodes[ch]; k.Frame != OtherFrame {
			c.q[ch] = c.weighted(t.Stats[ch].PValue, k.HeadTotal, k.BaseTotal)
		}
	}
	switch {
	case nd.Size == 1:
		c.selfQ[i] = c.q[i] // a leaf's self is its total
	case i > 0 && (nd.HeadSelf != 0 || nd.BaseSelf != 0):
		c.selfQ[i] = c.weighted(c.selfP(i), nd.HeadSelf, nd.BaseSelf)
	}
}

// weighted is p over half the weight of a part of these values: the
// descent's share of alpha.
func (c *culpritFinder) weighted(p, head, base float64) float64 {
	return adjusted(p, c.weight(head, base))
}

// weight is a part's mean share of the two sides' root totals.
func (c *culpritFinder) weight(head, base float64) float64 {
	root := c.test.root
	return (head/root.HeadTotal + base/root.BaseTotal) / 2
}

// adjusted is p over half of weight, capped at 1: the weighted Bonferroni
// adjusted p-value, read against alpha.
func adjusted(p, weight float64) float64 {
	return min(1, p/(min(weight, 1)/2))
}

// find appends the culprits of node i's subtree to out, i being entered:
// the root, a node found changed in the family of its parent's parts, or
// one on the path to a node significant in a rescue family.
// The parts of i are tested as a family; its changed children are
// entered in turn, and a change of its self is a culprit. Bottom up, the
// culprits found under i are replaced by one spread culprit at i when
// i's whole subtree changed in proportion.
func (c *culpritFinder) find(i int, out *[]site) {
	c.enter(i, out, false)
}

// enter is find of an entered node i; quiet says that i was entered only
// on the way to new or removed frames (holdsMove): a frame that only one
// side has is always significant in the tree's family, and what it holds
// may only have moved, so entering there spends no error budget: only
// the moves and the cost of moved work (a moveGroup's own test) are
// looked for, and i's other parts are entered only on the way to a
// significant node of the family (holds).
func (c *culpritFinder) enter(i int, out *[]site, quiet bool) {
	t := c.t
	nd := t.Nodes[i]
	if i > 0 && c.significant(i) && !quiet {
		switch {
		case nd.BaseTotal == 0 && nd.HeadTotal > 0:
			*out = append(*out, site{node: i, kind: CulpritNew, q: c.q[i], weight: c.weight(nd.HeadTotal, nd.BaseTotal), replaced: -1})
			return
		case nd.HeadTotal == 0 && nd.BaseTotal > 0:
			*out = append(*out, c.removed(site{node: i, kind: CulpritRemoved, q: c.q[i], weight: c.weight(nd.HeadTotal, nd.BaseTotal), replaced: -1}))
			return
		}
	}
	c.testParts(i)
	g := c.moveGroup(i)
	start := len(*out)
	if i > 0 && c.selfSignificant(i) && g == nil && !quiet {
		*out = append(*out, site{node: i, kind: CulpritSelf, q: c.selfQ[i], weight: c.weight(nd.HeadSelf, nd.BaseSelf), replaced: -1})
	}
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		if g != nil && g.member[ch] {
			continue
		}
		// A child that is i's only part is i: i's entry stands for it
		// (a chain, or the one child of the root in a relative diff,
		// whose share is always 1).
		alone := ch+int(t.Nodes[ch].Size) == i+int(nd.Size) && ch == i+1 && nd.HeadSelf == 0 && nd.BaseSelf == 0
		if t.Nodes[ch].Frame == OtherFrame {
			continue
		}
		switch {
		case alone || !quiet && c.significant(ch) || c.holds[ch]:
			if alone {
				c.q[ch] = c.q[i]
			}
			c.enter(ch, out, quiet && !c.holds[ch])
		case c.holdsMove[ch]:
			c.enter(ch, out, true)
		}
	}
	if g != nil {
		c.locate(g, out)
	}
	if !c.significant(i) || nd.Size == 1 || quiet {
		return
	}
	found := (*out)[start:]
	switch {
	case len(found) == 0 && i > 0:
		// Changed, but no part of it is: the change is spread over
		// parts too small to show it one by one.
		*out = append(*out, site{node: i, kind: CulpritSpread, q: c.q[i], weight: c.weight(nd.HeadTotal, nd.BaseTotal), replaced: -1})
	case len(found) > 0 && c.spread(i, found):
		*out = append((*out)[:start], site{node: i, kind: CulpritSpread, q: c.q[i], weight: c.weight(nd.HeadTotal, nd.BaseTotal), replaced: -1})
	}
}

// selfSignificant says whether node i's self value changed significantly.
func (c *culpritFinder) selfSignificant(i int) bool { return c.selfQ[i] < c.test.alpha }

// spread says whether node i's whole subtree changed in proportion, so
// that the culprits found under it are one change of i: i's parts (its
// children and its self) that changed significantly are two or more, or
// one child that is itself a spread culprit; they all changed in one
// direction; no culprit under i is a new or removed frame; and no part of
// i changed by another factor than theirs together (Welch's t of the
// part's head runs against its base runs times that factor, at the
// Bonferroni level over the tree's parts).
func (c *culpritFinder) spread(i int, found []site) bool {
	t := c.t
	nd := t.Nodes[i]
	for _, s := range found {
		if s.kind == CulpritNew || s.kind == CulpritRemoved || s.kind == CulpritReplaced || s.moved {
			return false
		}
	}
	var head, base, sign float64
	parts := 0
	add := func(h, b float64) bool {
		d := math.Copysign(1, h-b)
		if sign != 0 && d != sign {
			return false
		}
		sign, parts = d, parts+1
		head, base = head+h, base+b
		return true
	}
	if c.selfSignificant(i) && !add(nd.HeadSelf, nd.BaseSelf) {
		return false
	}
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		if k := t.Nodes[ch]; k.Frame != OtherFrame && c.significant(ch) && !add(k.HeadTotal, k.BaseTotal) {
			return false
		}
	}
	if parts == 0 || base <= 0 || parts == 1 && !(len(found) == 1 && found[0].kind == CulpritSpread) {
		return false
	}
	factor := head / base
	if t.Normalize == Relative {
		factor *= c.test.root.BaseTotal / c.test.root.HeadTotal
	}
	w := c.w
	if !c.proportional(c.selfRuns(i), factor) {
		return false
	}
	runs := make([]float64, w)
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		s := t.Stats[ch]
		copy(runs, s.HeadRuns)
		copy(runs[c.hr:], s.BaseRuns)
		if !c.proportional(runs, factor) {
			return false
		}
	}
	return true
}

// proportional says whether per-run values (head runs, then base runs)
// are consistent with head = factor x base, in the tested units (shares
// when Relative).
func (c *culpritFinder) proportional(runs []float64, factor float64) bool {
	x, y := c.x, c.y
	copy(x, runs[:c.hr])
	copy(y, runs[c.hr:])
	allZero := true
	for _, v := range runs {
		allZero = allZero && v == 0
	}
	if allZero {
		return true
	}
	if c.t.Normalize == Relative {
		share(x, c.test.rootRuns[Head])
		share(y, c.test.rootRuns[Base])
	}
	for r := range y {
		y[r] *= factor
	}
	return !(c.test.welch(x, y).P < c.partAlpha)
}

// group merges the sites of one function and kind into one culprit,
// tests the sum of their per-run values, and orders the culprits by the
// size of their change.
func (c *culpritFinder) group(found []site) []Culprit {
	t, w := c.t, c.w
	type key struct {
		frame uint32
		kind  CulpritKind
	}
	index := map[key]int{}
	var out []Culprit
	var sites [][]site
	for _, s := range found {
		k := key{t.Nodes[s.node].Frame, s.kind}
		at, ok := index[k]
		if !ok {
			at = len(out)
			index[k] = at
			out = append(out, Culprit{Frame: k.frame, Kind: s.kind, Replaced: -1, QValue: math.Inf(1)})
			sites = append(sites, nil)
		}
		out[at].Sites = append(out[at].Sites, s.node)
		out[at].QValue = min(out[at].QValue, s.q)
		out[at].Moved = out[at].Moved || s.moved
		sites[at] = append(sites[at], s)
	}
	c.runs = make([][]float64, len(out))
	for k := range out {
		cu := &out[k]
		runs := make([]float64, w)
		c.runs[k] = runs
		var head, base float64
		for _, s := range sites[k] {
			i := s.node
			nd, st := t.Nodes[i], t.Stats[i]
			switch {
			case s.runs != nil:
				addRuns(runs, s.runs)
				head, base = head+meanOf(s.runs[:c.hr]), base+meanOf(s.runs[c.hr:])
			case cu.Kind == CulpritSelf:
				addRuns(runs, c.selfRuns(i))
				head, base = head+nd.HeadSelf, base+nd.BaseSelf
			default:
				addRuns(runs[:c.hr], st.HeadRuns)
				addRuns(runs[c.hr:], st.BaseRuns)
				head, base = head+nd.HeadTotal, base+nd.BaseTotal
			}
		}
		slices.SortStableFunc(cu.Sites, func(a, b int) int {
			return cmp.Compare(math.Abs(c.siteDelta(b, cu.Kind)), math.Abs(c.siteDelta(a, cu.Kind)))
		})
		cu.Delta = deltaOf(head, base, c.test.root, t.Normalize)
		switch first := sites[k][slices.IndexFunc(sites[k], func(s site) bool { return s.node == cu.Sites[0] })]; cu.Kind {
		case CulpritReplaced:
			cu.NewCallees, cu.GoneCallees, cu.Replaced = first.newCallees, first.goneCallees, first.replaced
			cu.Callee = first.newCallees[0]
		case CulpritRemoved:
			// The call inside the callee gone, never a sibling of it.
			cu.Replaced = first.replaced
			gone := first.node // a callee of the root is its own site
			if first.replaced >= 0 {
				gone = first.replaced
			}
			cu.Callee = c.callee(gone, cu.Kind)
		default:
			cu.Callee = c.callee(cu.Sites[0], cu.Kind)
		}
		s := c.test.test(runs, cu.Delta)
		cu.DeltaLow, cu.DeltaHigh, cu.PValue = s.DeltaLow, s.DeltaHigh, s.PValue
		if len(sites[k]) > 1 {
			// The sum is what is reported, so it is what is tested, at
			// the sites' weights together: a function whose sites
			// changed in opposite directions may not have changed.
			var weight float64
			for _, s := range sites[k] {
				weight += s.weight
			}
			cu.QValue = adjusted(cu.PValue, weight)
		}
	}
	// A culprit stands only where its own interval leaves 0 out.
	kept, keptRuns := out[:0], c.runs[:0]
	for k, cu := range out {
		if cu.QValue < c.test.alpha && (cu.DeltaLow > 0 || cu.DeltaHigh < 0) {
			kept, keptRuns = append(kept, cu), append(keptRuns, c.runs[k])
		}
	}
	out, c.runs = kept, keptRuns
	if t.Normalize == Relative {
		out = c.undisplaced(out)
	}
	var up, down float64
	for k := range out {
		cu := &out[k]
		if cu.Delta > 0 {
			up += cu.Delta
		} else {
			down += cu.Delta
		}
	}
	rootDelta := t.Delta(0)
	for k := range out {
		cu := &out[k]
		switch {
		case t.Normalize == Absolute && rootDelta != 0:
			cu.Share = cu.Delta / rootDelta
		case cu.Delta > 0:
			cu.Share = cu.Delta / up
		case cu.Delta < 0:
			cu.Share = cu.Delta / down
		}
	}
	slices.SortStableFunc(out, func(a, b Culprit) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)), cmp.Compare(a.Sites[0], b.Sites[0]))
	})
	return out
}

// undisplaced drops, in a relative diff, the culprits that only make room
// for the others: when some functions take a larger share, every other
// one's share shrinks by the same factor, (1 - their head share) / (1 -
// their base share). The culprits of the direction with the larger summed
// delta and the new and removed frames set that factor; any other culprit
// whose share changed by it, within Welch's t at alpha, is dropped.
func (c *culpritFinder) undisplaced(out []Culprit) []Culprit {
	var up, down float64
	for _, cu := range out {
		if cu.Delta > 0 {
			up += cu.Delta
		} else {
			down += cu.Delta
		}
	}
	dominant := math.Copysign(1, up+down)
	var head, base float64
	sets := func(cu Culprit) bool {
		return math.Copysign(1, cu.Delta) == dominant || cu.Kind == CulpritNew || cu.Kind == CulpritRemoved || cu.Kind == CulpritReplaced
	}
	for k, cu := range out {
		if sets(cu) {
			r := c.runs[k]
			head += meanOf(r[:c.hr]) / c.test.root.HeadTotal
			base += meanOf(r[c.hr:]) / c.test.root.BaseTotal
		}
	}
	if head >= 1 || base >= 1 {
		return out
	}
	factor := (1 - head) / (1 - base)
	kept, runs := out[:0], c.runs[:0]
	for k, cu := range out {
		if sets(cu) || !c.proportional(c.runs[k], factor) {
			kept, runs = append(kept, cu), append(runs, c.runs[k])
		}
	}
	c.runs = runs
	return kept
}

// callee is the child of node i holding 80% or more of its change (-1:
// none, or a self culprit).
func (c *culpritFinder) callee(i int, kind CulpritKind) int {
	t := c.t
	nd := t.Nodes[i]
	change := nd.HeadTotal - nd.BaseTotal
	if kind == CulpritSelf || change == 0 {
		return -1
	}
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		if k := t.Nodes[ch]; k.Frame != OtherFrame && (k.HeadTotal-k.BaseTotal)/change >= 0.8 {
			return ch
		}
	}
	return -1
}

func (c *culpritFinder) siteDelta(i int, kind CulpritKind) float64 {
	if kind == CulpritSelf {
		return c.selfDelta(i)
	}
	return c.t.Delta(i)
}

// removed is the site of a removed callee s.node: its caller, with the
// callee's values (a call gone is a change of the caller's code). A
// callee of the root stays itself.
func (c *culpritFinder) removed(s site) site {
	t, i := c.t, s.node
	at := i - 1
	for at > 0 && t.Nodes[at].Depth >= t.Nodes[i].Depth {
		at--
	}
	if at == 0 {
		return s
	}
	if s.runs == nil {
		s.runs = make([]float64, c.w)
		copy(s.runs, t.Stats[i].HeadRuns)
		copy(s.runs[c.hr:], t.Stats[i].BaseRuns)
	}
	s.node, s.replaced = at, i
	return s
}
