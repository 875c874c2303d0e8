package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// counts fills runs runs a side of instruction counts: base's resolve and
// rest, head's resolve times factor; counted marks the profiles exact
// (profile.Exact, as callgrind's); jitter is added to every count of a run.
func counts(t *testing.T, runs int, counted bool, factor float64, jitter func(run int) int64) *tree.Builder {
	b := tree.NewBuilder(tree.NewFrames())
	for _, side := range []tree.Side{tree.Base, tree.Head} {
		b.SetRuns(side, runs)
		for run := range runs {
			p := &profile.Profile{SampleType: "Ir", Unit: "count", Exact: counted}
			main, resolve, rest := p.Intern(profile.Frame{Name: "main"}), p.Intern(profile.Frame{Name: "resolve"}), p.Intern(profile.Frame{Name: "rest"})
			v := int64(5_517_000)
			if side == tree.Head {
				v = int64(factor * float64(v))
			}
			p.Samples = []profile.Sample{{Stack: []uint32{main, resolve}, Value: v + jitter(run)}, {Stack: []uint32{main, rest}, Value: 4_483_000 + jitter(run)}}
			if err := b.AddRunProfile(side, run, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// Exact costs, one run a side of counted profiles or four identical runs:
// resolve's own time doubled (+55.17% of the total, exactly) FAILs with
// resolve first, its delta exact; an unchanged head PASSes; both say the
// costs are exact. A sequential look decides at one run a side.
func TestVerdictExact(t *testing.T) {
	for _, c := range []struct {
		runs    int
		counted bool
	}{{1, true}, {4, false}, {4, true}} {
		b := counts(t, c.runs, c.counted, 2, func(int) int64 { return 0 })
		v, err := Of(b, Input{MinBaseShare: DefaultMinBaseShare})
		if err != nil {
			t.Fatal(err)
		}
		if v.Result != Fail || !v.Exact || len(v.Regressions) != 1 || v.Regressions[0].Function != "resolve" {
			t.Fatalf("%d runs: %s %q %+v", c.runs, v.Result, v.Why, v.Regressions)
		}
		r := v.Regressions[0]
		if r.Delta != 0.5517 || r.DeltaLow != r.Delta || r.DeltaHigh != r.Delta || r.QValue != 0 || !r.Exact {
			t.Errorf("%d runs: resolve %+v", c.runs, r)
		}
		want := "`resolve`'s own time grew, called from `main`: +55.17% of the base total (exact)"
		if !strings.HasPrefix(v.Headline, want) || !strings.Contains(v.Why, "exact") || !strings.Contains(v.Power.Sentence, "exact") ||
			strings.Contains(v.Power.Sentence, "cannot") || v.Change.ChangeHigh != v.Change.Change {
			t.Errorf("%d runs: %q / %q / %q / %+v", c.runs, v.Headline, v.Why, v.Power.Sentence, v.Change)
		}
		same, err := Of(counts(t, c.runs, c.counted, 1, func(int) int64 { return 0 }), Input{MinBaseShare: DefaultMinBaseShare})
		if err != nil {
			t.Fatal(err)
		}
		if same.Result != Pass || !same.Exact || len(same.Regressions)+len(same.Improvements) > 0 || !strings.Contains(same.Why, "exact") {
			t.Errorf("%d runs, unchanged: %s %q %+v", c.runs, same.Result, same.Why, same)
		}
	}
	plan := &stats.Plan{Batch: 1, MaxRuns: 10, Alpha: 0.05, Beta: 0.05, MinBaseShare: DefaultMinBaseShare}
	v, err := Of(counts(t, 1, true, 1.005, func(int) int64 { return 0 }), Input{MinBaseShare: DefaultMinBaseShare, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	if v.Result != Pass || v.Sequential == nil || !v.Sequential.Deterministic {
		t.Errorf("a sequential look at one run a side: %s %q %+v", v.Result, v.Why, v.Sequential)
	}
}

// Counts that vary a little between runs (a nondeterministic allocator's
// few instructions in millions) are not exact: the ordinary tests apply,
// and their tiny spread makes a real change certain and its interval
// narrow; an unchanged head PASSes.
func TestVerdictNearlyExact(t *testing.T) {
	jitter := func(run int) int64 { return int64(run%3)*7 - 7 }
	v, err := Of(counts(t, 4, true, 2, jitter), Input{MinBaseShare: DefaultMinBaseShare})
	if err != nil {
		t.Fatal(err)
	}
	if v.Result != Fail || v.Exact || len(v.Regressions) != 1 {
		t.Fatalf("%s %q %+v", v.Result, v.Why, v.Regressions)
	}
	if r := v.Regressions[0]; math.Abs(float64(r.Delta)-0.5517) > 1e-5 || !(float64(r.QValue) < 1e-6) || !(r.DeltaHigh-r.DeltaLow < 1e-4) || r.Exact {
		t.Errorf("resolve %+v", r)
	}
	same, err := Of(counts(t, 4, true, 1, jitter), Input{MinBaseShare: DefaultMinBaseShare})
	if err != nil {
		t.Fatal(err)
	}
	if same.Result != Pass || same.Exact {
		t.Errorf("unchanged: %s %q", same.Result, same.Why)
	}
}
