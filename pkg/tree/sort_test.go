package tree

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// The engine's partial and parallel sorts must agree with a plain sort.
func TestSelectFirstAndSortInHalves(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 1 << 14, 1<<15 + 3} {
		keys := make([]int, n)
		for i := range keys {
			keys[i] = rng.IntN(50) // many ties, broken by index below
		}
		compare := func(x, y uint32) int { return cmp.Or(cmp.Compare(keys[x], keys[y]), cmp.Compare(x, y)) }
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(i)
		}
		rng.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		want := slices.Clone(ids)
		slices.SortFunc(want, compare)

		if got := sortInHalves(ids, func(s []uint32) { slices.SortFunc(s, compare) }, compare); !slices.Equal(got, want) {
			t.Errorf("n=%d: sortInHalves differs from a sort", n)
		}
		for _, k := range []int{0, 1, n / 3, n - 1, n} {
			if k < 0 || k > n {
				continue
			}
			s := slices.Clone(ids)
			selectFirst(s, k, compare)
			first := slices.Clone(s[:k])
			slices.SortFunc(first, compare)
			if !slices.Equal(first, want[:k]) {
				t.Errorf("n=%d k=%d: selectFirst did not put the k smallest first", n, k)
			}
		}
	}
}

// kthLargest counts each rank count times: it must agree with sorting the
// ranks spelled out one per node.
func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 200; n += 7 {
		rs := make([]rankCount, n)
		var all []float64
		for i := range rs {
			rs[i] = rankCount{float64(rng.IntN(20)) / 4, 1 + rng.IntN(5)}
			for range rs[i].count {
				all = append(all, rs[i].rank)
			}
		}
		slices.SortFunc(all, func(x, y float64) int { return cmp.Compare(y, x) })
		for _, k := range []int{1, 2, len(all) / 2, len(all)} {
			if got := kthLargest(slices.Clone(rs), k); got != all[k-1] {
				t.Errorf("n=%d k=%d: %g, want %g", n, k, got, all[k-1])
			}
		}
	}
}

// The stack sorter must put stacks in compareStacks' order, root first and
// leaf first, with stacks that are prefixes of others, stacks equal frame
// for frame (as a collapsed view makes them) and few distinct frames.
func TestStackSorterAgreesWithCompareStacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 5, smallRun + 1, 300, 5000} {
		v := &view{b: NewBuilder(NewFrames()), start: []int{0}}
		for range n {
			depth := rng.IntN(12)
			for d := range depth {
				// shallow frames repeat a lot, deep ones less
				v.frames = append(v.frames, uint32(rng.IntN(2+d*d)))
			}
			v.start = append(v.start, len(v.frames))
		}
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(i)
		}
		rng.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for _, inverted := range []bool{false, true} {
			got := slices.Clone(ids)
			(&stackSorter{v: v, inverted: inverted}).sort(got)
			for i := 1; i < len(got); i++ {
				if compareStacks(v.stack(got[i-1]), v.stack(got[i]), inverted) > 0 {
					t.Fatalf("n=%d inverted=%v: stack %v sorted before %v", n, inverted, v.stack(got[i-1]), v.stack(got[i]))
				}
			}
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			if !slices.Equal(sorted, slices.Sorted(slices.Values(ids))) {
				t.Fatalf("n=%d inverted=%v: the sort lost or duplicated stacks", n, inverted)
			}
		}
	}
}
