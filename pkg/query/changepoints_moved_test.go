package query

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flamediff/flamediff/pkg/storage"
)

// A function split off at build 4 (Flush, now calling write) appears with
// work the total already held: a moved change point, not significant. A
// function new at build 6 with cost of its own (regexp, and the total
// grows by as much) stays a significant change point, as the total's does.
func TestChangePointsMovedWork(t *testing.T) {
	const nBuilds, nRuns = 8, 5
	r := rand.New(rand.NewPCG(1, 37))
	names := []string{"total", "Close", "write", "Flush", "regexp"}
	series := make([][][]float64, len(names))
	builds := make([]buildRuns, nBuilds)
	for b := range nBuilds {
		builds[b] = buildRuns{Build: storage.Build{Name: fmt.Sprint("1.", b)}}
		for s := range series {
			series[s] = append(series[s], make([]float64, nRuns))
		}
		for run := range nRuns {
			noise := func(v float64) float64 { return v * (1 + 0.01*r.NormFloat64()) }
			other, write := noise(500), noise(450)
			flush, regexp := 0.0, 0.0
			if b >= 4 {
				flush = write // Close -> Flush -> write: Flush holds write
			}
			if b >= 6 {
				regexp = noise(200)
			}
			series[0][b][run] = other + write + regexp // the total
			series[1][b][run] = write                  // Close holds write
			series[2][b][run] = write
			series[3][b][run] = flush
			series[4][b][run] = regexp
		}
	}
	alpha, minChange := 0.05, 0.02
	cps := detectChangePoints(Model{Alpha: &alpha, MinChange: &minChange}, builds, names, series)
	got := map[string]string{}
	for _, c := range cps {
		got[c.Function] += fmt.Sprintf("%s significant=%v moved=%v;", c.Build, c.Significant, c.Moved)
	}
	want := map[string]string{
		"Flush":  "1.4 significant=false moved=true;",
		"regexp": "1.6 significant=true moved=false;",
		"total":  "1.6 significant=true moved=false;",
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s: change points %q, want %q (all: %v)", f, got[f], w, got)
		}
	}
	for _, f := range []string{"Close", "write"} {
		if got[f] != "" {
			t.Errorf("%s: change points %q, want none", f, got[f])
		}
	}
}
