package tree

import (
	"cmp"
	"math"
	"slices"
)

// moveGroup is the work under an entered node that new or removed callees
// take part in: the node's own self time, its new and removed children
// and the children related to them (called in one of them, or calling
// one). Work that only moved keeps the group's sum; the group's net change
// is its cost change (docs/CULPRITS.md).
type moveGroup struct {
	node int
	// members are the children of node that take part, in order;
	// member says whether a child is one.
	members []int
	member  map[int]bool
	// structural are the members new in head or gone from it.
	structural []int
	// runs are the per-run values of node's self plus the members' totals
	// (head runs, then base runs); head and base their means.
	runs       []float64
	head, base float64
	q          float64
	// move is the index of its Move in the finder's moves (-1: none).
	move int
}

// moveGroup returns the group of node i's parts that work moved between,
// nil when no child of i that is new or gone changed significantly in
// i's family (testParts has run). The group counts as one part of i,
// of the weight of its members together (so the descent's weights still
// add up), and records a Move when parts of it gained and others lost
// work significantly.
func (c *culpritFinder) moveGroup(i int) *moveGroup {
	t := c.t
	nd := t.Nodes[i]
	var structural []int
	changed := false
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		if k := t.Nodes[ch]; k.Frame != OtherFrame && (k.BaseTotal == 0) != (k.HeadTotal == 0) {
			structural = append(structural, ch)
			changed = changed || c.significant(ch)
		}
	}
	if !changed {
		return nil
	}
	// Frames in the new and removed subtrees, and the new and removed
	// frames themselves: a sibling that is one of the first (the rest of
	// a function split off in part) or calls one of the second (a wrapper
	// that some calls still go through) takes part.
	inside, tops := map[uint32]bool{}, map[uint32]bool{}
	for _, s := range structural {
		tops[t.Nodes[s].Frame] = true
		for n := s; n < s+int(t.Nodes[s].Size); n++ {
			inside[t.Nodes[n].Frame] = true
		}
	}
	g := &moveGroup{node: i, member: map[int]bool{}, structural: structural, runs: make([]float64, c.w), move: -1}
	if i > 0 {
		copy(g.runs, c.selfRuns(i))
		g.head, g.base = nd.HeadSelf, nd.BaseSelf
	}
	for ch := i + 1; ch < i+int(nd.Size); ch += int(t.Nodes[ch].Size) {
		k := t.Nodes[ch]
		if k.Frame == OtherFrame {
			continue
		}
		related := slices.Contains(structural, ch) || inside[k.Frame]
		for n := ch + 1; !related && n < ch+int(k.Size); n++ {
			related = tops[t.Nodes[n].Frame]
		}
		if !related {
			continue
		}
		g.member[ch], g.members = true, append(g.members, ch)
		s := t.Stats[ch]
		addRuns(g.runs[:c.hr], s.HeadRuns)
		addRuns(g.runs[c.hr:], s.BaseRuns)
		g.head, g.base = g.head+k.HeadTotal, g.base+k.BaseTotal
	}
	net := deltaOf(g.head, g.base, c.test.root, t.Normalize)
	s := c.test.test(g.runs, net)
	g.q = c.weighted(s.PValue, g.head, g.base)
	c.record(g, Move{Parent: i, Net: net, NetLow: s.DeltaLow, NetHigh: s.DeltaHigh, PValue: s.PValue})
	return g
}

// record adds m to the moves when parts of g gained work and others lost
// it, significantly in i's family: a new call alone is a change of cost,
// not a move.
func (c *culpritFinder) record(g *moveGroup, m Move) {
	t, i := c.t, g.node
	type part struct {
		node  int
		delta float64
	}
	var parts []part
	if i > 0 && c.selfSignificant(i) {
		parts = append(parts, part{i, c.selfDelta(i)})
	}
	for _, ch := range g.members {
		if c.significant(ch) {
			parts = append(parts, part{ch, t.Delta(ch)})
		}
	}
	slices.SortFunc(parts, func(a, b part) int {
		return cmp.Or(cmp.Compare(math.Abs(b.delta), math.Abs(a.delta)), cmp.Compare(a.node, b.node))
	})
	var gain, loss float64
	for _, p := range parts {
		if p.delta > 0 {
			m.To, gain = append(m.To, p.node), gain+p.delta
		} else if p.delta < 0 {
			m.From, loss = append(m.From, p.node), loss-p.delta
		}
	}
	if len(m.To) == 0 || len(m.From) == 0 {
		return
	}
	m.Moved = min(gain, loss)
	g.move = len(c.moves)
	c.moves = append(c.moves, m)
}

// locate finds the cost change of a group whose net changed
// significantly. Work that moved keeps each function's self values summed
// over the group (the flat profile of the group's subtrees): a function
// present on both sides whose sum changed in the net's direction (tested
// at its weight within the group's) is a self culprit, at its largest
// head site. What the net keeps beyond those functions is the new,
// removed or replaced callees' own: one culprit of the rest of the net
// (no more than those callees' change), at the new callee (new), the
// removed one (removed), or the caller when callees were both added and
// removed (replaced).
func (c *culpritFinder) locate(g *moveGroup, out *[]site) {
	if !(g.q < c.test.alpha) {
		return
	}
	t, i := c.t, g.node
	type function struct {
		runs       []float64
		head, base float64
		node       int
	}
	fns := map[uint32]*function{}
	var order []uint32
	// callers are, for each frame, the frames that call it in the group;
	// parent is a node's parent in it.
	// calls are the calls' totals on each side (base, head).
	callers, parent := map[uint32][]uint32{}, map[int]int{}
	calls := map[[2]uint32][2]float64{}
	add := func(n int) {
		for ch := n + 1; ch < n+int(t.Nodes[n].Size); ch += int(t.Nodes[ch].Size) {
			parent[ch] = n
			k, call := t.Nodes[ch], [2]uint32{t.Nodes[n].Frame, t.Nodes[ch].Frame}
			if !slices.Contains(callers[k.Frame], call[0]) {
				callers[k.Frame] = append(callers[k.Frame], call[0])
			}
			calls[call] = [2]float64{calls[call][0] + k.BaseTotal, calls[call][1] + k.HeadTotal}
		}
		k := t.Nodes[n]
		if k.Frame == OtherFrame {
			return
		}
		f := fns[k.Frame]
		if f == nil {
			f = &function{runs: make([]float64, c.w), node: n}
			fns[k.Frame] = f
			order = append(order, k.Frame)
		}
		addRuns(f.runs, c.selfRuns(n))
		f.head, f.base = f.head+k.HeadSelf, f.base+k.BaseSelf
		if k.HeadSelf > t.Nodes[f.node].HeadSelf {
			f.node = n
		}
	}
	gone, added := c.swap(g)
	// within are the nodes below a swapped callee: a function whose own
	// time is only there is reached through calls the caller changed.
	within := map[int]bool{}
	for _, s := range append(slices.Clone(gone), added...) {
		for n := s + 1; n < s+int(t.Nodes[s].Size); n++ {
			within[n] = true
		}
	}
	// outside and self are each function's own time per side (base,
	// head) outside the swapped callees and in all of the group.
	outside, self := map[uint32][2]float64{}, map[uint32][2]float64{}
	if i > 0 {
		add(i)
		outside[t.Nodes[i].Frame] = [2]float64{math.Inf(1), math.Inf(1)}
	}
	for _, ch := range g.members {
		for n := ch; n < ch+int(t.Nodes[ch].Size); n++ {
			add(n)
			k := t.Nodes[n]
			s := self[k.Frame]
			self[k.Frame] = [2]float64{s[0] + k.BaseSelf, s[1] + k.HeadSelf}
			if !within[n] {
				o := outside[k.Frame]
				outside[k.Frame] = [2]float64{o[0] + k.BaseSelf, o[1] + k.HeadSelf}
			}
		}
	}
	// swapped says a function's own time lies below the swapped callees
	// (nine tenths of it or more) on one side at least: its change may be
	// how often they call it. One side is enough: a JIT that inlines a
	// removed callee into the caller in some runs shows its calls there.
	swapped := func(frame uint32) bool {
		o, s := outside[frame], self[frame]
		return 10*o[0] < s[0] || 10*o[1] < s[1]
	}
	net := deltaOf(g.head, g.base, c.test.root, t.Normalize)
	rest := slices.Clone(g.runs)
	// A function new to the group took over self time from its callers
	// that lost some significantly (a split, a function no longer
	// inlined; a caller that dropped a call replaced it instead): it and they are judged together, by the change of their
	// summed self values, at the new function (new) when it holds more
	// than it took over, at the caller that lost most (self) when the
	// callers lost more than it took. The split is a move beside it.
	// Below swapped callees, a function's loss is how often they call it,
	// and a function new there is part of the replacement: neither is a
	// split.
	byCalls := func(frame uint32) bool { return len(gone) > 0 && swapped(frame) }
	pooled := map[uint32]bool{}
	for _, frame := range order {
		f := fns[frame]
		if f.base != 0 || f.head == 0 || byCalls(frame) {
			continue
		}
		runs, head, base, lost, from := slices.Clone(f.runs), f.head, 0.0, 0.0, -1
		for _, k := range callers[frame] {
			g := fns[k]
			if g == nil || pooled[k] || k == frame || g.head == 0 || g.base <= g.head || dropsCall(calls, k) || byCalls(k) {
				continue
			}
			// A loss within the noise is not work taken over.
			if d := deltaOf(g.head, g.base, c.test.root, t.Normalize); !(c.weighted(c.test.test(g.runs, d).PValue, g.head, g.base) < c.test.alpha) {
				continue
			}
			pooled[k] = true
			addRuns(runs, g.runs)
			head, base, lost = head+g.head, base+g.base, lost+g.base-g.head
			if from < 0 || g.base-g.head > t.Nodes[from].BaseSelf-t.Nodes[from].HeadSelf {
				from = g.node
			}
		}
		if from < 0 {
			continue
		}
		pooled[frame] = true
		d := deltaOf(head, base, c.test.root, t.Normalize)
		s := c.test.test(runs, d)
		c.moves = append(c.moves, Move{Parent: cmp.Or(parent[f.node], i), To: []int{f.node}, From: []int{from},
			Moved: deltaOf(min(f.head, lost), 0, c.test.root, t.Normalize), Net: d, NetLow: s.DeltaLow, NetHigh: s.DeltaHigh, PValue: s.PValue})
		if d*net <= 0 {
			continue
		}
		if q := c.weighted(s.PValue, head, base); q < c.test.alpha {
			at := site{node: f.node, kind: CulpritNew, q: q, weight: c.weight(head, base), runs: runs, moved: true, replaced: -1}
			if d < 0 {
				at.node, at.kind = from, CulpritSelf
			}
			*out = append(*out, at)
			for r, v := range runs {
				rest[r] -= v
			}
		}
	}
	for _, frame := range order {
		f := fns[frame]
		d := deltaOf(f.head, f.base, c.test.root, t.Normalize)
		if pooled[frame] || f.head == 0 || f.base == 0 || d*net <= 0 {
			continue
		}
		// Called by the swapped callees, it stays in the caller's net.
		if byCalls(frame) {
			continue
		}
		if q := c.weighted(c.test.test(f.runs, d).PValue, f.head, f.base); q < c.test.alpha {
			*out = append(*out, site{node: f.node, kind: CulpritSelf, q: q, weight: c.weight(f.head, f.base), runs: f.runs, moved: true, replaced: -1})
			for r, v := range f.runs {
				rest[r] -= v
			}
		}
	}
	d := deltaOf(meanOf(rest[:c.hr]), meanOf(rest[c.hr:]), c.test.root, t.Normalize)
	if d*net <= 0 {
		return
	}
	// The rest claims no more than the new and removed callees' change
	// (their totals): beyond it is the noise of the caller's self time
	// and of its other callees.
	structural, sh, sb := make([]float64, c.w), 0.0, 0.0
	for _, ch := range g.structural {
		addRuns(structural[:c.hr], t.Stats[ch].HeadRuns)
		addRuns(structural[c.hr:], t.Stats[ch].BaseRuns)
		sh, sb = sh+t.Nodes[ch].HeadTotal, sb+t.Nodes[ch].BaseTotal
	}
	if o := deltaOf(sh, sb, c.test.root, t.Normalize); o*d <= 0 {
		return
	} else if math.Abs(o) < math.Abs(d) {
		rest, d = structural, o
	}
	q := c.weighted(c.test.test(rest, d).PValue, g.head, g.base)
	if !(q < c.test.alpha) {
		return
	}
	newCallees := c.changedCallees(g, func(k Node) bool { return k.BaseTotal == 0 }, func(k Node) float64 { return k.HeadTotal })
	goneCallees := c.changedCallees(g, func(k Node) bool { return k.HeadTotal == 0 }, func(k Node) float64 { return k.BaseTotal })
	s := site{kind: CulpritReplaced, node: i, q: q, weight: c.weight(g.head, g.base), runs: rest, moved: true, replaced: -1}
	switch {
	case len(newCallees) == 0 || i == 0 && len(goneCallees) > 0 && net < 0:
		s.kind, s.node = CulpritRemoved, goneCallees[0]
		s = c.removed(s)
	case len(goneCallees) == 0 || i == 0:
		s.kind, s.node = CulpritNew, newCallees[0]
	default:
		s.replaced, s.newCallees, s.goneCallees = goneCallees[0], newCallees, goneCallees
		// The replaced culprit says what its move would.
		if g.move >= 0 {
			c.moves = slices.Delete(c.moves, g.move, g.move+1)
		}
	}
	*out = append(*out, s)
}

// changedCallees are the new or removed callees of g's node (is) that
// take part in its change, largest value first: those significant in its
// family, and those beyond the noise (p below alpha; the group's net was
// tested, they say what it is made of) that hold a tenth of the largest
// new or removed callee's value or more (a smaller one is a detail).
func (c *culpritFinder) changedCallees(g *moveGroup, is func(Node) bool, value func(Node) float64) []int {
	t := c.t
	var largest float64
	for _, ch := range g.structural {
		largest = max(largest, t.Nodes[ch].HeadTotal, t.Nodes[ch].BaseTotal)
	}
	var out []int
	for _, ch := range g.structural {
		k := t.Nodes[ch]
		if is(k) && (c.significant(ch) || t.Stats[ch].PValue < c.test.alpha && 10*value(k) >= largest) {
			out = append(out, ch)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(value(t.Nodes[b]), value(t.Nodes[a])) })
	return out
}

// swap returns the callees of g's node that were swapped for others: the
// removed ones whose function head no longer runs in the group and the new
// ones base did not run there, when there are both. A function split off,
// a wrapper or a change of inlining keeps running the callee (none), and
// so does a rename: one callee for one, with the same calls below it.
func (c *culpritFinder) swap(g *moveGroup) (gone, added []int) {
	t := c.t
	var frames [2]map[uint32]bool // base, head
	frames[0], frames[1] = map[uint32]bool{}, map[uint32]bool{}
	for _, ch := range g.members {
		for n := ch; n < ch+int(t.Nodes[ch].Size); n++ {
			k := t.Nodes[n]
			frames[0][k.Frame] = frames[0][k.Frame] || k.BaseTotal > 0
			frames[1][k.Frame] = frames[1][k.Frame] || k.HeadTotal > 0
		}
	}
	for _, ch := range g.structural {
		switch k := t.Nodes[ch]; {
		case k.HeadTotal == 0 && !frames[1][k.Frame]:
			gone = append(gone, ch)
		case k.BaseTotal == 0 && !frames[0][k.Frame]:
			added = append(added, ch)
		}
	}
	if len(gone) == 0 || len(added) == 0 || len(gone) == 1 && len(added) == 1 && c.sameCalls(gone[0], added[0]) {
		return nil, nil
	}
	return gone, added
}

// sameCalls says whether nodes a and b call mostly the same functions
// (as many in common as not): a rename, not a swap.
func (c *culpritFinder) sameCalls(a, b int) bool {
	t := c.t
	calls := func(i int) map[uint32]bool {
		out := map[uint32]bool{}
		for ch := i + 1; ch < i+int(t.Nodes[i].Size); ch += int(t.Nodes[ch].Size) {
			out[t.Nodes[ch].Frame] = true
		}
		return out
	}
	ca, cb := calls(a), calls(b)
	common := 0
	for f := range ca {
		if cb[f] {
			common++
		}
	}
	return common > 0 && 2*common >= len(ca)+len(cb)-common
}

// dropsCall says whether frame calls a callee in base that it no longer
// calls in head.
func dropsCall(calls map[[2]uint32][2]float64, frame uint32) bool {
	for call, v := range calls {
		if call[0] == frame && v[0] > 0 && v[1] == 0 {
			return true
		}
	}
	return false
}
