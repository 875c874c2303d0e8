package query

import (
	"testing"
	"time"
)

func TestRange(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		r    Range
		t    time.Time
		want bool
	}{
		{Range{}, day(1), true},
		{Range{From: day(5), To: day(5)}, day(1), true}, // empty: no range
		{Range{From: day(2), To: day(4)}, day(2), true},
		{Range{From: day(2), To: day(4)}, day(4), true},
		{Range{From: day(2), To: day(4)}, day(5), false},
		{Range{From: day(2), To: day(4)}, day(1), false},
	} {
		if got := c.r.contains(c.t); got != c.want {
			t.Errorf("%v contains %v = %v", c.r, c.t, got)
		}
	}
}
