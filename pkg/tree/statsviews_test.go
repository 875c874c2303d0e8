package tree

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// paths maps each node's path of labels (root "") to its index.
func paths(tr *Tree) map[string]int {
	out := map[string]int{}
	var path []string
	for i, nd := range tr.Nodes {
		if i > 0 {
			path = append(path[:nd.Depth-1], tr.Label(i))
		}
		out[strings.Join(path, ";")] = i
	}
	return out
}

// Pruning keeps small significant nodes that a prune by size alone drops,
// and every "other" node accounts for the nodes it merges.
func TestStatsPruneKeepsChanges(t *testing.T) {
	checked := 0
	for seed := range 30 {
		r := rand.New(rand.NewPCG(uint64(seed), 12))
		p := newSimProgram(r, 300)
		// Plant a 1.5x change in a stack ranked 20-60th by size.
		planted := strings.Join(p.stacks[20+r.IntN(40)], ";")
		b := simDiff(r, p, 10, 0.03, func(s []string) float64 {
			if strings.Join(s, ";") == planted {
				return 1.5
			}
			return 1
		})
		for _, o := range statViews {
			if o.CollapseSystem {
				o.IsSystem = isSimSystem(b)
			}
			whole := mustBuild(t, b, o)
			// A limit with room for the nodes twice as important as the
			// planted leaf and their "other" children.
			o.MaxNodes = 80
			if at, ok := paths(whole)[planted]; ok {
				root, leaf := whole.Nodes[0], whole.Nodes[at]
				o.MaxNodes = 0
				for _, nd := range whole.Nodes {
					if importance(nd.HeadTotal, nd.BaseTotal, root) >= 2*importance(leaf.HeadTotal, leaf.BaseTotal, root) {
						o.MaxNodes += 2
					}
				}
			}
			pruned := mustBuild(t, b, o)
			kept, merged := 0, 0
			wholePaths := paths(whole)
			for path, i := range paths(pruned) {
				if pruned.Nodes[i].Frame != OtherFrame {
					kept++
					continue
				}
				s := pruned.Stats[i]
				merged += s.OtherCount
				// OtherMaxDelta is the delta of a node under the parent.
				parent := strings.TrimSuffix(strings.TrimSuffix(path, "other"), ";")
				found := false
				for wp, j := range wholePaths {
					if strings.HasPrefix(wp, parent) && whole.Delta(j) == s.OtherMaxDelta {
						found = true
					}
				}
				if !found || s.OtherCount == 0 {
					t.Fatalf("seed %d %+v: other under %q: %+v matches no node", seed, o, parent, s)
				}
			}
			if kept+merged != whole.Len() {
				t.Fatalf("seed %d %+v: %d kept + %d merged, whole tree %d", seed, o, kept, merged, whole.Len())
			}
			if o.Inverted || o.CollapseSystem {
				continue
			}
			// The planted leaf, found significant, is kept with its path.
			if at, ok := paths(pruned)[planted]; !ok || !pruned.Stats[at].Significant {
				t.Errorf("seed %d: planted change %s not kept (or not significant) under MaxNodes %d", seed, planted, o.MaxNodes)
				continue
			}
			// A prune by size alone drops it.
			sums := NewBuilder(b.frames)
			for s := range b.Stacks() {
				for side := range 2 {
					if b.first[side][s] != notSeen {
						sums.Add(Side(side), sums.Stack(b.stack(uint32(s))), b.value[side][s], b.first[side][s])
					}
				}
			}
			sums.SetRuns(Base, 10)
			sums.SetRuns(Head, 10)
			if _, ok := paths(mustBuild(t, sums, o))[planted]; !ok {
				checked++
			}
		}
	}
	if checked < 25 {
		t.Errorf("only %d of 30 planted changes were kept thanks to significance", checked)
	}
}

// Focus returns the same subtree as the whole tree, with the whole tree's
// root, for every node; the run totals agree too.
func TestStatsFocus(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 13))
	p := newSimProgram(r, 120)
	b := simDiff(r, p, 4, 0.03, unchanged)
	for _, o := range statViews {
		if o.CollapseSystem {
			o.IsSystem = isSimSystem(b)
		}
		whole := mustBuild(t, b, o)
		var path []string
		for i, nd := range whole.Nodes {
			if i == 0 {
				continue
			}
			path = append(path[:nd.Depth-1], whole.Label(i))
			f := o
			f.Focus = slices.Clone(path)
			for _, limit := range []int{0, len(path) + int(nd.Size), 10} {
				f.MaxNodes = limit
				got := mustBuild(t, b, f)
				if !sameNode(got.Nodes[0], whole.Nodes[0]) && got.Nodes[0].HeadTotal != whole.Nodes[0].HeadTotal {
					t.Fatalf("focus %v: root %+v, want %+v", path, got.Nodes[0], whole.Nodes[0])
				}
				if limit == 10 {
					if got.Len() > 10 {
						t.Fatalf("focus %v: %d nodes above MaxNodes 10", path, got.Len())
					}
					continue
				}
				sub := got.Nodes[len(path):]
				want := whole.Nodes[i : i+int(nd.Size)]
				if !slices.EqualFunc(sub, want, sameNode) {
					t.Fatalf("focus %v %+v: subtree\n%s\nwant\n%s", path, o, strings.Join(outline(got), "\n"), strings.Join(outline(whole), "\n"))
				}
				for k := range sub {
					g, w := got.Stats[len(path)+k], whole.Stats[i+k]
					if !slices.Equal(g.HeadRuns, w.HeadRuns) || !slices.Equal(g.BaseRuns, w.BaseRuns) {
						t.Fatalf("focus %v node %d: runs %v %v, want %v %v", path, k, g.HeadRuns, g.BaseRuns, w.HeadRuns, w.BaseRuns)
					}
				}
			}
		}
	}
	if _, err := b.Build(Options{Focus: []string{"main", "nowhere"}}); err == nil || !strings.Contains(err.Error(), "main > nowhere") {
		t.Errorf("unknown path: %v", err)
	}
}
