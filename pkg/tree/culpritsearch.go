package tree

// The search for where a change enters: the descent from the root, and
// the test of whether a change spread over a node's children in
// proportion (docs/CULPRITS.md, "The method" and "A uniform change").

import "math"

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
