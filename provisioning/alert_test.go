package provisioning

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/flamediff/flamediff/pkg/query"
)

// alertFile is Grafana's alert rule provisioning file (apiVersion 1), the
// fields Flamediff's rule uses.
type alertFile struct {
	APIVersion int `yaml:"apiVersion"`
	Groups     []struct {
		OrgID    int         `yaml:"orgId"`
		Name     string      `yaml:"name"`
		Folder   string      `yaml:"folder"`
		Interval string      `yaml:"interval"`
		Rules    []alertRule `yaml:"rules"`
	} `yaml:"groups"`
}

type alertRule struct {
	UID          string            `yaml:"uid"`
	Title        string            `yaml:"title"`
	Condition    string            `yaml:"condition"`
	For          string            `yaml:"for"`
	NoDataState  string            `yaml:"noDataState"`
	ExecErrState string            `yaml:"execErrState"`
	DashboardUID string            `yaml:"dashboardUid"`
	PanelID      int               `yaml:"panelId"`
	Labels       map[string]string `yaml:"labels"`
	Annotations  map[string]string `yaml:"annotations"`
	Data         []alertQuery      `yaml:"data"`
}

type alertQuery struct {
	RefID             string `yaml:"refId"`
	DatasourceUID     string `yaml:"datasourceUid"`
	RelativeTimeRange struct {
		From int `yaml:"from"`
		To   int `yaml:"to"`
	} `yaml:"relativeTimeRange"`
	Model map[string]any `yaml:"model"`
}

// expression is the model of a server-side expression (datasourceUid
// __expr__).
type expression struct {
	RefID      string `json:"refId"`
	Type       string `json:"type"`
	Expression string `json:"expression"`
	Reducer    string `json:"reducer"`
	Conditions []struct {
		Evaluator struct {
			Type   string    `json:"type"`
			Params []float64 `json:"params"`
		} `json:"evaluator"`
	} `json:"conditions"`
}

func readAlertRule(t *testing.T) alertRule {
	t.Helper()
	var f alertFile
	readYAML(t, "alerting/regression.yaml", &f)
	if f.APIVersion != 1 || len(f.Groups) != 1 || len(f.Groups[0].Rules) != 1 {
		t.Fatalf("alerting/regression.yaml: want apiVersion 1 with one group of one rule, got %+v", f)
	}
	g := f.Groups[0]
	if d, err := time.ParseDuration(g.Interval); err != nil || d <= 0 || g.Name == "" || g.Folder == "" {
		t.Errorf("group %q in folder %q with interval %q: all are required", g.Name, g.Folder, g.Interval)
	}
	return g.Rules[0]
}

// query returns the rule's query refID, failing if it is missing.
func (r alertRule) query(t *testing.T, refID string) alertQuery {
	t.Helper()
	for _, q := range r.Data {
		if q.RefID == refID {
			return q
		}
	}
	t.Fatalf("rule %q has no query %s", r.Title, refID)
	return alertQuery{}
}

func (r alertRule) expression(t *testing.T, refID string) expression {
	t.Helper()
	q := r.query(t, refID)
	if q.DatasourceUID != "__expr__" {
		t.Fatalf("%s is not a server-side expression (datasourceUid %q)", refID, q.DatasourceUID)
	}
	raw, err := json.Marshal(q.Model)
	if err != nil {
		t.Fatal(err)
	}
	var e expression
	if err := json.Unmarshal(raw, &e); err != nil || e.RefID != refID {
		t.Fatalf("%s: model %s (%v)", refID, raw, err)
	}
	return e
}

// threshold checks the rule's chain, condition = threshold(reduce-last(A))
// with A a Flamediff timeseries' changepoint field, and returns the
// threshold the reduced value must exceed.
func (r alertRule) threshold(t *testing.T) float64 {
	t.Helper()
	c := r.expression(t, r.Condition)
	if c.Type != "threshold" || len(c.Conditions) != 1 || c.Conditions[0].Evaluator.Type != "gt" || len(c.Conditions[0].Evaluator.Params) != 1 {
		t.Fatalf("condition %s: %+v, want a threshold `gt` with one parameter", r.Condition, c)
	}
	b := r.expression(t, c.Expression)
	if b.Type != "reduce" || b.Reducer != "last" {
		t.Fatalf("%s: %+v, want reduce (last)", c.Expression, b)
	}
	a := r.query(t, b.Expression)
	if a.DatasourceUID != readDataSources(t).Datasources[0].UID || a.RelativeTimeRange.From <= a.RelativeTimeRange.To {
		t.Fatalf("%s: data source %q, time range %+v: want the provisioned data source and a past range", a.RefID, a.DatasourceUID, a.RelativeTimeRange)
	}
	raw, err := json.Marshal(a.Model)
	if err != nil {
		t.Fatal(err)
	}
	m, err := query.Parse(raw)
	if err != nil || m.QueryType != query.TimeSeries || m.Field != "changepoint" {
		t.Fatalf("%s: model %s (%v): want a timeseries' changepoint field", a.RefID, raw, err)
	}
	return c.Conditions[0].Evaluator.Params[0]
}

// The rule is the documented one, well formed, and links to a panel that
// exists.
func TestAlertRule(t *testing.T) {
	r := readAlertRule(t)
	if r.UID == "" || r.Title != "Head build is >5% slower and significant" {
		t.Errorf("rule uid %q title %q", r.UID, r.Title)
	}
	if got := r.threshold(t); got != 0.05 {
		t.Errorf("threshold %v, want 0.05 (5%%)", got)
	}
	if _, err := time.ParseDuration(r.For); err != nil {
		t.Errorf("for %q: %v", r.For, err)
	}
	if !slices.Contains([]string{"OK", "NoData", "Alerting", "KeepLast"}, r.NoDataState) || !slices.Contains([]string{"OK", "Error", "Alerting", "KeepLast"}, r.ExecErrState) {
		t.Errorf("noDataState %q / execErrState %q are not Grafana states", r.NoDataState, r.ExecErrState)
	}
	if r.Annotations["summary"] == "" || r.Labels["app"] == "" {
		t.Errorf("rule lacks a summary annotation or an app label: %v %v", r.Annotations, r.Labels)
	}
	d, ok := readDashboards(t)[r.DashboardUID]
	if !ok {
		t.Fatalf("rule links to dashboard %q, which is not provisioned", r.DashboardUID)
	}
	for _, p := range d.Panels {
		if p.ID == r.PanelID {
			return
		}
	}
	t.Errorf("rule links to panel %d, which %s lacks", r.PanelID, r.DashboardUID)
}
