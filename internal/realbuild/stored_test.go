package realbuild

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// targets returns migrated fresh databases on one server and on the
// private two-shard cluster, by name.
func targets(t *testing.T) map[string]string {
	t.Helper()
	single, cluster := chtest.DSN(t), chtest.ClusterDSN(t)
	Flamediff(t, "migrate", "--dsn", single)
	Flamediff(t, "migrate", "--dsn", cluster, "--cluster", chtest.ClusterName)
	return map[string]string{"one server": single, "cluster": cluster}
}

// changePoint is a row of `flamediff query --model changepoints` (table).
type changePoint struct {
	function, build string
	significant     bool
	row             string
}

func changePoints(t *testing.T, table string) []changePoint {
	t.Helper()
	var cps []changePoint
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		if line == "no change points" || len(f) > 0 && f[0] == "FUNCTION" {
			continue
		}
		if len(f) < 9 {
			t.Fatalf("change point row %q", line)
		}
		cps = append(cps, changePoint{function: f[0], build: f[1], significant: f[len(f)-1] == "yes", row: line})
	}
	return cps
}

// (a) and (b) through ClickHouse, on one server and on the cluster: the
// runs of the binary installed as releases/1.0.0/app-base and
// releases/1.0.1/app-head stored as builds 1.0.0 and 1.0.1 compare as the
// files do (no culprit, no FAIL); over time, neither that copy nor the
// refactor with the same work (1.0.2: a split-off function and a new
// wrapper) is a change point or a significant cell of the evolution
// matrix, and the real slowdown of the split-off code
// (1.0.3) is one, in validate, which the change point gate fails on.
func TestStoredBuildsAtTheirPaths(t *testing.T) {
	f := app(t)
	builds := []struct {
		build string
		files []string
	}{{"1.0.0", f.files["aa-base"]}, {"1.0.1", f.files["aa-head"]}, {"1.0.2", f.files["refactor"]}, {"1.0.3", f.files["slower"]}}
	epoch := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) {
			ingest := func(i int) {
				for r, file := range builds[i].files {
					at := epoch.Add(time.Duration(i)*time.Hour + time.Duration(r)*time.Minute)
					Flamediff(t, "ingest", "--dsn", dsn, "--app", "app", "--build", builds[i].build, "--run", fmt.Sprint(r),
						"--time", at.Format(time.RFC3339), file)
				}
			}
			for i := range 3 {
				ingest(i)
			}
			out, _ := Flamediff(t, "query", "--dsn", dsn, "--output", "json", "--model",
				`{"queryType":"diff","app":"app","base":{"builds":["1.0.0"]},"head":{"builds":["1.0.1"]},"alpha":0.01}`)
			if v := Verdict(t, out); v.Result == verdict.Fail || len(Culprits(v)) > 0 {
				t.Errorf("stored runs of one binary at two paths:\n%s", Describe(v))
			}
			// At alpha 0.01: with nothing changed, Benjamini-Hochberg at
			// 0.05 marks a cell of the matrix in up to one run in twenty (a CI
			// run marked encodeStd -16% at the refactor, q 0.031, from about a
			// dozen samples a run); validate's doubling in 1.0.3 stands far
			// past either.
			model := `{"queryType":"changepoints","app":"app","alpha":0.01}`
			table, code := Flamediff(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression")
			for _, cp := range changePoints(t, table) {
				if cp.significant {
					t.Errorf("a change point where nothing changed: %s", cp.row)
				}
			}
			if code != 0 {
				t.Errorf("the change point gate fails on a refactor with the same work (exit %d):\n%s", code, table)
			}
			out, _ = Flamediff(t, "query", "--dsn", dsn, "--output", "json", "--model", `{"queryType":"evolution","app":"app","alpha":0.01}`)
			for _, cell := range Rows(t, out, "evolution") {
				if cell["significant"] == true {
					t.Errorf("the evolution matrix marks a change where nothing changed: %v", cell)
				}
			}
			ingest(3)
			table, code = Flamediff(t, "query", "--dsn", dsn, "--model", model, "--fail-on-regression")
			found := false
			for _, cp := range changePoints(t, table) {
				found = found || cp.significant && cp.build == "1.0.3" && cp.function == work("validate")
				if cp.significant && cp.build != "1.0.3" {
					t.Errorf("a change point where nothing changed: %s", cp.row)
				}
			}
			if !found || code != 3 {
				t.Errorf("validate doubled in 1.0.3: want its change point and the gate's exit 3, got exit %d:\n%s", code, table)
			}
		})
	}
}
