package plugin_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
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

// TestOverTimeFewBuilds: every app starts with one build. Each over-time
// query answers on one build (builds unset, named, named twice) with the
// build in its answer and no change point, on two builds with both, and
// on none (a range without builds) with 404 saying so.
func TestOverTimeFewBuilds(t *testing.T) {
	store, dsn := migratedStore(t)
	ctx := context.Background()
	epoch := overTimeEpoch()
	for app, builds := range map[string][]string{"one": {"1.0.0"}, "two": {"1.0.0", "1.1.0"}} {
		for b, build := range builds {
			for r := range 3 {
				p, err := ingest.Parse(strings.NewReader(fmt.Sprintf("main;work %d\nmain;io %d\n", 100+r+100*b, 50+r)), "run.folded", ingest.Folded)
				if err != nil {
					t.Fatal(err)
				}
				meta := storage.RunMeta{App: app, Build: build, Run: fmt.Sprint(r),
					Start: epoch.Add(time.Duration(b)*24*time.Hour + time.Duration(r)*time.Minute), Duration: time.Second}
				if err := store.Write(ctx, meta, p, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	f := startOn(t, dsn)
	for _, c := range []struct {
		name   string
		app    string
		builds []string
		want   []string // the builds the answer shows
	}{
		{"one build, builds unset", "one", nil, []string{"1.0.0"}},
		{"one build named", "one", []string{"1.0.0"}, []string{"1.0.0"}},
		{"one build named twice", "one", []string{"1.0.0", "1.0.0"}, []string{"1.0.0"}},
		{"two builds", "two", nil, []string{"1.0.0", "1.1.0"}},
		{"one of two builds", "two", []string{"1.1.0"}, []string{"1.1.0"}},
	} {
		for _, qt := range []string{"changepoints", "evolution", "timeseries"} {
			t.Run(c.name+"/"+qt, func(t *testing.T) {
				model := map[string]any{"queryType": qt, "app": c.app}
				if c.builds != nil {
					model["builds"] = c.builds
				}
				frames := f.mustQuery(t, model)
				var shown []string
				switch qt {
				case "changepoints":
					fr := frameNamed(t, frames, "changepoints")
					for _, b := range fr.Meta.Custom.(map[string]any)["builds"].([]any) { // decoded JSON
						shown = append(shown, b.(string))
					}
				case "evolution":
					seen := map[string]bool{}
					for key := range matrixCells(t, frames) {
						if !seen[key[1]] {
							seen[key[1]] = true
							shown = append(shown, key[1])
						}
					}
					slices.Sort(shown)
				case "timeseries":
					// A point per build, at its first run: 1.0.0 at the epoch, 1.1.0 a day later.
					tm, _ := frameNamed(t, frames, "timeseries").FieldByName("time")
					for i := 0; i < tm.Len(); i++ {
						shown = append(shown, fmt.Sprintf("1.%d.0", int(tm.At(i).(time.Time).Sub(epoch)/(24*time.Hour))))
					}
				}
				if fmt.Sprint(shown) != fmt.Sprint(c.want) {
					t.Errorf("builds shown %v, want %v", shown, c.want)
				}
				if qt != "timeseries" && len(c.want) == 1 {
					if rows := changeRows(t, frames); len(rows) != 0 {
						t.Errorf("change points on one build: %v", rows)
					}
				}
			})
		}
	}
	// No build in the dashboard's range.
	for _, qt := range []string{"changepoints", "evolution", "timeseries"} {
		resp, err := f.plugin.QueryData(ctx, f.settings, plugintest.Query{RefID: "A", JSON: `{"queryType":"` + qt + `","app":"two"}`,
			From: epoch.Add(-48 * time.Hour), To: epoch.Add(-24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if r := resp.Responses["A"]; r.Status != backend.StatusNotFound || r.Error == nil || !strings.Contains(r.Error.Error(), "no build in the time range") {
			t.Errorf("%s on no build: %v %v, want 404 saying the range has no build", qt, r.Status, r.Error)
		}
	}
}

// TestChangePointsMovedWorkOverGRPC: at build 1.2.0 Close's call to write
// goes through a new Flush (the same work), at 1.3.0 a new regexp adds
// cost (4 runs a build). Flush's appearance is a moved change point, not
// significant, and its timeseries' changepoint field stays 0 (no alert);
// regexp's is significant, with the total's, and its changepoint is 1.
func TestChangePointsMovedWorkOverGRPC(t *testing.T) {
	store, dsn := migratedStore(t)
	ctx := context.Background()
	epoch := overTimeEpoch()
	for b := range 4 {
		for r := range 4 {
			write := "main;Close;write"
			if b >= 2 {
				write = "main;Close;Flush;write"
			}
			folded := fmt.Sprintf("%s %d\nmain;other %d\n", write, 400+r, 300+(r*7)%4)
			if b >= 3 {
				folded += fmt.Sprintf("main;regexp %d\n", 100+(r*3)%4)
			}
			p, err := ingest.Parse(strings.NewReader(folded), "run.folded", ingest.Folded)
			if err != nil {
				t.Fatal(err)
			}
			meta := storage.RunMeta{App: "moved", Build: fmt.Sprintf("1.%d.0", b), Run: fmt.Sprint(r),
				Start: epoch.Add(time.Duration(b)*24*time.Hour + time.Duration(r)*time.Minute), Duration: time.Second}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := startOn(t, dsn)
	cp := frameNamed(t, f.mustQuery(t, map[string]any{"queryType": "changepoints", "app": "moved"}), "changepoints")
	got := map[string]string{}
	for i := 0; i < cp.Rows(); i++ {
		row := cp.RowCopy(i)
		got[row[0].(string)] += fmt.Sprintf("%s significant=%v moved=%v;", row[1], row[8], row[9])
	}
	want := map[string]string{
		"Flush":  "1.2.0 significant=false moved=true;",
		"regexp": "1.3.0 significant=true moved=false;",
		"total":  "1.3.0 significant=true moved=false;",
		"main":   "1.3.0 significant=true moved=false;",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("change points %v, want %v", got, want)
	}
	for fn, w := range map[string][]float64{"Flush": {0, 0, 0, 0}, "regexp": {0, 0, 0, 1}} {
		ts := f.mustQuery(t, map[string]any{"queryType": "timeseries", "app": "moved", "function": fn, "field": "changepoint"})
		for i, v := range w {
			if got := ts[0].Fields[1].At(i).(float64); got != v {
				t.Errorf("%s: changepoint at build %d: %v, want %v", fn, i, got, v)
			}
		}
	}
}
