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
	if len(v.wide) != 4 {
		t.Errorf("%d values kept aside, want the 4 that do not fit in 32 bits", len(v.wide))
	}
}
