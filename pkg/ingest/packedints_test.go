package ingest

import (
	"math"
	"testing"
)

func TestPackedIntsKeepWideValues(t *testing.T) {
	in := []int64{0, 1, -1, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt64, math.MinInt64, 0, 7}
	var v packedInts
	for _, n := range in {
		v.append(n)
	}
	if v.len() != len(in) {
		t.Fatalf("%d values, want %d", v.len(), len(in))
	}
	for i, n := range in {
		if got := v.at(i); got != n {
			t.Errorf("value %d is %d, want %d", i, got, n)
		}
	}
	for i := range 3 * packedBlock { // past the first blocks
		v.append(int64(i) - packedBlock)
	}
	for i := range 3 * packedBlock {
		if got, want := v.at(len(in)+i), int64(i)-packedBlock; got != want {
			t.Fatalf("value %d is %d, want %d", len(in)+i, got, want)
		}
	}
	if v.len() != len(in)+3*packedBlock {
		t.Errorf("%d values, want %d", v.len(), len(in)+3*packedBlock)
	}
	if len(v.wide) != 4 {
		t.Errorf("%d values kept aside, want the 4 that do not fit in 32 bits", len(v.wide))
	}
}
