package loader

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

// sortedHashes is n random hashes, ascending.
func sortedHashes(r *rand.Rand, n int) []uint64 {
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = r.Uint64()
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// find places each hash of streams of ascending hashes (runs of rows, some
// of hashes not in the list, gaps short and long, ends near the list's)
// where a binary search of the whole list does.
func TestStagingFind(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 100, 5000} {
		list := sortedHashes(r, n)
		s := &staging{hashes: list}
		for run := range 20 {
			var stream []uint64
			for _, h := range list {
				if r.IntN(20) < run { // from nearly none to every stack
					stream = append(stream, h)
				}
				if r.IntN(10) == 0 { // a stack the list lacks
					stream = append(stream, h+1)
				}
			}
			stream = append(stream, 0, r.Uint64())
			slices.Sort(stream)
			for _, h := range stream {
				want, wantOK := slices.BinarySearch(list, h)
				if got, ok := s.find(h); got != want || ok != wantOK {
					t.Fatalf("n %d: find(%x) = %d, %v; want %d, %v", n, h, got, ok, want, wantOK)
				}
			}
		}
	}
}

// BenchmarkStagingFind places the rows of 40 runs, each with about a
// third of 200k stacks: a cold diff's 2.5M value rows.
func BenchmarkStagingFind(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	list := sortedHashes(r, 200_000)
	var runs [][]uint64
	for range 40 {
		var run []uint64
		for _, h := range list {
			if r.IntN(16) < 5 {
				run = append(run, h)
			}
		}
		runs = append(runs, run)
	}
	s := &staging{hashes: list}
	b.ResetTimer()
	for range b.N {
		for _, run := range runs {
			for _, h := range run {
				if _, ok := s.find(h); !ok {
					b.Fatal("a listed hash was not found")
				}
			}
		}
	}
}

// waiting keeps rows over several blocks and stages them all, in order,
// returning those whose stacks are not in the list.
func TestWaitingDrain(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	list := sortedHashes(r, 1000)
	s := newStaging(list, 2, 1)
	var w waiting
	var want []valueRow
	sums := map[[2]int]int64{} // (group, place): value
	n := 2*waitingBlock + 17
	for i := range n {
		k := r.IntN(len(list))
		row := valueRow{group: i % 3, hash: list[k], value: int64(i), firstSeen: uint64(i)}
		if i%5 == 0 {
			row.hash++ // not in the list (hashes are random: no neighbour is)
			want = append(want, row)
		} else {
			sums[[2]int{row.group, k}] += row.value
		}
		w.add(row)
	}
	if len(w.blocks) != 3 || w.n != n {
		t.Fatalf("%d rows in %d blocks", w.n, len(w.blocks))
	}
	if rest := w.drain(s); !slices.Equal(rest, want) {
		t.Errorf("%d rows not in the list, want %d", len(rest), len(want))
	}
	for g := range 3 {
		side, run := s.sideRun(g)
		for k := range list {
			if got := s.values[side].At(run*len(list) + k); got != sums[[2]int{g, k}] {
				t.Fatalf("group %d, stack %d: %d, want %d", g, k, got, sums[[2]int{g, k}])
			}
		}
	}
	if w.blocks != nil || w.n != 0 {
		t.Errorf("drained: %d rows in %d blocks left", w.n, len(w.blocks))
	}
}

// A side's staged values widen past 32 bits on their own (the table's
// width: tree's TestRunTableWidens), and none is lost or cut.
func TestStagingWidens(t *testing.T) {
	list := []uint64{10, 20, 30}
	s := newStaging(list, 1, 1)
	add := func(group int, hash uint64, value int64) {
		if !s.add(valueRow{group: group, hash: hash, value: value}) {
			t.Fatalf("stack %d is in the list", hash)
		}
	}
	add(0, 10, 7)
	add(0, 20, math.MaxInt32)
	add(1, 30, -5)
	add(0, 20, 1) // past 32 bits
	add(0, 30, 1<<40)
	for _, c := range []struct {
		side tree.Side
		at   int
		want int64
	}{{tree.Head, 0, 7}, {tree.Head, 1, math.MaxInt32 + 1}, {tree.Head, 2, 1 << 40}, {tree.Base, 2, -5}} {
		if got := s.values[c.side].At(c.at); got != c.want {
			t.Errorf("side %v, place %d: %d, want %d", c.side, c.at, got, c.want)
		}
	}
}
