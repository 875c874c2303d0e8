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
	// CulpritRemoved is a frame that only base runs (a call gone).
	CulpritRemoved
	// CulpritSelf is a node whose own (self) value changed.
	CulpritSelf
	// CulpritSpread is a node whose whole subtree changed in proportion:
	// called more or less often, or doing more or less of everything.
	CulpritSpread
)

// String is "new", "removed", "self" or "spread".
func (k CulpritKind) String() string {
	return [...]string{"new", "removed", "self", "spread"}[k]
}

// Culprit is a place where a diff's change enters the tree: the nodes
// above it only carry it. See docs/CULPRITS.md.
type Culprit struct {
	// Sites are the nodes where the function is a culprit of this kind,
	// largest change first: Sites[0] is the call path shown, the others
	// are its other call sites.
	Sites []int
	Frame uint32
	Kind  CulpritKind
	// Delta is the change of the sites' totals (self values for
	// CulpritSelf) in the tree's delta units, with its 95% interval and
	// Welch's p-value over the sites' summed per-run values.
	Delta, DeltaLow, DeltaHigh, PValue float64
	// QValue is PValue adjusted by Benjamini-Hochberg over the culprits,
	// in a family of as many tests as the tree has tested nodes.
	QValue float64
	// Share is Delta over the change of the root total (Absolute), or
	// over the summed delta of the culprits of its direction (Relative,
	// where the root does not change).
	Share float64
}

// Regression says whether the culprit makes head slower or larger.
func (c *Culprit) Regression() bool { return c.Delta > 0 }

// Path is the frames of the culprit's first site, from the root's child
// down (leaf first in an inverted tree).
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

// Culprits returns the places where the change of a diff with statistics
// enters the tree, largest change first: nil when t has no statistics or
// nothing changed significantly. See docs/CULPRITS.md for the method.
func (t *Tree) Culprits() []Culprit {
	if t.Stats == nil || len(t.Nodes) == 0 {
		return nil
	}
	c := newCulpritFinder(t)
	var found []site
	c.find(0, &found)
	return c.group(found)
}

// site is one node found a culprit, before sites of one function are
// grouped.
type site struct {
	node int
	kind CulpritKind
}

type culpritFinder struct {
	t     *Tree
	test  *tester
	w, hr int
	// self[i*w:(i+1)*w] is node i's per-run self values, selfQ its q-value
	// in the family of self tests.
	self  []float64
	selfQ []float64
	// changed[i] says whether node i or a node under it changed
	// significantly: the nodes find enters.
	changed []bool
	// tested counts the tree's tested nodes (all but "other" ones).
	tested int
	// runs[k] is culprit k's summed per-run values (while grouping).
	runs [][]float64
	// partAlpha is the level below which a part of a node is taken to
	// have changed differently from the node's culprits.
	partAlpha float64
	x, y      []float64
}

func newCulpritFinder(t *Tree) *culpritFinder {
	test := &tester{norm: t.Normalize, alpha: cmp.Or(t.Alpha, DefaultAlpha), runs: t.Runs,
		quantile: stats.NewTQuantiles(ciLevel)}
	root := append(slices.Clone(t.Stats[0].HeadRuns), t.Stats[0].BaseRuns...)
	test.setRoot(root)
	w, hr := test.width(), t.Runs[Head]
	test.x, test.y = make([]float64, hr), make([]float64, w-hr)
	c := &culpritFinder{t: t, test: test, w: w, hr: hr, x: make([]float64, hr), y: make([]float64, w-hr)}
	c.selfRuns()
	c.changed = make([]bool, len(t.Nodes))
	parent := parents(t.Nodes)
	for i := len(t.Nodes) - 1; i > 0; i-- {
		c.changed[i] = c.changed[i] || t.Nodes[i].Frame != OtherFrame && (t.Stats[i].Significant || c.selfSignificant(i))
		if c.changed[i] {
			c.changed[parent[i]] = true
		}
	}
	// Every node is a part of its parent once, and every self once.
	c.partAlpha = test.alpha / float64(2*len(t.Nodes))
	return c
}

// selfRuns computes every node's per-run self values and tests them:
// Welch's t as for totals, Benjamini-Hochberg over the nodes (but
// "other" ones) with a self value on either side.
func (c *culpritFinder) selfRuns() {
	t, w := c.t, c.w
	c.self = make([]float64, len(t.Nodes)*w)
	parent := parents(t.Nodes)
	for i, s := range t.Stats {
		row := c.self[i*w : (i+1)*w]
		copy(row, s.HeadRuns)
		copy(row[c.hr:], s.BaseRuns)
		if i > 0 { // parents come first: a parent's row holds its totals already
			p := c.self[int(parent[i])*w : (int(parent[i])+1)*w]
			for r := range w {
				p[r] -= row[r]
			}
		}
	}
	p := make([]float64, len(t.Nodes))
	for i, nd := range t.Nodes {
		p[i] = math.NaN()
		if nd.Frame != OtherFrame {
			c.tested++
		}
		// The root's self is no function's (under Focus: what lies
		// outside the path).
		if i > 0 && nd.Frame != OtherFrame && (nd.HeadSelf != 0 || nd.BaseSelf != 0) {
			p[i] = c.test.test(c.self[i*w:(i+1)*w], 0).PValue
		}
	}
	c.selfQ = stats.BenjaminiHochberg(p)
}

func (c *culpritFinder) selfDelta(i int) float64 {
	nd := c.t.Nodes[i]
	return deltaOf(nd.HeadSelf, nd.BaseSelf, c.test.root, c.t.Normalize)
}

func (c *culpritFinder) significant(i int) bool { return c.t.Stats[i].Significant }

// find appends the culprits of node i's subtree to out, i being entered
// (the root, or a node with a significant change in its subtree). Bottom
// up: the culprits of its children, and its own self change, replaced by
// one spread culprit at i when i's whole subtree changed in proportion.
func (c *culpritFinder) find(i int, out *[]site) {
	t := c.t
	nd := t.Nodes[i]
	if i > 0 && c.significant(i) {
		switch {
		case nd.BaseTotal == 0 && nd.HeadTotal > 0:
			*out = append(*out, site{i, CulpritNew})
			return
		case nd.HeadTotal == 0 && nd.BaseTotal > 0:
			*out = append(*out, site{i, CulpritRemoved})
			return
		}
	}
	start := len(*out)
	if c.selfSignificant(i) {
		*out = append(*out, site{i, CulpritSelf})
	}
	leaf := true
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		leaf = false
		if c.changed[ch] {
			c.find(ch, out)
		}
	}
	if !c.significant(i) {
		return
	}
	found := (*out)[start:]
	switch {
	case len(found) == 0:
		// Significant, but no part of it is: the change is spread over
		// parts too small to show it one by one.
		kind := CulpritSpread
		if leaf {
			kind = CulpritSelf
		}
		*out = append(*out, site{i, kind})
	case !leaf && c.spread(i, found):
		*out = append((*out)[:start], site{i, CulpritSpread})
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
		if s.kind == CulpritNew || s.kind == CulpritRemoved {
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
	if !c.proportional(c.self[i*w:(i+1)*w], factor) {
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
	return c.proportionalAt(runs, factor, c.partAlpha)
}

// proportionalAt is proportional at level alpha.
func (c *culpritFinder) proportionalAt(runs []float64, factor, alpha float64) bool {
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
	return !(stats.WelchTest(x, y).P < alpha)
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
	for _, s := range found {
		k := key{t.Nodes[s.node].Frame, s.kind}
		at, ok := index[k]
		if !ok {
			at = len(out)
			index[k] = at
			out = append(out, Culprit{Frame: k.frame, Kind: s.kind})
		}
		out[at].Sites = append(out[at].Sites, s.node)
	}
	c.runs = make([][]float64, len(out))
	for k := range out {
		cu := &out[k]
		runs := make([]float64, w)
		c.runs[k] = runs
		var head, base float64
		for _, i := range cu.Sites {
			nd, st := t.Nodes[i], t.Stats[i]
			if cu.Kind == CulpritSelf {
				addRuns(runs, c.self[i*w:(i+1)*w])
				head, base = head+nd.HeadSelf, base+nd.BaseSelf
			} else {
				addRuns(runs[:c.hr], st.HeadRuns)
				addRuns(runs[c.hr:], st.BaseRuns)
				head, base = head+nd.HeadTotal, base+nd.BaseTotal
			}
		}
		slices.SortStableFunc(cu.Sites, func(a, b int) int {
			return cmp.Compare(math.Abs(c.siteDelta(b, cu.Kind)), math.Abs(c.siteDelta(a, cu.Kind)))
		})
		cu.Delta = deltaOf(head, base, c.test.root, t.Normalize)
		s := c.test.test(runs, cu.Delta)
		cu.DeltaLow, cu.DeltaHigh, cu.PValue = s.DeltaLow, s.DeltaHigh, s.PValue
	}
	if t.Normalize == Relative {
		out = c.undisplaced(out)
	}
	// Benjamini-Hochberg over the culprits, counting every tested node as
	// a place a culprit could have been: a culprit stands for a chain of
	// significant nodes, so the nodes' own q-values would let through as
	// many false culprits as false nodes, and culprits are few.
	p := make([]float64, max(len(out), c.tested))
	for k := range p {
		p[k] = 1
		if k < len(out) {
			p[k] = out[k].PValue
		}
	}
	q := stats.BenjaminiHochberg(p)
	kept := out[:0]
	var up, down float64
	for k, cu := range out {
		if cu.QValue = q[k]; !(cu.QValue < c.test.alpha) {
			continue
		}
		kept = append(kept, cu)
		if cu.Delta > 0 {
			up += cu.Delta
		} else {
			down += cu.Delta
		}
	}
	out = kept
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
		return math.Copysign(1, cu.Delta) == dominant || cu.Kind == CulpritNew || cu.Kind == CulpritRemoved
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

func (c *culpritFinder) siteDelta(i int, kind CulpritKind) float64 {
	if kind == CulpritSelf {
		return c.selfDelta(i)
	}
	return c.t.Delta(i)
}
