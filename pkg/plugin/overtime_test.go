package plugin_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Four builds, five runs each; the third build makes app/slow.Work twice
// as slow and records the change. app/tiny.Helper stays under 2%.
const overTimeApp = "svc"

var overTimeBuilds = []string{"2.0.0", "2.1.0", "2.2.0", "2.3.0"}

func overTimeEpoch() time.Time { return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC) }

func loadOverTime(t *testing.T) *fixture {
	t.Helper()
	return loadOverTimeOn(t, chtest.OnCluster())
}

func loadOverTimeOn(t *testing.T, cluster bool) *fixture {
	t.Helper()
	store, dsn := teststore.Fresh(t, cluster)
	ctx := context.Background()
	for b, build := range overTimeBuilds {
		slow := 50
		if b >= 2 {
			slow = 100
		}
		for r := 0; r < 5; r++ {
			folded := fmt.Sprintf("main;app/server.Handle;app/store.Query %d\n"+
				"main;app/server.Handle;app/render.(*Page).Write %d\n"+
				"main;app/slow.Work %d\n"+
				"main;app/tiny.Helper 1\n", 100+r, 80+r%2, slow+r)
			p, err := ingest.Parse(strings.NewReader(folded), "run.folded", ingest.Folded)
			if err != nil {
				t.Fatal(err)
			}
			meta := storage.RunMeta{App: overTimeApp, Build: build, Run: fmt.Sprintf("r%d", r),
				Start: overTimeEpoch().Add(time.Duration(b)*24*time.Hour + time.Duration(r)*time.Minute), Duration: time.Second}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.SaveChanges(ctx, overTimeApp, overTimeBuilds[2], changes.Changes{Modified: []string{"app/slow.Work"}}); err != nil {
		t.Fatal(err)
	}
	return startOn(t, dsn)
}

// cell is one evolution matrix row read back from the frame.
type cell struct {
	kind     string
	time     float64
	change   *float64
	modified int64
	methods  string // modifiedMethods
	// significant is the test of change across runs; nil where untested.
	significant *bool
}

func matrixCells(t *testing.T, frames data.Frames) map[[2]string]cell {
	t.Helper()
	m := frameNamed(t, frames, "evolution")
	field := func(name string) *data.Field {
		f, _ := m.FieldByName(name)
		if f == nil {
			t.Fatalf("evolution frame lacks %s", name)
		}
		return f
	}
	comp, kind, build, tm, change, mod := field("component"), field("kind"), field("build"), field("time"), field("change"), field("modified")
	methods, significant := field("modifiedMethods"), field("significant")
	out := map[[2]string]cell{}
	for i := 0; i < comp.Len(); i++ {
		c := cell{kind: kind.At(i).(string), time: tm.At(i).(float64), modified: mod.At(i).(int64), methods: methods.At(i).(string)}
		if v, ok := change.ConcreteAt(i); ok {
			x := v.(float64)
			c.change = &x
		}
		if v, ok := significant.ConcreteAt(i); ok {
			x := v.(bool)
			c.significant = &x
		}
		out[[2]string{comp.At(i).(string), build.At(i).(string)}] = c
	}
	return out
}

func TestEvolutionOverGRPC(t *testing.T) {
	f := loadOverTime(t)
	frames := f.mustQuery(t, map[string]any{"queryType": "evolution", "app": overTimeApp})
	cells := matrixCells(t, frames)
	for _, comp := range []string{"app/slow.Work", "app/slow"} {
		before, rise, after := cells[[2]string{comp, "2.1.0"}], cells[[2]string{comp, "2.2.0"}], cells[[2]string{comp, "2.3.0"}]
		if rise.change == nil || math.Abs(*rise.change-50.0/52) > 0.01 {
			t.Errorf("%s at 2.2.0: change %v, want about +96%% (52 -> 102 per run)", comp, rise.change)
		}
		if before.change == nil || math.Abs(*before.change) > 1e-9 || after.change == nil || math.Abs(*after.change) > 1e-9 {
			t.Errorf("%s: changes %v before and %v after the regression, want 0", comp, before.change, after.change)
		}
		// Five runs a build: the doubling is significant, the builds around it
		// (the same run times) are not.
		if rise.significant == nil || !*rise.significant || before.significant == nil || *before.significant ||
			after.significant == nil || *after.significant {
			t.Errorf("%s: significant %v/%v/%v, want false/true/false", comp, before.significant, rise.significant, after.significant)
		}
		if rise.modified != 1 || before.modified != 0 || after.modified != 0 || rise.methods != "app/slow.Work" {
			t.Errorf("%s: modified %d/%d/%d, want 0/1/0", comp, before.modified, rise.modified, after.modified)
		}
	}
	if c := cells[[2]string{"app/slow.Work", "2.0.0"}]; c.change != nil || c.significant != nil || c.kind != "method" {
		t.Errorf("first build: %+v, want a method with no change", c)
	}
	for key := range cells {
		if strings.Contains(key[0], "tiny") {
			t.Errorf("component %s is under the 2%% threshold but shown", key[0])
		}
	}
	names := map[string]bool{}
	for _, f := range frames {
		names[f.Name] = true
	}
	if !names["evolution_edges"] || !names["evolution_timeline"] {
		t.Errorf("frames %v, want edges and timeline too", names)
	}

	// A threshold of 0 shows the tiny helper; a time range picks builds.
	cells = matrixCells(t, f.mustQuery(t, map[string]any{"queryType": "evolution", "app": overTimeApp, "threshold": 0}))
	if _, ok := cells[[2]string{"app/tiny.Helper", "2.0.0"}]; !ok {
		t.Error("threshold 0 should show app/tiny.Helper")
	}
	resp, err := f.plugin.QueryData(context.Background(), f.settings, plugintest.Query{RefID: "A",
		JSON: `{"queryType":"evolution","app":"svc"}`, From: overTimeEpoch().Add(36 * time.Hour), To: overTimeEpoch().Add(100 * time.Hour)})
	if err != nil || resp.Responses["A"].Error != nil {
		t.Fatal(err, resp.Responses["A"].Error)
	}
	cells = matrixCells(t, resp.Responses["A"].Frames)
	for key := range cells {
		if key[1] != "2.2.0" && key[1] != "2.3.0" {
			t.Errorf("build %s is outside the time range", key[1])
		}
	}
}

func TestTimeSeriesOverGRPC(t *testing.T) {
	f := loadOverTime(t)
	for _, c := range []struct {
		function  string
		before    float64 // per-run mean before the regression
		after     float64
		wantField string
	}{
		{"", 100 + 80.4 + 52 + 1 + 2, 100 + 80.4 + 102 + 1 + 2, "total"},
		{"app/slow.Work", 52, 102, "app/slow.Work"},
	} {
		frames := f.mustQuery(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "function": c.function, "baseline": "previous"})
		fr := frames[0]
		if fr.Meta == nil || fr.Meta.Type != data.FrameTypeTimeSeriesWide {
			t.Fatalf("timeseries meta %+v", fr.Meta)
		}
		value, _ := fr.FieldByName("value")
		regression, _ := fr.FieldByName("regression")
		tm, _ := fr.FieldByName("time")
		if value == nil || regression == nil || tm == nil || value.Len() != 4 {
			t.Fatalf("timeseries fields: %v", fr.Fields)
		}
		for i, want := range []float64{c.before, c.before, c.after, c.after} {
			if got := value.At(i).(float64); math.Abs(got-want) > 1e-9 {
				t.Errorf("%q build %d: value %v, want %v", c.function, i, got, want)
			}
			if got := tm.At(i).(time.Time); !got.Equal(overTimeEpoch().Add(time.Duration(i) * 24 * time.Hour)) {
				t.Errorf("build %d at %v", i, got)
			}
		}
		wantRegression := (c.after - c.before) / c.before
		for i, want := range []float64{0, 0, wantRegression, 0} {
			if got := regression.At(i).(float64); math.Abs(got-want) > 1e-9 {
				t.Errorf("%q build %d: regression %v, want %v", c.function, i, got, want)
			}
		}
		if name := value.Config.DisplayNameFromDS; name != c.wantField {
			t.Errorf("series named %q, want %q", name, c.wantField)
		}
	}
	// Named builds are exactly those, in time order.
	named := f.mustQuery(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "builds": []string{"2.2.0", "2.0.0"}})
	if v, _ := named[0].FieldByName("value"); v.Len() != 2 || v.At(0).(float64) >= v.At(1).(float64) {
		t.Errorf("builds 2.0.0 and 2.2.0: %v", named[0].Fields)
	}
	if r := f.query(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "builds": []string{"2.0.0", "9.9"}}); r.Error == nil ||
		!strings.Contains(r.Error.Error(), `unknown build "9.9"`) {
		t.Errorf("unknown named build: %v", r.Error)
	}
	// An alert rule asks for the one field it thresholds.
	one := f.mustQuery(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "baseline": "previous", "field": "regression"})
	if len(one[0].Fields) != 2 || one[0].Fields[1].Name != "regression" {
		t.Errorf("field regression: fields %v", one[0].Fields)
	}
	r := f.query(t, map[string]any{"queryType": "timeseries", "app": overTimeApp, "function": "no.Such"})
	if r.Error == nil || !strings.Contains(r.Error.Error(), "no.Such") {
		t.Errorf("unknown function: %v", r.Error)
	}
}

// editBehindTheStore runs statements on the fixture's database, each with
// the over-time app and its first build as arguments: tables edited by
// hand.
func (f *fixture) editBehindTheStore(t *testing.T, statements ...string) {
	t.Helper()
	j := f.settings.JSONData
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{net.JoinHostPort(j["host"].(string), fmt.Sprint(j["port"]))},
		Auth: clickhouse.Auth{Database: j["defaultDatabase"].(string), Username: "default"},
		// synchronous through a cluster's Distributed tables: the query
		// that follows must see the edit
		Settings: clickhouse.Settings{"insert_distributed_sync": 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range statements {
		if err := conn.Exec(context.Background(), q, overTimeApp, overTimeBuilds[0]); err != nil {
			t.Fatal(err)
		}
	}
}

// strayStack is the statements that give the first run of the first
// build a sample of stack hash, in its samples and in its per-stack sums
// (which tree and timeseries reads use), and nothing else of it.
func strayStack(hash int) []string {
	return []string{
		fmt.Sprintf("INSERT INTO samples (app, build, run, ingest_id, stack_hash, time_frame, first_seen, value) "+
			"SELECT app, build, run, ingest_id, %d, 0, 0, 1000 FROM runs WHERE app = ? AND build = ? LIMIT 1", hash),
		fmt.Sprintf("INSERT INTO run_stacks (app, ingest_id, stack_hash, value, first_seen) "+
			"SELECT app, ingest_id, %d, 1000, 0 FROM runs WHERE app = ? AND build = ? LIMIT 1", hash),
	}
}

// A stack with rows but no text (tables edited by hand) fails evolution,
// whose call edges read which stacks the runs have, instead of being
// counted under no function; a function's timeseries reads the function
// sums written at ingest, which do not hold it, and answers as before.
func TestOverTimeMissingStackText(t *testing.T) {
	f := loadOverTime(t)
	function := map[string]any{"queryType": "timeseries", "app": overTimeApp, "function": "app/slow.Work"}
	before := f.query(t, function)
	if before.Error != nil {
		t.Fatal(before.Error)
	}
	// in every run: evolution reads which stacks one run of each stack
	// set has, and every run is one
	every := strings.NewReplacer("build = ? LIMIT 1", "(build = ? OR build != '')")
	var edits []string
	for _, q := range strayStack(12345) {
		edits = append(edits, every.Replace(q))
	}
	f.editBehindTheStore(t, edits...)
	if r := f.query(t, map[string]any{"queryType": "evolution", "app": overTimeApp}); r.Error == nil || !strings.Contains(r.Error.Error(), "3039") || r.Status != backend.StatusBadGateway {
		t.Errorf("evolution with a stack lacking its text: %v %v, want 502 naming stack 3039", r.Status, r.Error)
	}
	after := f.query(t, function)
	if after.Error != nil || mustJSON(t, after.Frames) != mustJSON(t, before.Frames) {
		t.Errorf("timeseries of a function after a stray stack row: %v, want the answer from before", after.Error)
	}
}

// A stack whose frame has no text fails the evolution query (the stack
// index fails before the first timeline row is summed) instead of
// hanging it.
func TestEvolutionMissingFrameText(t *testing.T) {
	f := loadOverTime(t)
	f.editBehindTheStore(t, append(strayStack(777),
		"INSERT INTO stacks (app, stack_hash, frame_hashes) SELECT app, 777, [4242] FROM runs WHERE app = ? AND build = ? LIMIT 1")...)
	if r := f.query(t, map[string]any{"queryType": "evolution", "app": overTimeApp}); r.Error == nil || !strings.Contains(r.Error.Error(), "309") {
		t.Errorf("evolution with a stack lacking a frame's text: %v %v, want an error naming stack 309", r.Status, r.Error)
	}
}
