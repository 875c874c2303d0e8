package provisioning

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The checks of Grafana's plugin validator that the repository alone
// decides: a license matching package.json, a changelog, a catalog page
// with absolute links only, screenshots and links in plugin.json, the app
// enabled on install, and the dashboards it includes present.
func TestCatalogReady(t *testing.T) {
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil || !strings.Contains(string(license), "Apache License\n                           Version 2.0") {
		t.Errorf("LICENSE is not the Apache License 2.0 text (%v)", err)
	}
	var pkg struct{ License string }
	readJSON(t, filepath.Join(root, "package.json"), &pkg)
	if pkg.License != "Apache-2.0" {
		t.Errorf("package.json license %q", pkg.License)
	}
	if _, err := os.Stat(filepath.Join(root, "CHANGELOG.md")); err != nil {
		t.Error(err)
	}

	page, err := os.ReadFile(filepath.Join(root, "src", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)]*)\)`).FindAllStringSubmatch(string(page), -1) {
		if !strings.HasPrefix(m[1], "https://") {
			t.Errorf("src/README.md links to %q: the catalog needs absolute links", m[1])
		}
	}

	var app struct {
		AutoEnabled bool `json:"autoEnabled"`
		Info        struct {
			Links       []struct{ Name, URL string }
			Screenshots []struct{ Name, Path string }
		}
		Includes []struct{ Type, Path string }
	}
	readJSON(t, filepath.Join(root, "plugin.json"), &app)
	if !app.AutoEnabled {
		t.Error("the app is not enabled on install (autoEnabled)")
	}
	if len(app.Info.Links) == 0 || len(app.Info.Screenshots) == 0 {
		t.Errorf("plugin.json has %d links and %d screenshots", len(app.Info.Links), len(app.Info.Screenshots))
	}
	// webpack.config.ts copies docs/img/NAME.png to img/screenshots/NAME.png
	// and provisioning/dashboards/NAME.json to dashboards/NAME.json.
	for _, s := range app.Info.Screenshots {
		if _, err := os.Stat(filepath.Join(root, "docs", "img", strings.TrimPrefix(s.Path, "img/screenshots/"))); err != nil {
			t.Errorf("screenshot %s: %v", s.Path, err)
		}
	}
	dashboards := 0
	for _, inc := range app.Includes {
		if inc.Type != "dashboard" {
			continue
		}
		dashboards++
		var d dashboard
		readJSON(t, filepath.Join("dashboards", strings.TrimPrefix(inc.Path, "dashboards/")), &d)
	}
	if dashboards != len(readDashboards(t)) {
		t.Errorf("the app includes %d dashboards, provisioning has %d", dashboards, len(readDashboards(t)))
	}
}
