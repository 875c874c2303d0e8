package main

import (
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

// The functions table keeps its numbers and the names apart at any width:
// the names column starts where its header does, after a space (or the
// diff's mark of a significant change), on every row, the widest values
// included (they once ran into the name: `2.15 Kf2124`).
func TestFunctionsTableColumnsApart(t *testing.T) {
	rows := []tree.Function{
		{Name: "f2124", HeadSelf: 2150, HeadTotal: 2150, BaseTotal: 1e15, Delta: 0.5, QValue: 0.001, Significant: true, DeltaLow: 0.1, DeltaHigh: 0.9},
		{Name: "thread: x", HeadSelf: 24_350_000_000_000, HeadTotal: 24_350_000_000_000, BaseTotal: 3, Delta: -0.25, QValue: math.NaN(), DeltaLow: math.NaN(), DeltaHigh: math.NaN()},
		{Name: "g", HeadSelf: 1, HeadTotal: 2},
	}
	for _, diff := range []bool{false, true} {
		for _, unit := range []string{"nanoseconds", "count", ""} {
			var b strings.Builder
			if err := writeFunctions(&b, rows, diff, unit, 0); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			at := strings.Index(lines[0], "function") // the header is ASCII
			for i, r := range rows {
				line := []rune(lines[i+1]) // units are not: µs
				if len(line) < at || string(line[at:]) != r.Name || !(line[at-1] == ' ' || diff && line[at-1] == '*' && r.Significant) {
					t.Errorf("diff %v, unit %q: %q is not in the names column (from column %d):\n%s", diff, unit, r.Name, at, b.String())
				}
			}
		}
	}
}
