package tree

import (
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
)

// exactProgram is a program of instruction counts: work calls double
// (which head makes do its own work twice) and leaf; other calls sub
// (which head calls twice as often, both).
var exactProgram = map[string]int64{
	"main;work;double": 5_000_000, "main;work;leaf": 3_000_000, "main;work": 1_000_000,
	"main;other": 600_000, "main;other;sub": 400_000,
}

// exactHead is head's factor of a stack: double's own work twice, other
// called twice as often.
func exactHead(stack string) float64 {
	switch {
	case stack == "main;work;double":
		return 2
	case strings.HasPrefix(stack, "main;other"):
		return 2
	}
	return 1
}

// exactBuilder fills runs runs a side of exactProgram, head scaled by
// factor: from exact profiles (profile.Exact, as callgrind's) when
// counted, else with AddRun, each run's counts plus jitter(run, stack).
func exactBuilder(t *testing.T, runs int, counted bool, factor func(string) float64, jitter func(run int) int64) *Builder {
	b := NewBuilder(NewFrames())
	for _, side := range []Side{Base, Head} {
		b.SetRuns(side, runs)
		for run := range runs {
			p := &profile.Profile{SampleType: "Ir", Unit: "count", Exact: counted}
			for stack, v := range exactProgram {
				var ids []uint32
				for _, name := range strings.Split(stack, ";") {
					ids = append(ids, p.Intern(profile.Frame{Name: name}))
				}
				f := 1.0
				if side == Head {
					f = factor(stack)
				}
				p.Samples = append(p.Samples, profile.Sample{Stack: ids, Value: int64(f*float64(v)) + jitter(run)})
			}
			if err := b.AddRunProfile(side, run, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

func noJitter(int) int64 { return 0 }

// Exact costs (one run a side of exact profiles, or runs of a side that
// are all the same) compare exactly: double's own time doubled is a self
// culprit of exactly +50% of the base total, with q 0 and an interval of
// width 0; other, called twice as often, is one spread culprit of exactly
// +10%; an unchanged head has no culprit and every p-value 1.
func TestCulpritsExact(t *testing.T) {
	for _, c := range []struct {
		name    string
		runs    int
		counted bool
	}{{"one run a side, counted", 1, true}, {"four identical runs a side", 4, false}, {"four identical runs a side, counted", 4, true}} {
		t.Run(c.name, func(t *testing.T) {
			for _, norm := range []Normalization{Absolute, Relative} {
				tr := mustBuild(t, exactBuilder(t, c.runs, c.counted, exactHead, noJitter), Options{Normalize: norm})
				if !tr.Exact || tr.Stats == nil {
					t.Fatalf("%s: exact %v, notice %q", norm, tr.Exact, tr.StatsNotice)
				}
				cs := tr.Culprits()
				want := map[string]float64{"self main;work;double": 0.5, "spread main;other": 0.1}
				if norm == Relative {
					// head's total is 1.6 times base's
					want = map[string]float64{"self main;work;double": 10.0/16 - 0.5, "spread main;other": 2.0/16 - 0.1}
				}
				if len(cs) != 2 {
					t.Fatalf("%s: culprits %v", norm, describe(tr, cs))
				}
				for _, cu := range cs {
					key := cu.Kind.String() + " " + pathString(tr, cu.Sites[0])
					d, ok := want[key]
					if !ok || math.Abs(cu.Delta-d) > 1e-12 || cu.DeltaLow != cu.Delta || cu.DeltaHigh != cu.Delta || cu.PValue != 0 || cu.QValue != 0 {
						t.Errorf("%s: %s delta %v [%v, %v] p %v q %v, want delta %v exactly, p and q 0", norm, key, cu.Delta, cu.DeltaLow, cu.DeltaHigh, cu.PValue, cu.QValue, d)
					}
				}
				if pathString(tr, cs[0].Sites[0]) != "main;work;double" {
					t.Errorf("%s: first culprit %v", norm, describe(tr, cs))
				}
			}
			tr := mustBuild(t, exactBuilder(t, c.runs, c.counted, func(string) float64 { return 1 }, noJitter), Options{})
			if cs := tr.Culprits(); !tr.Exact || len(cs) > 0 {
				t.Errorf("unchanged: exact %v, culprits %v", tr.Exact, describe(tr, cs))
			}
			for i, s := range tr.Stats {
				if s.PValue != 1 || s.DeltaLow != 0 || s.DeltaHigh != 0 {
					t.Errorf("unchanged: node %s p %v [%v, %v]", pathString(tr, i), s.PValue, s.DeltaLow, s.DeltaHigh)
				}
			}
		})
	}
}

// Costs that are not known to be exact are not taken to be: one run a
// side of sampled profiles has no statistics, and runs that vary a little
// (a few instructions in millions, as an allocator's) get the ordinary
// tests, whose tiny spread makes a real change's p-value tiny too.
func TestCulpritsNearlyExact(t *testing.T) {
	if tr := mustBuild(t, exactBuilder(t, 1, false, exactHead, noJitter), Options{}); tr.Stats != nil || tr.Exact {
		t.Errorf("one run a side of sampled profiles: stats %v, exact %v", tr.Stats != nil, tr.Exact)
	}
	jitter := func(run int) int64 { return int64(run%3) - 1 }
	tr := mustBuild(t, exactBuilder(t, 4, true, exactHead, jitter), Options{})
	cs := tr.Culprits()
	if tr.Exact || len(cs) != 2 || pathString(tr, cs[0].Sites[0]) != "main;work;double" {
		t.Fatalf("exact %v, culprits %v", tr.Exact, describe(tr, cs))
	}
	if c := cs[0]; math.Abs(c.Delta-0.5) > 1e-6 || !(c.PValue < 1e-9) || !(c.DeltaLow < c.Delta && c.Delta < c.DeltaHigh) {
		t.Errorf("double: delta %v [%v, %v] p %v", c.Delta, c.DeltaLow, c.DeltaHigh, c.PValue)
	}
	same := mustBuild(t, exactBuilder(t, 4, true, func(string) float64 { return 1 }, jitter), Options{})
	if cs := same.Culprits(); len(cs) > 0 {
		t.Errorf("unchanged: culprits %v", describe(same, cs))
	}
}
