package evolution

import (
	"math"

	"github.com/flamediff/flamediff/pkg/stats"
)

// testChanges tests each cell's change against the previous build across
// runs, as the flame graph tests its nodes (docs/STATISTICS.md): Welch's t
// on the per-run times, then Benjamini-Hochberg over every tested cell of
// the matrix, so that run-to-run noise in a large matrix is not coloured.
// rows are in matrixRows' order: a component's builds in input order.
func testChanges(rows []Row, builds []Build, h *hierarchy, alpha float64) {
	perRun := make([]map[component][]float64, len(builds))
	for i := range builds {
		perRun[i] = h.runTimes(builds[i].Runs)
	}
	index := make(map[string]int, len(builds))
	for i, b := range builds {
		index[b.Name] = i
	}
	p := make([]float64, len(rows))
	for k, r := range rows {
		p[k] = math.NaN()
		i := index[r.Build]
		if r.Change == nil || i == 0 {
			continue
		}
		c := component{r.Component, r.Kind}
		cur, prev := perRun[i][c], perRun[i-1][c]
		if len(cur) >= 2 && len(prev) >= 2 {
			p[k] = stats.WelchTest(cur, prev).P
		}
	}
	q := stats.BenjaminiHochberg(p)
	for k := range rows {
		if math.IsNaN(p[k]) {
			continue
		}
		pk, qk, sig := p[k], q[k], q[k] < alpha
		rows[k].PValue, rows[k].QValue, rows[k].Significant = &pk, &qk, &sig
	}
}

// runTimes gives every component's time in each run, by the rule of
// hierarchy.times applied run by run: a method's own time, for a class or
// package the largest of its methods' in that run.
func (h *hierarchy) runTimes(runs map[string][]float64) map[component][]float64 {
	out := make(map[component][]float64, len(runs)*2)
	for f, vs := range runs {
		for _, c := range h.path(f) {
			old, ok := out[c]
			if !ok {
				out[c] = append([]float64(nil), vs...)
				continue
			}
			for j, v := range vs {
				old[j] = max(old[j], v)
			}
		}
	}
	return out
}
