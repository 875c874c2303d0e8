// Package hashindex finds 64-bit hashes (xxhash, so already mixed) in a
// caller's list of them: open addressing where a slot holds a place in
// the list and 32 bits of the hash, 8 bytes, confirmed in the list. Reads
// of millions of stacks and frames look up every row; a Go map takes two
// or three cache misses a lookup where this takes one or two.
package hashindex

import "math/rand/v2"

// Index maps hashes to their place in a list the caller keeps (keys):
// Put(h, k, keys) requires keys[k] == h. Its zero value is an empty
// index; New sizes one.
type Index struct {
	slots []slot
	shift uint
	n     int
	// seed is mixed into every slot: stored hashes come from ingested
	// names, which could be chosen to crowd one run of slots.
	seed uint64
}

type slot struct {
	fp uint32 // the hash's low 32 bits
	k  uint32 // place + 1; 0 marks an empty slot
}

// New returns an index sized for n hashes.
func New(n int) Index {
	size, shift := 16, uint(60)
	for size < 2*n {
		size, shift = 2*size, shift-1
	}
	return Index{slots: make([]slot, size), shift: shift, seed: rand.Uint64()} // #nosec G404 -- a hash seed, not a secret
}

func (t *Index) slot(hash uint64) uint64 {
	return ((hash ^ t.seed) * 0x9E3779B97F4A7C15) >> t.shift
}

// Len is the number of hashes held.
func (t *Index) Len() int { return t.n }

// Put maps hash to place k, which replaces its old place if it had one;
// keys[k] must be hash.
func (t *Index) Put(hash uint64, k uint32, keys []uint64) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow(keys)
	}
	mask := uint64(len(t.slots) - 1) // #nosec G115 -- a length, at least 16
	for i := t.slot(hash); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.k == 0 {
			s.fp, s.k = fingerprint(hash), k+1
			t.n++
			return
		}
		if s.fp == fingerprint(hash) && keys[s.k-1] == hash {
			s.k = k + 1
			return
		}
	}
}

// Get returns the place of hash in keys.
func (t *Index) Get(hash uint64, keys []uint64) (uint32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1) // #nosec G115 -- a length, at least 16
	for i := t.slot(hash); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.k == 0 {
			return 0, false
		}
		if s.fp == fingerprint(hash) && keys[s.k-1] == hash {
			return s.k - 1, true
		}
	}
}

// fingerprint is what a slot keeps of a hash to skip most other keys
// without reading them.
func fingerprint(hash uint64) uint32 {
	return uint32(hash) // #nosec G115 -- the low bits, on purpose
}

func (t *Index) grow(keys []uint64) {
	old := t.slots
	*t = New(len(old))
	for _, s := range old {
		if s.k != 0 {
			t.Put(keys[s.k-1], s.k-1, keys)
		}
	}
}

// Set is a set of hashes; its zero value is an empty set.
type Set struct {
	keys  []uint64
	index Index
}

// NewSet returns a set sized for n hashes.
func NewSet(n int) *Set { return &Set{keys: make([]uint64, 0, n), index: New(n)} }

// Add adds hash and reports whether it was new.
func (s *Set) Add(hash uint64) bool {
	if s.Has(hash) {
		return false
	}
	s.keys = append(s.keys, hash)
	s.index.Put(hash, uint32(len(s.keys)-1), s.keys) // #nosec G115 -- sets hold stacks and frames, far fewer than 2^32
	return true
}

// Has reports whether hash is in the set.
func (s *Set) Has(hash uint64) bool {
	_, ok := s.index.Get(hash, s.keys)
	return ok
}
