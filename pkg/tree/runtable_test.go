package tree

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// AddRunTable, a side's per-run table at once, builds what AddRun value
// by value does, statistics included, from a 64-bit table or a 32-bit one.
func TestAddRunTableIsAddRun(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := newSimProgram(r, 300)
	one := simDiff(r, p, 4, 0.05, func(s []string) float64 {
		if s[len(s)-1] == "f3" {
			return 1.5
		}
		return 1
	})
	// the table at once, in 64 bits and in 32
	var all [2]*Builder
	for narrow := range all {
		all[narrow] = NewBuilder(one.frames)
		for id := range one.Stacks() {
			all[narrow].Stack(one.stack(uint32(id)))
		}
	}
	for _, side := range []Side{Base, Head} {
		n, runs := one.Stacks(), one.runs[side]
		values, values32 := make([]int64, runs*n), make([]int32, runs*n)
		for run := range runs {
			for id := range n {
				v := one.runValue[side].wide[run*one.runCap[side]+id]
				if v != int64(int32(v)) {
					t.Fatalf("value %d does not fit 32 bits", v)
				}
				values[run*n+id], values32[run*n+id] = v, int32(v)
			}
		}
		all[0].SetRuns(side, runs)
		all[0].AddRunTable(side, RunTable{wide: values}, slices.Clone(one.first[side]))
		all[1].SetRuns(side, runs)
		all[1].AddRunTable(side, RunTable{narrow: values32}, slices.Clone(one.first[side]))
	}
	found := 0
	for _, o := range statViews {
		o.MaxNodes = 50
		want, err := one.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		for narrow, b := range all {
			got, err := b.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			// (printed: untested nodes' statistics are NaN, unequal to itself)
			if !reflect.DeepEqual(got.Nodes, want.Nodes) || fmt.Sprint(got.Stats) != fmt.Sprint(want.Stats) {
				t.Errorf("%+v: AddRunTable (32 bits: %d) built another tree than AddRun", o, narrow)
			}
		}
		found += len(significantNodes(want))
	}
	if found == 0 {
		t.Error("nothing significant: the comparison proves little")
	}
}

// A RunTable is 32-bit until a sum needs 64 bits: then every value moves,
// and none is lost or cut.
func TestRunTableWidens(t *testing.T) {
	rt := NewRunTable(3)
	rt.Add(0, 7)
	rt.Add(1, math.MaxInt32)
	rt.Add(2, -5)
	if rt.narrow == nil {
		t.Fatal("values that fit 32 bits were held wide")
	}
	rt.Add(1, 1) // past 32 bits
	if rt.narrow != nil || rt.wide == nil {
		t.Fatal("a sum past 32 bits did not widen the table")
	}
	rt.Add(2, 1<<40)
	for i, want := range []int64{7, math.MaxInt32 + 1, 1<<40 - 5} {
		if got := rt.At(i); got != want {
			t.Errorf("value %d: %d, want %d", i, got, want)
		}
	}
}
