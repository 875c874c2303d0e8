package plugin_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// frameNamed returns the frame called name, failing the test without one.
func frameNamed(t *testing.T, frames data.Frames, name string) *data.Frame {
	t.Helper()
	for _, f := range frames {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s frame in %d frames", name, len(frames))
	return nil
}

// changeRows reads a changepoints frame back as one line per row.
func changeRows(t *testing.T, frames data.Frames) []string {
	t.Helper()
	f := frameNamed(t, frames, "changepoints")
	var out []string
	for i := 0; i < f.Rows(); i++ {
		row := f.RowCopy(i)
		change := row[6].(*float64)
		if p := row[7].(float64); p > 0.05 || math.IsNaN(p) {
			t.Errorf("row %v: p %v", row, p)
		}
		out = append(out, fmt.Sprintf("%s %s<-%s %.1f->%.1f %+.3f %v", row[0], row[1], row[2], row[4], row[5], *change, row[8]))
	}
	return out
}

// TestChangePointsOverGRPC: app/slow.Work doubles at build 2.2.0 of the
// over-time fixture, so it, main and the total change there (5 runs a
// build), and nothing else changes; the evolution answer carries the same
// rows, and the timeseries' changepoint field is the rise at 2.2.0 only.
func TestChangePointsOverGRPC(t *testing.T) {
	f := loadOverTime(t)
	want := []string{
		"app/slow.Work 2.2.0<-2.1.0 52.0->102.0 +0.962 true",
		"total 2.2.0<-2.1.0 235.4->285.4 +0.212 true",
		"main 2.2.0<-2.1.0 235.4->285.4 +0.212 true",
	}
	for _, model := range []map[string]any{
		{"queryType": "changepoints", "app": overTimeApp},
		{"queryType": "evolution", "app": overTimeApp},
	} {
		got := changeRows(t, f.mustQuery(t, model))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: change points\n%q\nwant\n%q", model["queryType"], got, want)
		}
	}
	// A 100% floor on the change keeps the rows but none is significant;
	// a share floor above every function but main (all of the total)
	// leaves those two.
	for _, row := range changeRows(t, f.mustQuery(t, map[string]any{"queryType": "changepoints", "app": overTimeApp, "minChange": 0.99})) {
		if row[len(row)-4:] == "true" {
			t.Errorf("minChange 0.99: %s is significant", row)
		}
	}
	only := changeRows(t, f.mustQuery(t, map[string]any{"queryType": "changepoints", "app": overTimeApp, "minShare": 0.999}))
	if fmt.Sprint(only) != fmt.Sprint(want[1:]) {
		t.Errorf("minShare 0.999: %q, want the total and main", only)
	}
	if r := f.query(t, map[string]any{"queryType": "changepoints", "app": overTimeApp, "alpha": 0.9}); r.Error == nil {
		t.Error("alpha 0.9 accepted")
	}

	ts := f.mustQuery(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "field": "changepoint"})
	if len(ts[0].Fields) != 2 {
		t.Fatalf("field changepoint: %v", ts[0].Fields)
	}
	for i, w := range []float64{0, 0, 50.0 / 235.4, 0} {
		if got := ts[0].Fields[1].At(i).(float64); math.Abs(got-w) > 1e-9 {
			t.Errorf("changepoint at build %d: %v, want %v", i, got, w)
		}
	}
}
