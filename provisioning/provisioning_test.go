package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/demo"
	"github.com/flamediff/flamediff/pkg/plugin"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func TestDataSource(t *testing.T) {
	ids := readPluginIDs(t)
	ds := readDataSources(t).Datasources[0]
	if ds.Type != ids.datasource || ds.UID != "flamediff" || ds.Access != "proxy" {
		t.Errorf("data source type %q uid %q access %q, want %q, flamediff, proxy", ds.Type, ds.UID, ds.Access, ids.datasource)
	}
	settings := loadSettings(t)
	if settings.Host != "clickhouse" || settings.Port != 9000 || settings.Protocol != "native" || settings.DefaultDatabase != "flamediff" {
		t.Errorf("settings %+v, want clickhouse:9000 native, database flamediff", settings)
	}
}

// loadSettings reads the provisioned data source the way the backend does.
func loadSettings(t *testing.T) plugin.Settings {
	t.Helper()
	ds := readDataSources(t).Datasources[0]
	raw, err := json.Marshal(ds.JSONData)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plugin.LoadSettings(backend.DataSourceInstanceSettings{JSONData: raw, DecryptedSecureJSONData: ds.SecureJSONData})
	if err != nil {
		t.Fatalf("the backend rejects the provisioned settings: %v", err)
	}
	return s
}

func TestApp(t *testing.T) {
	var f struct {
		APIVersion int `yaml:"apiVersion"`
		Apps       []struct {
			Type     string `yaml:"type"`
			OrgID    int    `yaml:"org_id"`
			Disabled bool   `yaml:"disabled"`
		} `yaml:"apps"`
	}
	readYAML(t, "plugins/app.yaml", &f)
	if f.APIVersion != 1 || len(f.Apps) != 1 || f.Apps[0].Type != readPluginIDs(t).app || f.Apps[0].Disabled {
		t.Errorf("plugins/app.yaml: %+v, want the enabled app %s", f, readPluginIDs(t).app)
	}
}

// grafanaProvisioning is where docker-compose.yaml mounts this directory.
const grafanaProvisioning = "/etc/grafana/provisioning"

// dashboard is the part of Grafana's dashboard JSON the tests check.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Datasource *dsRef  `json:"datasource"`
	Query      string  `json:"query"`
	Multi      bool    `json:"multi"`
	Current    current `json:"current"`
}

// current is a variable's selected value: one text, or a list for a
// multi-value variable.
type current struct{ Value []string }

func (c *current) UnmarshalJSON(b []byte) error {
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var one string
	if json.Unmarshal(v.Value, &one) == nil {
		c.Value = []string{one}
		return nil
	}
	return json.Unmarshal(v.Value, &c.Value)
}

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID              int              `json:"id"`
	Type            string           `json:"type"`
	Title           string           `json:"title"`
	Datasource      *dsRef           `json:"datasource"`
	Targets         []map[string]any `json:"targets"`
	Transformations []struct {
		ID      string `json:"id"`
		Options struct {
			Include struct {
				Names []string `json:"names"`
			} `json:"include"`
		} `json:"options"`
	} `json:"transformations"`
	FieldConfig struct {
		Overrides []struct {
			Matcher struct {
				Options string `json:"options"`
			} `json:"matcher"`
			Properties []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
}

// readDashboards loads the dashboards the provider in dashboards.yaml
// points Grafana at, keyed by uid.
func readDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	var f struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "dashboards/dashboards.yaml", &f)
	if f.APIVersion != 1 || len(f.Providers) != 1 || f.Providers[0].Type != "file" {
		t.Fatalf("dashboards.yaml: %+v, want one file provider", f)
	}
	rel, err := filepath.Rel(grafanaProvisioning, f.Providers[0].Options.Path)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("dashboard provider path %q is not under %s", f.Providers[0].Options.Path, grafanaProvisioning)
	}
	files, err := filepath.Glob(filepath.Join(rel, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", rel, err)
	}
	out := map[string]dashboard{}
	for _, file := range files {
		var d dashboard
		readJSON(t, file, &d)
		if _, dup := out[d.UID]; dup || d.UID == "" {
			t.Errorf("%s: uid %q empty or used twice", file, d.UID)
		}
		out[d.UID] = d
	}
	return out
}

// Every panel and variable uses the data source the dashboard's first
// variable picks (of Flamediff's type, the provisioned one by default), so
// the dashboards work with any data source uid, as the plugin ships them;
// every panel uses a plugin that exists; the two dashboards the README
// describes are there.
func TestDashboards(t *testing.T) {
	ids := readPluginIDs(t)
	ds := readDataSources(t).Datasources[0]
	want := dsRef{Type: ids.datasource, UID: "${datasource}"}
	titles := map[string]bool{}
	for uid, d := range readDashboards(t) {
		titles[d.Title] = true
		if len(d.Templating.List) == 0 {
			t.Fatalf("%s: no variables", uid)
		}
		if v := d.Templating.List[0]; v.Name != "datasource" || v.Type != "datasource" || v.Query != ids.datasource ||
			len(v.Current.Value) != 1 || v.Current.Value[0] != ds.UID {
			t.Errorf("%s: first variable %+v, want datasource of type %s defaulting to %s", uid, v, ids.datasource, ds.UID)
		}
		for _, v := range d.Templating.List {
			if v.Type == "query" && (v.Datasource == nil || *v.Datasource != want) {
				t.Errorf("%s: variable %s uses data source %+v, want %+v", uid, v.Name, v.Datasource, want)
			}
		}
		for _, p := range d.Panels {
			if !slices.Contains([]string{ids.panel, "table", "timeseries"}, p.Type) {
				t.Errorf("%s: panel %q has type %q", uid, p.Title, p.Type)
			}
			if p.Datasource == nil || *p.Datasource != want || len(p.Targets) == 0 {
				t.Errorf("%s: panel %q: data source %+v with %d targets, want %+v", uid, p.Title, p.Datasource, len(p.Targets), want)
			}
		}
	}
	for _, title := range []string{"Build comparison", "Builds over time"} {
		if !titles[title] {
			t.Errorf("no dashboard %q", title)
		}
	}
}

// variableRef matches Grafana's variable syntaxes: $var, ${var},
// resolveVariables computes every variable's values as Grafana would on
// dashboard load: query variables ask the store what the data source's
// metricFindQuery asks the backend's resources, and the selected value must
// be one of the answers ("All" selects every one).
func resolveVariables(ctx context.Context, t *testing.T, store *storage.Store, d dashboard) map[string][]string {
	t.Helper()
	vars := map[string][]string{}
	for _, v := range d.Templating.List {
		switch v.Type {
		case "textbox", "custom", "constant", "datasource": // TestDashboards checks the data source
			vars[v.Name] = v.Current.Value
			continue
		case "query":
		default:
			t.Fatalf("%s: variable %s has type %s", d.UID, v.Name, v.Type)
		}
		q, err := expand(v.Query, vars)
		if err != nil {
			t.Fatalf("%s: variable %s: %v", d.UID, v.Name, err)
		}
		options, err := findValues(ctx, store, strings.Fields(q[0]))
		if err != nil {
			t.Fatalf("%s: variable %s query %q: %v", d.UID, v.Name, v.Query, err)
		}
		switch {
		case slices.Equal(v.Current.Value, []string{"$__all"}):
			vars[v.Name] = options
		case len(v.Current.Value) > 0 && !slices.ContainsFunc(v.Current.Value, func(s string) bool { return !slices.Contains(options, s) }):
			vars[v.Name] = v.Current.Value
		default:
			t.Fatalf("%s: variable %s selects %q, not among %q", d.UID, v.Name, v.Current.Value, options)
		}
	}
	return vars
}

// findValues answers a variable query of the data source (see
// metricFindQuery in src/datasource/datasource.ts).
func findValues(ctx context.Context, store *storage.Store, q []string) ([]string, error) {
	switch {
	case len(q) == 1 && q[0] == "apps":
		return store.Apps(ctx)
	case len(q) == 2 && q[0] == "builds":
		builds, err := store.Builds(ctx, q[1])
		names := make([]string, len(builds))
		for i, b := range builds {
			names[i] = b.Name
		}
		return names, err
	case len(q) == 3 && q[0] == "runs":
		runs, err := store.Runs(ctx, q[1], []string{q[2]}, nil)
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Run
		}
		return names, err
	}
	return nil, fmt.Errorf("not a variable query of the data source (apps, builds APP, runs APP BUILD)")
}

// seedDemo stores the demo builds of checkout-service around its regression
// (1.7.0) with their changes, enough for every provisioned query.
func seedDemo(ctx context.Context, t *testing.T) (*storage.Store, demo.App) {
	t.Helper()
	store := teststore.Migrated(t, chtest.DSN(t))
	app := demo.Generate(1)[0]
	app.Builds = app.Builds[4:8]
	for _, b := range app.Builds {
		for _, r := range b.Runs {
			meta := storage.RunMeta{App: app.Name, Build: b.Name, Run: r.Run, Start: r.Start, Commit: b.Commit}
			if err := store.Write(ctx, meta, r.Profile, nil); err != nil {
				t.Fatal(err)
			}
		}
		c := changes.Changes{Modified: b.Modified, Added: b.Added, Removed: b.Removed}
		if err := store.SaveChanges(ctx, app.Name, b.Name, c); err != nil {
			t.Fatal(err)
		}
	}
	return store, app
}

// panelFrames says what each query type must return for its panel: the
// name of a frame, or of a field, that the panel draws.
var panelFrames = map[query.Type]string{
	query.Diff:       "valueRight",
	query.Runs:       "runs_summary",
	query.Functions:  "delta",
	query.Evolution:  "evolution",
	query.TimeSeries: "timeseries",
	// changepoints: the regressions table lists this frame's rows.
	query.ChangePoints: "changepoints",
}

// executor returns a function that parses a query model as the backend
// does and runs it on the demo data, failing the test on any error.
func executor(ctx context.Context, t *testing.T, store *storage.Store) func(*testing.T, any, query.Range) (query.Model, data.Frames) {
	rules, err := sysframes.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	exec := &query.Executor{Store: store, Rules: rules}
	return func(t *testing.T, model any, r query.Range) (query.Model, data.Frames) {
		t.Helper()
		raw, err := json.Marshal(model)
		if err != nil {
			t.Fatal(err)
		}
		m, err := query.Parse(raw)
		if err != nil {
			t.Fatalf("backend rejects %s: %v", raw, err)
		}
		frames, err := exec.Execute(ctx, m, r)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m, frames
	}
}

// Every panel's query, with the dashboard's variables as Grafana fills them
// in, parses and runs on the backend's executor against real data, and
// returns what the panel shows; the alert rule fires on the demo's
// regression and not before it.
func TestQueriesAgainstClickHouse(t *testing.T) {
	ctx := context.Background()
	store, app := seedDemo(ctx, t)
	execute := executor(ctx, t, store)
	run := func(t *testing.T, model any, r query.Range) data.Frames {
		t.Helper()
		m, frames := execute(t, model, r)
		if want, ok := panelFrames[m.QueryType]; !ok || !hasName(frames, want) {
			t.Errorf("%s returned no %q", m.QueryType, want)
		}
		return frames
	}

	for uid, d := range readDashboards(t) {
		t.Run(uid, func(t *testing.T) {
			vars := resolveVariables(ctx, t, store, d)
			for _, p := range d.Panels {
				for _, target := range p.Targets {
					model, err := interpolate(target, vars)
					if err != nil {
						t.Fatalf("panel %q: %v", p.Title, err)
					}
					frames := run(t, model, query.Range{})
					for _, tr := range p.Transformations {
						for _, name := range tr.Options.Include.Names {
							if !hasName(frames, name) {
								t.Errorf("panel %q: transformation %s keeps %q, which no frame has", p.Title, tr.ID, name)
							}
						}
					}
				}
			}
		})
	}

	t.Run("alert", func(t *testing.T) {
		rule := readAlertRule(t)
		threshold := rule.threshold(t)
		for i, b := range app.Builds {
			// The rule's time range ends at b: b is the newest build.
			frames := run(t, rule.query(t, "A").Model, query.Range{From: app.Builds[0].Time.Add(-time.Hour), To: b.Time})
			last, err := evaluate(frames)
			if err != nil {
				t.Fatalf("build %s: %v", b.Name, err)
			}
			if fires := last > threshold; fires != (b.Name == "1.7.0") {
				t.Errorf("up to build %d (%s): last value %v, rule fires %v; it must fire at the regression (1.7.0) only", i, b.Name, last, fires)
			}
			// The firing series names the top culprit (a label the
			// notification shows): the new regular expression compile.
			labels := frames[0].Fields[1].Labels
			if want := map[bool]string{true: "regexp.MustCompile"}[b.Name == "1.7.0"]; labels["culprit"] != want {
				t.Errorf("build %s: culprit label %q, want %q", b.Name, labels["culprit"], want)
			}
		}
	})
}

func hasName(frames data.Frames, name string) bool {
	for _, f := range frames {
		if f.Name == name {
			return true
		}
		for _, fld := range f.Fields {
			if fld.Name == name {
				return true
			}
		}
	}
	return false
}

// evaluate does what Grafana's alerting does with the frames of a data
// source query before the rule's reduce (last) expression: every numeric
// field of a wide frame becomes one series, identified by its labels. A
// rule needs exactly one series here, or one per distinct label set:
// series sharing labels make Grafana refuse the result ("frame cannot
// uniquely be identified by its labels", grafana/grafana#74108), and a
// value in nanoseconds thresholded at 0.05 would always fire.
func evaluate(frames data.Frames) (float64, error) {
	var series []*data.Field
	for _, f := range frames {
		for _, fld := range f.Fields {
			if fld.Type().Numeric() {
				series = append(series, fld)
			}
		}
	}
	if len(series) != 1 {
		names := make([]string, len(series))
		for i, s := range series {
			names[i] = s.Name
		}
		return 0, fmt.Errorf("the query returns %d numeric series %q without labels; Grafana alerting needs one: the rule asks for `field: changepoint` alone", len(series), names)
	}
	s := series[0]
	if s.Len() == 0 {
		return 0, fmt.Errorf("series %s is empty", s.Name)
	}
	return s.FloatAt(s.Len() - 1)
}
