package ingest

import "math"

// packedInts is a long list of integers held in four bytes each, a value
// that does not fit kept aside: V8's node ids and time deltas fit, and
// they are a V8 profile's bulk (eight bytes each would be more than the
// file spends on them).
type packedInts struct {
	small []int32
	wide  map[int]int64 // by index, where small holds 0
}

func (v *packedInts) append(n int64) {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		v.small = append(v.small, int32(n))
		return
	}
	if v.wide == nil {
		v.wide = map[int]int64{}
	}
	v.wide[len(v.small)] = n
	v.small = append(v.small, 0)
}

func (v *packedInts) at(i int) int64 {
	if n := v.small[i]; n != 0 || v.wide == nil {
		return int64(n)
	}
	return v.wide[i]
}

func (v *packedInts) len() int { return len(v.small) }
