// Pruning, all of it: which nodes a tree of at most MaxNodes keeps
// (importance, the significance boost), the cut Build plans so that the
// nodes pruning cannot keep are never laid out (planCut, leftOut), the
// prune itself, and the statistics of the "other" nodes it makes.

package tree

import (
	"cmp"
	"math"
	"slices"
)

// sigBoost is how many times smaller than the nodes prune would keep
// otherwise a significant node may be and still be kept ahead of them.
const sigBoost = 4

// testedPerKept bounds the nodes tested under MaxNodes to this many times
// MaxNodes (the largest ones): tests cost time, and each one raises
// Benjamini-Hochberg's bar for the others.
const testedPerKept = 2

// importance is what prune ranks a node by: its largest share of its
// side's root total.
func importance(head, base float64, root Node) float64 {
	share := func(v, total float64) float64 {
		if total == 0 {
			return 0
		}
		return v / total
	}
	return max(share(head, root.HeadTotal), share(base, root.BaseTotal))
}

// prune keeps at most limit (>= 2) nodes: the most important nodes (see
// importance), plus one "other" child per kept node whose dropped children
// it sums. Importance never grows from parent to child (values are
// non-negative), so taking nodes in decreasing importance (ties in
// pre-order) always keeps a parent before its children and the kept nodes
// form a tree. Totals stay exact. The tree may already hold OtherFrame
// nodes where Build left out nodes too small to be kept (layout.planCut).
//
// With statistics (t.Stats), a significant node ranks sigBoost times its
// importance and every ancestor at least as high as its descendants, so
// a change is kept ahead of unchanged nodes of similar size, with the path
// to it; the new "other" nodes are tested like any node.
func (t *Tree) prune(limit int, test *tester) {
	nodes := t.Nodes
	n := len(nodes)
	parent := parents(nodes)
	dropped := make([]uint32, n) // children not kept (yet)
	for i := 1; i < n; i++ {
		dropped[parent[i]]++
	}

	root := nodes[0]
	rank := make([]float64, n)
	for i, nd := range nodes {
		rank[i] = importance(nd.HeadTotal, nd.BaseTotal, root)
		if nd.Frame == OtherFrame {
			rank[i] = -1 // stands for nodes Build left out: never kept
		}
	}
	if t.Stats != nil {
		for i := n - 1; i > 0; i-- {
			if t.Stats[i].Significant {
				rank[i] *= sigBoost
			}
			rank[parent[i]] = max(rank[parent[i]], rank[i])
		}
	}
	before := func(x, y uint32) int {
		return cmp.Or(cmp.Compare(rank[y], rank[x]), cmp.Compare(x, y))
	}
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i) // #nosec G115 -- a node index: a tree of 2^32 nodes does not fit in memory
	}
	// The greedy pass below takes only about limit to 2*limit nodes, so
	// only the most important few need sorting: select them first (a
	// million-node tree pruned to 20,000 sorts 80,000 nodes, not a million).
	head := min(n, 4*limit)
	selectFirst(order, head, before)
	slices.SortFunc(order[:head], before)

	// Greedily keep nodes while the count of kept and "other" nodes fits.
	kept := make([]bool, n)
	count := 0
	for k, i := range order {
		if k == head {
			slices.SortFunc(order[head:], before) // rare: the selection ran out
		}
		add := 1
		if dropped[i] > 0 {
			add++ // its "other" child, until its children are kept
		}
		if i > 0 && dropped[parent[i]] == 1 {
			add-- // the parent's "other" child goes away
		}
		if count+add > limit {
			break
		}
		count += add
		kept[i] = true
		if i > 0 {
			dropped[parent[i]]--
		}
	}
	var st []NodeStats
	var fold func(out []Node, at int, dropped []int32)
	if t.Stats != nil {
		st = make([]NodeStats, count)
		fold = t.folder(st, parent, test)
	}
	out, src := emitKept(nodes, kept, count, fold)
	for j, i := range src {
		if st != nil && i >= 0 {
			st[j] = t.Stats[i]
		}
	}
	compactRuns(st)
	t.Nodes, t.Stats = out, st
}

// compactRuns moves the per-run totals of st into a table of their own:
// those of the nodes kept pointed into the table of every node laid out,
// several times larger, which can then be freed before the frame is
// written (at 100 runs a side, 9 bytes a (run, stack) row).
func compactRuns(st []NodeStats) {
	if len(st) == 0 {
		return
	}
	hr, w := len(st[0].HeadRuns), len(st[0].HeadRuns)+len(st[0].BaseRuns)
	runs := make([]float64, len(st)*w)
	for j := range st {
		row := runs[j*w : (j+1)*w : (j+1)*w]
		copy(row, st[j].HeadRuns)
		copy(row[hr:], st[j].BaseRuns)
		st[j].HeadRuns, st[j].BaseRuns = row[:hr:hr], row[hr:]
	}
}

// parents returns the index of every node's parent (0 for the root).
func parents(nodes []Node) []uint32 {
	parent := make([]uint32, len(nodes))
	var path []uint32
	for i, nd := range nodes {
		path = append(path[:nd.Depth], uint32(i)) // #nosec G115 -- a node index: a tree of 2^32 nodes does not fit in memory
		if i > 0 {
			parent[i] = path[nd.Depth-1]
		}
	}
	return parent
}

// emitKept copies the kept nodes in pre-order, appending after the kept
// children of a node an "other" child that sums its dropped children, and
// returns with them the index each came from (-1 for "other"). fold, if
// not nil, is told each new "other" node and the nodes it sums.
func emitKept(nodes []Node, kept []bool, count int, fold func(out []Node, at int, dropped []int32)) ([]Node, []int32) {
	out := make([]Node, 0, count)
	src := make([]int32, 0, count)
	type open struct {
		at    int  // index in out
		other Node // sum of the dropped children
		mark  int  // where its dropped children start in pending
	}
	var stack []open
	var pending []int32 // the dropped children of the open nodes
	closeTop := func() {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if o.other.Size > 0 {
			o.other.Size = 1
			o.other.Depth = out[o.at].Depth + 1
			out = append(out, o.other)
			src = append(src, -1)
			if fold != nil {
				fold(out, len(out)-1, pending[o.mark:])
			}
		}
		pending = pending[:o.mark]
		out[o.at].Size = uint32(len(out) - o.at) // #nosec G115 -- a subtree's node count: a tree of 2^32 nodes does not fit in memory
	}
	for i := 0; i < len(nodes); {
		nd := nodes[i]
		for len(stack) > 0 && out[stack[len(stack)-1].at].Depth >= nd.Depth {
			closeTop()
		}
		if !kept[i] {
			o := &stack[len(stack)-1].other
			if o.Size == 0 {
				*o = Node{Frame: OtherFrame, Size: 1}
			}
			o.HeadTotal += nd.HeadTotal
			o.HeadSelf += nd.HeadTotal
			o.BaseTotal += nd.BaseTotal
			o.BaseSelf += nd.BaseTotal
			if fold != nil {
				pending = append(pending, int32(i)) // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
			}
			i += int(nd.Size)
			continue
		}
		stack = append(stack, open{at: len(out), mark: len(pending)})
		out = append(out, nd)
		src = append(src, int32(i)) // #nosec G115 -- a node index: 2^31 nodes (100 GB) do not fit in memory
		i++
	}
	for len(stack) > 0 {
		closeTop()
	}
	return out, src
}

// selectFirst reorders s so that its first k elements are k smallest by
// compare, in no particular order (quickselect).
func selectFirst[T any](s []T, k int, compare func(x, y T) int) {
	lo, hi := 0, len(s)
	for hi-lo > 1 && k > lo && k < hi {
		pivot := s[lo+(hi-lo)/2]
		lt, gt := partition3(s[lo:hi], func(x T) int { return compare(x, pivot) })
		lt, gt = lo+lt, lo+gt
		switch {
		case k <= lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return
		}
	}
}

// rankCount is count nodes of one importance.
type rankCount struct {
	rank  float64
	count int
}

// kthLargest returns the k-th largest rank of rs (1 <= k <= the sum of
// counts), each rank counted count times; it reorders rs.
func kthLargest(rs []rankCount, k int) float64 {
	for {
		pivot := rs[len(rs)/2].rank
		above, below := partition3(rs, func(r rankCount) int { return cmp.Compare(pivot, r.rank) })
		var n, ties int
		for _, r := range rs[:above] {
			n += r.count
		}
		for _, r := range rs[above:below] {
			ties += r.count
		}
		switch {
		case k <= n:
			rs = rs[:above]
		case k <= n+ties:
			return pivot
		default:
			k -= n + ties
			rs = rs[below:]
		}
	}
}

// partition3 reorders s into the elements that side sends left (< 0),
// then those it calls ties (0), then the rest, and returns where the ties
// start and end (Dijkstra's three-way partition).
func partition3[T any](s []T, side func(x T) int) (lt, gt int) {
	i, gt := 0, len(s)
	for i < gt {
		switch c := side(s[i]); {
		case c < 0:
			s[lt], s[i] = s[i], s[lt]
			lt++
			i++
		case c > 0:
			gt--
			s[i], s[gt] = s[gt], s[i]
		default:
			i++
		}
	}
	return lt, gt
}

// planCut readies the layout to leave out the nodes that pruning to limit
// nodes cannot keep, so that a big tree pruned to a small one (a query's
// maxNodes) is never laid out whole. The cut is the importance of the
// limit-th most important node below the root: the nodes at least as
// important, more than limit with the root, are laid out; each node with
// children left out gets one OtherFrame child summing them. Prune keeps at
// most limit nodes, taking them by decreasing importance, so it stops
// before it would reach a node left out, and the pruned tree is the one a
// whole layout gives. It returns the most nodes the layout can write.
func (l *layout) planCut(limit int) int {
	n := len(l.ids)
	for _, s := range l.v.sides {
		l.sums[s] = make([]int64, n+1)
		for i, id := range l.ids {
			l.sums[s][i+1] = l.sums[s][i] + l.v.b.value[s][id]
		}
	}
	l.root = l.v.rootRaw
	l.root.scale(l.v.b.runs)
	// The node at depth d of the first stack that reaches it spans the
	// stacks up to the next one sharing fewer than d frames with it. Nodes
	// of one stack that end at the same stack span the same stacks and
	// rank alike (chains, mostly): one entry each, with its count.
	type open struct{ low, high, start int } // depths low..high of stack ids[start]
	var path []open
	// Each stack opens one entry and splits at most one open entry.
	ranks := make([]rankCount, 0, 2*n)
	for i, id := range l.ids {
		common := int(l.lcp[i])
		for len(path) > 0 && path[len(path)-1].high > common {
			o := &path[len(path)-1]
			low := max(o.low, common+1)
			ranks = append(ranks, rankCount{l.rank(l.rangeTotals(o.start, i)), o.high - low + 1})
			if o.high = low - 1; o.high < o.low {
				path = path[:len(path)-1]
			}
		}
		if depth := len(l.v.stack(id)); depth > common {
			path = append(path, open{common + 1, depth, i})
		}
	}
	for _, o := range path {
		ranks = append(ranks, rankCount{l.rank(l.rangeTotals(o.start, n)), o.high - o.low + 1})
	}
	l.cut = kthLargest(ranks, limit)
	if l.test != nil {
		// Also test (lay out) nodes up to sigBoost times smaller, but no
		// more than testedPerKept per kept node: a flat tail of similar
		// nodes would otherwise be tested whole.
		l.cut = max(l.cut/sigBoost, kthLargest(ranks, min(testedPerKept*limit, l.before[n])))
	}
	l.cutting = true
	kept := 1 // the root
	for _, r := range ranks {
		if r.rank >= l.cut {
			kept += r.count
		}
	}
	return 2 * kept
}

// rangeTotals is a node with the raw totals of the stacks ids[start:end].
func (l *layout) rangeTotals(start, end int) Node {
	var nd Node
	if sums := l.sums[Head]; sums != nil {
		nd.HeadTotal = float64(sums[end] - sums[start])
	}
	if sums := l.sums[Base]; sums != nil {
		nd.BaseTotal = float64(sums[end] - sums[start])
	}
	return nd
}

// rank is the importance prune will see for a node of these raw totals
// (rangeTotals): integer sums below 2^53 are exact in float64 whichever
// way they are added, so it is the same number.
func (l *layout) rank(raw Node) float64 {
	raw.scale(l.v.b.runs)
	return importance(raw.HeadTotal, raw.BaseTotal, l.root)
}

// leftOutNodes sums the children of a node that the cut leaves out.
type leftOutNodes struct {
	Node // their totals; Size is 1 once there is any
	otherInfo
	mark int // with statistics, where their ranges start in worker.out
}

// otherInfo is what an "other" node of the layout stands for.
type otherInfo struct {
	count    int     // nodes
	maxDelta float64 // the largest delta of the children left out
}

// leftOut says whether the child at depth+1 of the stacks ids[start:end]
// is below the cut, adding it to other if so.
func (l *layout) leftOut(w *worker, start, end, depth int, other *leftOutNodes) bool {
	if !l.cutting {
		return false
	}
	nd := l.rangeTotals(start, end)
	if l.rank(nd) >= l.cut {
		return false
	}
	other.HeadTotal += nd.HeadTotal
	other.BaseTotal += nd.BaseTotal
	other.Size = 1
	if l.test != nil {
		nd.scale(l.v.b.runs)
		other.count += l.size(start, end, depth)
		other.maxDelta = largerDelta(other.maxDelta, deltaOf(nd.HeadTotal, nd.BaseTotal, l.root, l.test.norm))
		w.out = append(w.out, [2]int{start, end})
	}
	return true
}

// largerDelta is whichever of a and b has the larger magnitude.
func largerDelta(a, b float64) float64 {
	if math.Abs(b) > math.Abs(a) {
		return b
	}
	return a
}

// folder returns what prune tells of each "other" node it makes (see
// emitKept): its statistics go to st[at], from the per-run totals, node
// counts and deltas of the nodes it merges (whole subtrees of t).
func (t *Tree) folder(st []NodeStats, parent []uint32, test *tester) func(out []Node, at int, dropped []int32) {
	old, nodes := t.Stats, t.Nodes
	count := make([]int, len(nodes))
	maxDelta := make([]float64, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].Frame == OtherFrame {
			count[i] += old[i].OtherCount
			maxDelta[i] = largerDelta(maxDelta[i], old[i].OtherMaxDelta)
		} else {
			count[i]++
			maxDelta[i] = largerDelta(maxDelta[i], t.Delta(i))
		}
		if i > 0 {
			count[parent[i]] += count[i]
			maxDelta[parent[i]] = largerDelta(maxDelta[parent[i]], maxDelta[i])
		}
	}
	hr := test.runs[Head]
	return func(out []Node, at int, dropped []int32) {
		runs := make([]float64, test.width())
		var merged int
		var maxMerged float64
		for _, d := range dropped {
			addRuns(runs[:hr], old[d].HeadRuns)
			addRuns(runs[hr:], old[d].BaseRuns)
			merged += count[d]
			maxMerged = largerDelta(maxMerged, maxDelta[d])
		}
		o := out[at]
		st[at] = test.test(runs, deltaOf(o.HeadTotal, o.BaseTotal, nodes[0], t.Normalize))
		st[at].OtherCount, st[at].OtherMaxDelta = merged, maxMerged
	}
}
