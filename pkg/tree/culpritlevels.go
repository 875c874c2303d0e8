package tree

// The levels a node is tested at when the culprits are searched: the
// descent's share of alpha, the tree's family and the self family
// (docs/CULPRITS.md, "The method: a weighted descent").

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

// selfSignificant says whether node i's self value changed significantly.
func (c *culpritFinder) selfSignificant(i int) bool { return c.selfQ[i] < c.test.alpha }
