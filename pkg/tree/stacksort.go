package tree

import "slices"

// stackSorter sorts stacks a frame at a time (a most-significant-digit
// radix sort whose digits are frames): the stacks are sorted by their
// first frame, then each run of stacks sharing it by their second, and so
// on until a run holds one stack. A frame of a stack is read once per
// depth it has company at, where a comparison sort reads the shared
// prefix of two stacks again on every comparison (the prefixes of
// neighbouring stacks run 10 frames and more), and each run is sorted as
// plain integers. The order is compareStacks'.
type stackSorter struct {
	v        *view
	inverted bool
}

// smallRun is the longest run of stacks sorted by comparing whole stacks.
const smallRun = 8

// sort sorts ids in place.
func (s *stackSorter) sort(ids []uint32) {
	s.sortFrom(ids, make([]uint64, len(ids)), 0) // a key beside each stack
}

// sortFrom sorts ids, stacks sharing their first depth frames, by the
// frames past those; keys is scratch of the same length.
func (s *stackSorter) sortFrom(ids []uint32, keys []uint64, depth int) {
	for len(ids) > smallRun {
		s.v.b.stop.check()
		// key: 1 + the frame at depth (0 when the stack ends there, so
		// that a stack comes before those it is a prefix of) above the
		// stack id, so that a plain sort of the keys sorts the ids too
		same := true
		for i, id := range ids {
			keys[i] = s.digit(id, depth)<<32 | uint64(id)
			same = same && keys[i]>>32 == keys[0]>>32
		}
		if same { // a frame every stack here shares: no sort needed
			if keys[0]>>32 == 0 { // equal stacks
				return
			}
			depth++
			continue
		}
		slices.Sort(keys)
		for i, k := range keys {
			ids[i] = uint32(k) // #nosec G115 -- the low half holds the id
		}
		for start := 0; start < len(keys); {
			digit, end := keys[start]>>32, start+1
			for end < len(keys) && keys[end]>>32 == digit {
				end++
			}
			if digit != 0 && end-start > 1 {
				s.sortFrom(ids[start:end], keys[start:end], depth+1)
			}
			start = end
		}
		return
	}
	slices.SortFunc(ids, func(x, y uint32) int {
		return compareStacks(s.v.stack(x), s.v.stack(y), s.inverted)
	})
}

// digit is 1 + the frame of stack id at depth, or 0 past its end.
func (s *stackSorter) digit(id uint32, depth int) uint64 {
	stack := s.v.stack(id)
	if depth >= len(stack) {
		return 0
	}
	return 1 + uint64(frameAt(stack, depth, s.inverted))
}
