package receiver

import (
	"context"
	"encoding/json"
	"math"
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
// The functions table, change points, the time series of db: scan, its
// sandwich and the evolution of the builds, on the same span runs, say
// the same.
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

	// The other queries work on span runs unchanged.
	ask := func(q string) map[string][]map[string]any {
		t.Helper()
		m, err := query.Parse([]byte(`{"app":"test",` + q + `}`))
		if err != nil {
			t.Fatal(err)
		}
		answer, err := exec.Execute(context.Background(), m, query.Range{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out := map[string][]map[string]any{}
		for _, f := range answer {
			n, _ := f.RowLen()
			for i := range n {
				row := map[string]any{}
				for _, field := range f.Fields {
					row[field.Name], _ = field.ConcreteAt(i)
				}
				out[f.Name] = append(out[f.Name], row)
			}
		}
		return out
	}
	builds := `"builds":["base","same","slow"]`
	fns := ask(`"queryType":"functions","head":{"builds":["slow"]},"base":{"builds":["base"]}`)[frames.FrameFunctions]
	for _, row := range fns {
		// api: search and the scenario hold db: scan; the others changed not.
		changed := row["function"] == "db: scan" || row["function"] == "api: search" || row["function"] == "test: scenario"
		if row["significant"] == true && !changed || row["function"] == "db: scan" && row["significant"] != true {
			t.Errorf("functions: %v", row)
		}
	}
	cps := ask(`"queryType":"changepoints",` + builds)[frames.FrameChangePoints]
	if !slices.ContainsFunc(cps, func(r map[string]any) bool { return r["function"] == "db: scan" && r["build"] == "slow" }) {
		t.Errorf("change points %v: none of db: scan at build slow", cps)
	}
	for _, row := range cps {
		if row["build"] != "slow" || row["function"] != "db: scan" && row["function"] != "api: search" {
			t.Errorf("change point %v: only db: scan (and api: search, which holds it) change, at build slow", row)
		}
	}
	series := ask(`"queryType":"timeseries",` + builds + `,"function":"db: scan","baseline":"previous","field":"change"`)[frames.FrameTimeSeries]
	if len(series) != 3 || math.Abs(series[1]["change"].(float64)) > 0.1 || series[2]["change"].(float64) < 0.2 {
		t.Errorf("db: scan over the builds: %v, want no change at same and +30%% at slow", series)
	}
	sandwich := ask(`"queryType":"diff","head":{"builds":["slow"]},"base":{"builds":["base"]},"sandwich":"db: scan"`)[frames.FrameCulprits]
	if len(sandwich) != 2 {
		t.Errorf("sandwich of db: scan: culprits %v, want one of its callers' view and one of its callees'", sandwich)
	}
	for _, c := range sandwich {
		var path []string
		if err := json.Unmarshal(c["path"].(json.RawMessage), &path); err != nil || !slices.Contains(path, "db: scan") {
			t.Errorf("sandwich of db: scan: culprit %v at %q", c["culprit"], path)
		}
	}
	evolution := ask(`"queryType":"evolution",` + builds)[frames.FrameEvolution]
	if i := slices.IndexFunc(evolution, func(r map[string]any) bool { return r["build"] == "slow" && r["component"] == "db: scan" }); i < 0 ||
		evolution[i]["change"].(float64) < 0.2 {
		t.Errorf("evolution: db: scan at slow does not grow by 30%%: %v", evolution)
	}

	if aa := diff("same"); len(aa.Regressions)+len(aa.Improvements) != 0 || aa.Result == verdict.Fail {
		t.Errorf("A/A: %s with culprits %+v %+v", aa.Result, aa.Regressions, aa.Improvements)
	}
}
