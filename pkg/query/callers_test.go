package query

import (
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

// folded makes a profile of folded stacks ("a;b;c value").
func folded(lines ...string) *profile.Profile {
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds"}
	for _, l := range lines {
		stack, value, _ := strings.Cut(l, " ")
		var ids []uint32
		for _, name := range strings.Split(stack, ";") {
			ids = append(ids, p.Intern(profile.Frame{Name: name}))
		}
		var v int64
		for _, c := range value {
			v = 10*v + int64(c-'0')
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: ids, Value: v, Time: -1})
	}
	return p
}

// sideRefs reads the reference of one side from the raw samples: per run,
// the function's total with each stack counted once at its root-most
// frame of the function, and the values of the frame before it (caller)
// and after it (callee).
func sideRef(runs []*profile.Profile, function string) (total float64, callers, callees map[string]float64) {
	callers, callees = map[string]float64{}, map[string]float64{}
	n := float64(len(runs))
	for _, p := range runs {
		for _, s := range p.Samples {
			names := p.Names(s.Stack)
			for d, name := range names {
				if name != function {
					continue
				}
				v := float64(s.Value) / n
				total += v
				if d > 0 {
					callers[names[d-1]] += v
				}
				if d+1 < len(names) {
					callees[names[d+1]] += v
				}
				break
			}
		}
	}
	return total, callers, callees
}

// CallersCallees agrees with the raw samples: on the demo's checkout
// 1.7.0 against 1.6.0 (new callees under ApplyDiscounts) and on a
// recursive function whose inner calls count once.
func TestCallersCallees(t *testing.T) {
	checkout := demo.Generate(1)[0]
	runs := func(b demo.Build) []*profile.Profile {
		var out []*profile.Profile
		for _, r := range b.Runs {
			out = append(out, r.Profile)
		}
		return out
	}
	recursive := []*profile.Profile{folded("main;f;g;f;h 5", "main;f;h 3", "main;k;f 2"), folded("main;f;g;f;h 7", "main;k;f 1")}
	for _, c := range []struct {
		name, function string
		base, head     []*profile.Profile
	}{
		{"demo", "checkout/pricing.ApplyDiscounts", runs(checkout.Builds[6]), runs(checkout.Builds[7])},
		{"demo, a new function", "regexp.MustCompile", runs(checkout.Builds[6]), runs(checkout.Builds[7])},
		{"recursion", "f", recursive[:1], recursive},
	} {
		b := tree.NewBuilder(tree.NewFrames())
		for side, ps := range map[tree.Side][]*profile.Profile{tree.Base: c.base, tree.Head: c.head} {
			b.SetRuns(side, len(ps))
			for i, p := range ps {
				if err := b.AddRunProfile(side, i, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		m := Model{QueryType: Diff, App: "a", Head: Selection{Builds: []string{"h"}}, Base: Selection{Builds: []string{"b"}}}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		got, err := CallersCallees(b, m, nil, c.function)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		baseTotal, baseCallers, baseCallees := sideRef(c.base, c.function)
		headTotal, headCallers, headCallees := sideRef(c.head, c.function)
		near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
		if !near(got.Base, baseTotal) || !near(got.Head, headTotal) {
			t.Errorf("%s: totals %v, %v; the samples say %v, %v", c.name, got.Base, got.Head, baseTotal, headTotal)
		}
		for _, l := range []struct {
			what       string
			got        []Neighbour
			base, head map[string]float64
		}{{"callers", got.Callers, baseCallers, headCallers}, {"callees", got.Callees, baseCallees, headCallees}} {
			names := map[string]bool{}
			for name := range l.base {
				names[name] = true
			}
			for name := range l.head {
				names[name] = true
			}
			if len(l.got) != len(names) {
				t.Errorf("%s: %s %+v; the samples have %v", c.name, l.what, l.got, names)
			}
			for i, n := range l.got {
				if !near(n.Base, l.base[n.Function]) || !near(n.Head, l.head[n.Function]) {
					t.Errorf("%s: %s %+v; the samples say base %v, head %v", c.name, l.what, n, l.base[n.Function], l.head[n.Function])
				}
				if i > 0 && math.Abs(n.Change()) > math.Abs(l.got[i-1].Change()) {
					t.Errorf("%s: %s not by change, largest first: %+v", c.name, l.what, l.got)
				}
			}
		}
	}
}
