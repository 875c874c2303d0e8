package tree

// A culprit from its sites: one function's sites summed into one claim
// with its kind and callee, and displaced work left to the moves
// (docs/CULPRITS.md, "Kinds" and "Work that moved").

import (
	"cmp"
	"math"
	"slices"
)

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
// their base share). The culprits of one direction and the new and removed
// frames set that factor; any other culprit whose share changed by it,
// within Welch's t at alpha, is dropped. The direction that sets it is
// the one that explains every culprit of the other; when both do (every
// function of the run a culprit: shares that sum to 1 make one side's
// change mirror the other's), the one with fewer culprits, a change in
// few places that the others make room for; else the larger summed delta.
func (c *culpritFinder) undisplaced(out []Culprit) []Culprit {
	var sum float64
	for _, cu := range out {
		sum += cu.Delta
	}
	byDelta := math.Copysign(1, sum)
	var drop []bool
	setters, explained := 0, false
	for k, dir := range []float64{byDelta, -byDelta} {
		d, n, all := c.displaced(out, dir)
		if k == 0 || d == nil || all && (!explained || n < setters) {
			drop, setters, explained = d, n, all
		}
	}
	if drop == nil {
		return out
	}
	kept, runs := out[:0], c.runs[:0]
	for k, cu := range out {
		if !drop[k] {
			kept, runs = append(kept, cu), append(runs, c.runs[k])
		}
	}
	c.runs = runs
	return kept
}

// displaced says which culprits only make room when those of direction
// dir (and the new and removed frames) set the factor, how many set it,
// and whether every other one does; drop is nil when the setters hold the
// whole run on a side (no room is left to make).
func (c *culpritFinder) displaced(out []Culprit, dir float64) (drop []bool, setters int, all bool) {
	sets := func(cu Culprit) bool {
		return math.Copysign(1, cu.Delta) == dir || cu.Kind == CulpritNew || cu.Kind == CulpritRemoved || cu.Kind == CulpritReplaced
	}
	var head, base float64
	for k, cu := range out {
		if sets(cu) {
			setters++
			r := c.runs[k]
			head += meanOf(r[:c.hr]) / c.test.root.HeadTotal
			base += meanOf(r[c.hr:]) / c.test.root.BaseTotal
		}
	}
	if head >= 1 || base >= 1 {
		return nil, setters, false
	}
	factor := (1 - head) / (1 - base)
	drop, all = make([]bool, len(out)), true
	for k, cu := range out {
		if !sets(cu) {
			drop[k] = c.proportional(c.runs[k], factor)
			all = all && drop[k]
		}
	}
	return drop, setters, all
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
