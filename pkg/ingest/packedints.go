package ingest

import "math"

// packedInts is a long list of integers held in four bytes each, a value
// that does not fit kept aside: V8's node ids and time deltas fit, and
// they are a V8 profile's bulk (eight bytes each would be more than the
// file spends on them). They are held in blocks: a growing list is not
// copied to a larger array, whose copies would take four times its size
// on the way.
type packedInts struct {
	blocks [][]int32     // packedBlock values each but the last
	wide   map[int]int64 // by index, where blocks hold 0
}

const packedBlock = 1 << 16

func (v *packedInts) append(n int64) {
	last := len(v.blocks) - 1
	if last < 0 || len(v.blocks[last]) == packedBlock {
		size := packedBlock
		if last < 0 {
			size = 0 // the first block grows as a slice does: a short list stays small
		}
		v.blocks = append(v.blocks, make([]int32, 0, size))
		last++
	}
	var small int32 // 0 for a value kept aside
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		small = int32(n)
	} else {
		if v.wide == nil {
			v.wide = map[int]int64{}
		}
		v.wide[v.len()] = n
	}
	v.blocks[last] = append(v.blocks[last], small)
}

func (v *packedInts) at(i int) int64 {
	if n := v.blocks[i/packedBlock][i%packedBlock]; n != 0 || v.wide == nil {
		return int64(n)
	}
	return v.wide[i]
}

func (v *packedInts) len() int {
	if len(v.blocks) == 0 {
		return 0
	}
	return (len(v.blocks)-1)*packedBlock + len(v.blocks[len(v.blocks)-1])
}
