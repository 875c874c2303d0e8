package hashindex

import (
	"math/rand/v2"
	"testing"
)

func TestIndex(t *testing.T) {
	var zero Index
	if _, ok := zero.Get(1, nil); ok || zero.Len() != 0 {
		t.Error("the zero index holds something")
	}
	tab := zero // grows from nothing
	rng := rand.New(rand.NewPCG(5, 6))
	var hashes []uint64
	keys := map[uint64]uint32{}
	for range 5000 {
		h := rng.Uint64()
		if rng.IntN(4) == 0 {
			h = h%64<<32 | 7 // same low 32 bits: fingerprints collide
		}
		if _, ok := keys[h]; ok {
			continue
		}
		k := uint32(len(hashes))
		hashes = append(hashes, h)
		tab.Put(h, k, hashes)
		keys[h] = k
	}
	if tab.Len() != len(keys) {
		t.Errorf("Len %d, want %d", tab.Len(), len(keys))
	}
	for h, k := range keys {
		if got, ok := tab.Get(h, hashes); !ok || got != k {
			t.Fatalf("Get(%x) = %d, %v; want %d", h, got, ok, k)
		}
	}
	if _, ok := tab.Get(99<<32|7, hashes); ok {
		t.Error("found a hash never put")
	}
	// A second place for a hash replaces the first.
	hashes = append(hashes, hashes[0])
	tab.Put(hashes[0], uint32(len(hashes)-1), hashes)
	if got, _ := tab.Get(hashes[0], hashes); int(got) != len(hashes)-1 || tab.Len() != len(keys) {
		t.Errorf("after a re-put: place %d, %d held; want %d, %d", got, tab.Len(), len(hashes)-1, len(keys))
	}
}

func TestSet(t *testing.T) {
	var s Set
	want := map[uint64]bool{}
	for i := range uint64(20000) {
		h := (i * 7919) % 5003 // repeats, and 0
		if got := s.Add(h); got != !want[h] {
			t.Fatalf("Add(%d) = %v after %d adds", h, got, i)
		}
		want[h] = true
	}
	for h := range uint64(6000) {
		if s.Has(h) != want[h] {
			t.Fatalf("Has(%d) = %v", h, !want[h])
		}
	}
}
