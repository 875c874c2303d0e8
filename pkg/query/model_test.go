package query

import (
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

func TestParseDefaults(t *testing.T) {
	m, err := Parse([]byte(`{"refId":"A","datasource":{"uid":"x"},"queryType":"diff","app":"a",
		"head":{"builds":["2"]},"base":{"builds":["1"],"runs":["r1"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxNodes != DefaultMaxNodes || m.Threshold == nil || *m.Threshold != DefaultThreshold || !m.IsDiff() {
		t.Errorf("defaults not applied: %+v", m)
	}
	if m.Normalize != "absolute" || m.Normalization() != tree.Absolute || m.Alpha == nil || *m.Alpha != stats.DefaultAlpha {
		t.Errorf("statistics defaults not applied: normalize %q, alpha %v", m.Normalize, m.Alpha)
	}
	if m.Base.Runs[0] != "r1" || m.Head.Builds[0] != "2" {
		t.Errorf("selection lost: %+v", m)
	}
	m, err = Parse([]byte(`{"queryType":"flamegraph","app":"a","head":{"builds":["2"]},"base":{"builds":["1"]},"maxNodes":1000000000000}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.IsDiff() || m.MaxNodes != MaxMaxNodes {
		t.Errorf("flamegraph with base: IsDiff %v, maxNodes %d (want clamped to %d)", m.IsDiff(), m.MaxNodes, MaxMaxNodes)
	}
	m, err = Parse([]byte(`{"queryType":"functions","app":"a","head":{"builds":["2"]},"base":{"builds":["1"]}}`))
	if err != nil || !m.IsDiff() {
		t.Errorf("functions with a base is a comparison: %v %v", m.IsDiff(), err)
	}
	m, err = Parse([]byte(`{"queryType":"diff","app":"a","head":{"builds":["2"]},"base":{"builds":["1"]},
		"normalize":"relative","alpha":0.5,"focus":["main","f"]}`))
	if err != nil || m.Normalization() != tree.Relative || *m.Alpha != 0.5 || len(m.Focus) != 2 {
		t.Errorf("statistics options: %+v, %v", m, err)
	}
	o := TreeOptions(tree.NewBuilder(tree.NewFrames()), m, nil)
	if o.Normalize != tree.Relative || o.Alpha != 0.5 || len(o.Focus) != 2 {
		t.Errorf("engine options %+v", o)
	}
	m, err = Parse([]byte(`{"queryType":"evolution","app":"a","threshold":0}`))
	if err != nil || *m.Threshold != 0 {
		t.Errorf("explicit zero threshold: %v %v", m.Threshold, err)
	}
}

func TestParseRejects(t *testing.T) {
	long := strings.Repeat("x", maxNameBytes+1)
	many := `"` + strings.Repeat(`b","`, maxNamesPerSelect) + `b"`
	for raw, want := range map[string]string{
		``:                               "invalid query JSON",
		`[]`:                             "invalid query JSON",
		`{"queryType":1}`:                "invalid query JSON",
		`{}`:                             "queryType is required",
		`{"queryType":"drop table"}`:     `unknown queryType "drop table"`,
		`{"queryType":"diff"}`:           "app is required",
		`{"queryType":"diff","app":"a"}`: "needs head.builds",
		`{"queryType":"runs","app":"a"}`: "needs head.builds",
		`{"queryType":"diff","app":"a","head":{"builds":["1"]}}`:                     "needs base.builds",
		`{"queryType":"flamegraph","app":"a","head":{"builds":[""]}}`:                "head.builds: empty name",
		`{"queryType":"flamegraph","app":"a","head":{"builds":["1"]},"maxNodes":-5}`: "maxNodes must be positive",
		`{"queryType":"timeseries","app":"a","field":"regression"}`:                  "needs a baseline",
		`{"queryType":"timeseries","app":"a","field":"drop","baseline":"previous"}`:  `unknown field "drop"`,
		`{"queryType":"evolution","app":"a","threshold":1}`:                          "threshold must be a share",
		`{"queryType":"evolution","app":"a","threshold":-0.1}`:                       "threshold must be a share",
		`{"queryType":"evolution","app":"` + long + `"}`:                             "longer than",
		`{"queryType":"evolution","app":"a","builds":[` + many + `]}`:                "too many names",
		`{"queryType":"evolution","app":"a","normalize":"percent"}`:                  `normalize must be absolute or relative, not "percent"`,
		`{"queryType":"timeseries","app":"a","alpha":0}`:                             "alpha must be a false-discovery rate in (0, 0.5], not 0",
		`{"queryType":"timeseries","app":"a","alpha":0.6}`:                           "alpha must be",
		`{"queryType":"timeseries","app":"a","alpha":-1}`:                            "alpha must be",
		`{"queryType":"diff","app":"a","focus":["main",""]}`:                         "focus: empty name",
	} {
		_, err := Parse([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: error %v, want %q", raw, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"queryType":"diff","app":"a","head":{"builds":["2"]},"base":{"builds":["1"]}}`))
	f.Add([]byte(`{"queryType":"timeseries","app":"a","function":"f","baseline":"previous"}`))
	f.Add([]byte(`{"queryType":"evolution","app":"a","threshold":0.5,"maxNodes":3}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Parse(raw)
		if err != nil {
			return
		}
		if m.MaxNodes <= 0 || m.MaxNodes > MaxMaxNodes || m.Threshold == nil || m.App == "" ||
			m.Alpha == nil || !(*m.Alpha > 0 && *m.Alpha <= MaxAlpha) || (m.Normalize != "absolute" && m.Normalize != "relative") {
			t.Errorf("accepted an invalid model: %+v", m)
		}
	})
}
