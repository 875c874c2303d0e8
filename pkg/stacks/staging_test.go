package stacks

import (
	"math/rand/v2"
	"slices"
	"testing"
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
