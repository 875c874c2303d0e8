package receiver

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// TestSDKExporterCulprit: the SDK's exporter sends ten runs of the
// generated scenario per build, every span varying by 5%; in build
// "slow" db: scan takes 30% longer (and delays what waits for it). The
// diff of slow against base, with its statistics, names db: scan as the
// top culprit, a change of its self time, on its path from the root;
// the diff of a second build with nothing planted (A/A) has no culprit.
func TestSDKExporterCulprit(t *testing.T) {
	store := newStore(t)
	r, srv := start(t, store, Options{Wait: 300 * time.Millisecond}, "")
	rng := rand.New(rand.NewPCG(28, 2))
	var traces [][]otlptest.Resource
	for b, build := range []string{"base", "same", "slow"} {
		var slower map[string]float64
		if build == "slow" {
			slower = map[string]float64{"db: scan": 1.3}
		}
		for i := range 10 {
			traces = append(traces, otlptest.ScenarioTrace(rng, uint64(100*(b+1)+i), build, 0.05, slower))
		}
	}
	replay(t, strings.TrimPrefix(srv.URL, "http://"), traces)
	waitFor(t, "30 runs", func() bool { return r.Stats().TraceRuns == 30 })

	exec := &query.Executor{Store: store}
	diff := func(head string) *verdict.Verdict {
		t.Helper()
		m, err := query.Parse([]byte(`{"queryType":"diff","app":"test","head":{"builds":["` + head + `"]},"base":{"builds":["base"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		answer, err := exec.Execute(context.Background(), m, query.Range{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range answer {
			if f.Name == frames.FrameCulprits {
				v, ok := f.Meta.Custom.(map[string]any)["verdict"].(*verdict.Verdict)
				if !ok {
					t.Fatalf("culprits frame without a verdict: %v", f.Meta.Custom)
				}
				return v
			}
		}
		t.Fatalf("%s against base: no culprits frame in %d frames", head, len(answer))
		return nil
	}

	v := diff("slow")
	if v.Result != verdict.Fail || len(v.Regressions) == 0 {
		t.Fatalf("planted slower span: %s, %d regressions: %s", v.Result, len(v.Regressions), v.Why)
	}
	top := v.Regressions[0]
	wantPath := []string{"test: scenario", "api: search", "db: scan"}
	if top.Function != "db: scan" || top.Kind != "self" || !slices.Equal(top.Path, wantPath) {
		js, _ := json.MarshalIndent(v, "", " ")
		t.Fatalf("top culprit %s (%s) at %q, want db: scan (self) at %q:\n%s", top.Function, top.Kind, top.Path, wantPath, js)
	}
	// 30% of db: scan's 15 ms is about 5.6% of the scenario's 80 ms.
	if d := float64(top.Delta); d < 0.03 || d > 0.09 || float64(top.DeltaLow) <= 0 {
		t.Errorf("db: scan's change %.3f (95%% CI %.3f..%.3f), want about 0.056", d, top.DeltaLow, top.DeltaHigh)
	}
	if !strings.Contains(v.Headline, "db: scan") {
		t.Errorf("headline %q does not name db: scan", v.Headline)
	}
	for _, c := range append(v.Regressions[1:], v.Improvements...) {
		t.Errorf("a span that did not change is a culprit: %s (%s) at %q", c.Function, c.Kind, c.Path)
	}

	if aa := diff("same"); len(aa.Regressions)+len(aa.Improvements) != 0 || aa.Result == verdict.Fail {
		t.Errorf("A/A: %s with culprits %+v %+v", aa.Result, aa.Regressions, aa.Improvements)
	}
}
