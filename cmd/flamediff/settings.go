package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"go.yaml.in/yaml/v3"

	"github.com/flamediff/flamediff/pkg/plugin"
)

// loadSettingsFile reads the Flamediff data source of a Grafana
// provisioning file (provisioning/datasources/flamediff.yaml) and decodes
// its jsonData and secureJsonData as the plugin does, so that the CLI and
// the dashboards read the same tables with the same rules.
func loadSettingsFile(path string) (plugin.Settings, error) {
	b, err := os.ReadFile(path) // #nosec G703 -- the user names the file
	if err != nil {
		return plugin.Settings{}, err
	}
	var file struct {
		Datasources []struct {
			Type           string            `yaml:"type"`
			JSONData       map[string]any    `yaml:"jsonData"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		return plugin.Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, ds := range file.Datasources {
		if ds.Type != plugin.ID {
			continue
		}
		raw, err := json.Marshal(ds.JSONData)
		if err != nil {
			return plugin.Settings{}, fmt.Errorf("%s: jsonData: %w", path, err)
		}
		s, err := plugin.LoadSettings(backend.DataSourceInstanceSettings{JSONData: raw, DecryptedSecureJSONData: ds.SecureJSONData})
		if err != nil {
			return plugin.Settings{}, fmt.Errorf("%s: %w", path, err)
		}
		return s, nil
	}
	return plugin.Settings{}, fmt.Errorf("%s: no data source of type %s", path, plugin.ID)
}
