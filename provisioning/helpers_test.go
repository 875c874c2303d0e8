package provisioning

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root is the repository, relative to this package.
const root = ".."

// readYAML decodes a YAML file into v, failing on unknown shapes.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	decodeFile(t, path, v, yaml.Unmarshal)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	decodeFile(t, path, v, json.Unmarshal)
}

func decodeFile(t *testing.T, path string, v any, unmarshal func([]byte, any) error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// pluginIDs are the ids in the plugin.json files: the app, its data source
// and its panel.
type pluginIDs struct{ app, datasource, panel string }

func readPluginIDs(t *testing.T) pluginIDs {
	t.Helper()
	id := func(path string) string {
		var p struct{ ID string }
		readJSON(t, filepath.Join(root, path), &p)
		if p.ID == "" {
			t.Fatalf("%s has no id", path)
		}
		return p.ID
	}
	return pluginIDs{
		app:        id("plugin.json"),
		datasource: id("src/datasource/plugin.json"),
		panel:      id("src/panel/plugin.json"),
	}
}

// dataSourceFile is Grafana's data source provisioning file.
type dataSourceFile struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
		Name           string            `yaml:"name"`
		Type           string            `yaml:"type"`
		UID            string            `yaml:"uid"`
		Access         string            `yaml:"access"`
		JSONData       map[string]any    `yaml:"jsonData"`
		SecureJSONData map[string]string `yaml:"secureJsonData"`
	} `yaml:"datasources"`
}

func readDataSources(t *testing.T) dataSourceFile {
	t.Helper()
	var f dataSourceFile
	readYAML(t, "datasources/flamediff.yaml", &f)
	if f.APIVersion != 1 || len(f.Datasources) != 1 {
		t.Fatalf("datasources/flamediff.yaml: apiVersion %d with %d data sources, want 1 and 1", f.APIVersion, len(f.Datasources))
	}
	return f
}
