package evolution_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
)

// The evolution frames (pkg/frames) of an analysis: tested here, where
// the analyses to render are.
func TestFrames(t *testing.T) {
	res, err := evolution.Analyze(evolution.FourBuilds(), evolution.Options{Threshold: evolution.DefaultThreshold})
	if err != nil {
		t.Fatal(err)
	}
	b := evolution.Build{Name: "t"}
	b.AddStack([]string{"a"}, 1)
	b.AddTimed(0, []string{"a"}, 1)
	tl, err := evolution.Analyze([]evolution.Build{b}, evolution.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res.Timeline = tl.Timeline
	answer := frames.Evolution(res, "ns")
	if len(answer) != 3 || answer[0].Name != "evolution" || answer[1].Name != "evolution_edges" || answer[2].Name != "evolution_timeline" {
		t.Fatalf("frames %v", answer)
	}
	m := answer[0]
	if n, _ := m.RowLen(); n != len(res.Matrix) {
		t.Fatalf("matrix frame has %d rows, want %d", n, len(res.Matrix))
	}
	field := func(f *data.Frame, name string) *data.Field {
		t.Helper()
		fd, i := f.FieldByName(name)
		if i < 0 {
			t.Fatalf("frame %s has no field %s", f.Name, name)
		}
		return fd
	}
	if u := field(m, "time").Config.Unit; u != "ns" {
		t.Errorf("time unit %q", u)
	}
	for i, r := range res.Matrix {
		ch, ok := field(m, "change").ConcreteAt(i)
		if (r.Change != nil) != ok || (ok && ch.(float64) != *r.Change) {
			t.Errorf("row %d: change %v, want %v", i, ch, r.Change)
		}
		if got := field(m, "component").At(i).(string); got != r.Component {
			t.Errorf("row %d: component %q, want %q", i, got, r.Component)
		}
		if got := field(m, "buildTime").At(i).(time.Time); !got.Equal(r.BuildTime) {
			t.Errorf("row %d: build time %v", i, got)
		}
		if got := field(m, "modified").At(i).(int64); got != int64(r.Modified) {
			t.Errorf("row %d: modified %d, want %d", i, got, r.Modified)
		}
	}
	if got := field(answer[1], "status").At(0).(string); got != "added" {
		t.Errorf("first edge status %q", got)
	}
	if got := field(answer[2], "share").At(0).(float64); got != 1 {
		t.Errorf("timeline share %g", got)
	}
	// Grafana receives frames as JSON: a null change must survive.
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Data struct{ Values [][]any } `json:"data"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Data.Values[7][0] != nil {
		t.Errorf("first build's change encodes as %v, want null", back.Data.Values[7][0])
	}
}

func TestFramesEmpty(t *testing.T) {
	for _, f := range frames.Evolution(evolution.Result{}, "short") {
		if n, err := f.RowLen(); err != nil || n != 0 || len(f.Fields) == 0 {
			t.Errorf("%s: %d rows, %d fields, %v", f.Name, n, len(f.Fields), err)
		}
	}
}
