package plugin

import (
	"math"
	"runtime/debug"
	"testing"
)

// The soft memory limit is the sum of the live instances' budgets, never
// below the limit the process started with; disposing an instance gives
// its budget back.
func TestMemoryBudgets(t *testing.T) {
	start := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(start) })
	a, b := &Datasource{}, &Datasource{}
	for _, tc := range []struct {
		name  string
		floor int64
		want  [5]int64 // after: claim a, claim b, claim a again, release a, release b
	}{
		{"no GOMEMLIMIT", math.MaxInt64, [5]int64{100, 300, 250, 200, math.MaxInt64}},
		{"GOMEMLIMIT under the sum", 150, [5]int64{150, 300, 250, 200, 150}},
		{"GOMEMLIMIT over the sum", 1000, [5]int64{1000, 1000, 1000, 1000, 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemoryBudgets(tc.floor)
			got := [5]int64{m.claim(a, 100), m.claim(b, 200), m.claim(a, 50), m.release(a), m.release(b)}
			if got != tc.want {
				t.Errorf("limits %v, want %v", got, tc.want)
			}
			if now := debug.SetMemoryLimit(-1); now != tc.want[4] {
				t.Errorf("the process's limit is %d, want %d", now, tc.want[4])
			}
		})
	}
}
