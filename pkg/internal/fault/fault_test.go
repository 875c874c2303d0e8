//go:build !faultinject

package fault

import "testing"

// TestPointIsInert: without the faultinject tag, no environment arms a
// point.
func TestPointIsInert(t *testing.T) {
	t.Setenv("FLAMEDIFF_FAULT", "x")
	Point("x")
}
