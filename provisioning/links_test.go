package provisioning

import (
	"context"
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/query"
)

// dataField matches Grafana's data macro ${__data.fields.NAME}: the value of
// field NAME in the row whose link is followed.
var dataField = regexp.MustCompile(`\$\{__data\.fields\.(\w+)\}`)

// TestRegressionLinks follows the regressions table's link from the demo's
// regression (checkout/pricing.ApplyDiscounts at 1.7.0) as Grafana fills it
// in, and runs every panel of the dashboard it opens with the variables the
// link sets: the comparison is base = the build before, head = the build of
// the change, and its function panel shows that function's significant rise.
func TestRegressionLinks(t *testing.T) {
	ctx := context.Background()
	store, _ := seedDemo(ctx, t)
	execute := executor(ctx, t, store)
	run := func(model any) data.Frames {
		t.Helper()
		_, frames := execute(t, model, query.Range{})
		return frames
	}

	dashboards := readDashboards(t)
	source := dashboards["flamediff-builds-over-time"]
	var table *panel
	for i, p := range source.Panels {
		if len(p.Targets) > 0 && p.Targets[0]["queryType"] == string(query.ChangePoints) {
			table = &source.Panels[i]
		}
	}
	if table == nil || table.Type != "table" {
		t.Fatal("Builds over time has no changepoints table")
	}
	var links []struct{ URL string }
	for _, o := range table.FieldConfig.Overrides {
		for _, prop := range o.Properties {
			if prop.ID == "links" && o.Matcher.Options == "function" {
				if err := json.Unmarshal(prop.Value, &links); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if len(links) != 1 {
		t.Fatalf("the function column has %d links, want 1", len(links))
	}

	vars := resolveVariables(ctx, t, store, source)
	model, err := interpolate(table.Targets[0], vars)
	if err != nil {
		t.Fatal(err)
	}
	f := run(model)[0]
	row := -1
	for i := 0; i < f.Rows(); i++ {
		if f.Fields[0].At(i) == "checkout/pricing.ApplyDiscounts" && f.Fields[1].At(i) == "1.7.0" {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("no change point of checkout/pricing.ApplyDiscounts at 1.7.0 among %d rows", f.Rows())
	}
	rowChange := *f.Fields[6].At(row).(*float64)
	if sig := f.Fields[8].At(row).(bool); !sig || rowChange < 0.1 {
		t.Fatalf("the demo's regression: change %v, significant %v", rowChange, sig)
	}

	// Fill the link in as Grafana does: dashboard variables, then the row's fields.
	link, err := expand(dataField.ReplaceAllStringFunc(links[0].URL, func(ref string) string {
		name := dataField.FindStringSubmatch(ref)[1]
		fl, _ := f.FieldByName(name)
		if fl == nil {
			t.Fatalf("link uses field %q, which the changepoints frame lacks", name)
		}
		return url.QueryEscape(fl.At(row).(string))
	}), vars)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link[0])
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Split(strings.TrimPrefix(u.Path, "/"), "/") // d/UID/slug
	if len(path) < 2 || path[0] != "d" {
		t.Fatalf("link %s does not open a dashboard", link[0])
	}
	target, ok := dashboards[path[1]]
	if !ok {
		t.Fatalf("link %s opens dashboard %q, which is not provisioned", link[0], path[1])
	}
	want := map[string]string{"app": "checkout-service", "base": "1.6.0", "head": "1.7.0", "function": "checkout/pricing.ApplyDiscounts"}
	for name, w := range want {
		if got := u.Query().Get("var-" + name); got != w {
			t.Errorf("link sets %s = %q, want %q (%s)", name, got, w, link[0])
		}
	}
	for i, v := range target.Templating.List {
		if values, ok := u.Query()["var-"+v.Name]; ok {
			target.Templating.List[i].Current.Value = values
		}
	}
	for name := range u.Query() {
		if !strings.HasPrefix(name, "var-") || !hasVariable(target, strings.TrimPrefix(name, "var-")) {
			t.Errorf("link sets %s, which %s lacks", name, target.UID)
		}
	}
	vars = resolveVariables(ctx, t, store, target)
	focused := false
	for _, p := range target.Panels {
		for _, tg := range p.Targets {
			model, err := interpolate(tg, vars)
			if err != nil {
				t.Fatalf("panel %q: %v", p.Title, err)
			}
			frames := run(model)
			if tg["function"] != "$function" {
				continue
			}
			focused = true
			change, _ := frames[0].FieldByName("change")
			significant, _ := frames[0].FieldByName("significant")
			if change == nil || significant == nil || change.Len() != 2 {
				t.Fatalf("panel %q: %v", p.Title, frames[0].Fields)
			}
			if c := *change.At(1).(*float64); significant.At(1).(float64) != 1 || math.Abs(c-rowChange) > 0.5*rowChange {
				t.Errorf("panel %q: change %v (significant %v), want about %v", p.Title, c, significant.At(1), rowChange)
			}
		}
	}
	if !focused {
		t.Errorf("%s has no panel on the function in focus", target.UID)
	}
}

func hasVariable(d dashboard, name string) bool {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return true
		}
	}
	return false
}
