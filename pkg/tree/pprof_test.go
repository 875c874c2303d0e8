package tree

import (
	"math"
	"testing"

	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/ingest"
)

// Functions of a diff match `go tool pprof -top -diff_base` on the merged
// sides, divided by the run count, for every function.
func TestFunctionsMatchPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	pprofDiffTop(t, Options{})
}

// pprofDiffTop checks Functions(o) of a diff of the test profiles (runs
// added with statistics) against `go tool pprof -top -diff_base` of the
// merged sides with the same flags, function by function (per-run values
// times the run count are pprof's sums), and returns the rows.
func pprofDiffTop(t *testing.T, o Options, flags ...string) []Function {
	t.Helper()
	base, head := testkit.PprofRuns(t, "base"), testkit.PprofRuns(t, "head")
	if len(base) != len(head) {
		t.Fatalf("%d base runs, %d head runs: the per-run comparison needs equal counts", len(base), len(head))
	}
	// pprof compares one file per side: merge each side's runs first.
	want, err := pproftop.Top([]string{testkit.Merge(t, head)}, []string{testkit.Merge(t, base)}, flags...)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(NewFrames())
	addRunFiles(t, b, Base, base)
	addRunFiles(t, b, Head, head)
	runs := float64(len(head))
	rows := b.Functions(o)
	got := map[string]pproftop.Entry{}
	for _, f := range rows {
		flat, cum := (f.HeadSelf-f.BaseSelf)*runs, (f.HeadTotal-f.BaseTotal)*runs
		if math.Abs(flat-math.Round(flat)) > 1e-6 || math.Abs(cum-math.Round(cum)) > 1e-6 {
			t.Errorf("%s: per-run values %g, %g are not run sums / %g", f.Name, flat, cum, runs)
		}
		if flat != 0 || cum != 0 {
			got[f.Name] = pproftop.Entry{Flat: int64(math.Round(flat)), Cum: int64(math.Round(cum))}
		}
		if math.IsNaN(f.PValue) {
			t.Errorf("%s: no statistics", f.Name)
		}
	}
	for name, w := range want {
		if w != (pproftop.Entry{}) && got[name] != w {
			t.Errorf("%v: %s: flat/cum diff %+v, pprof says %+v", flags, name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%v: %s: diff %+v, pprof does not list it", flags, name, g)
		}
	}
	if len(want) < 5 {
		t.Fatalf("%v: pprof listed only %d functions: test data too small to mean anything", flags, len(want))
	}
	return rows
}

// addRunFiles adds each file as a run of side, with statistics.
func addRunFiles(t testing.TB, b *Builder, side Side, files []string) {
	b.SetRuns(side, len(files))
	for run, name := range files {
		p, err := profilefile.Parse(name, ingest.Options{Format: ingest.Pprof})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddRunProfile(side, run, p); err != nil {
			t.Fatal(err)
		}
	}
}
