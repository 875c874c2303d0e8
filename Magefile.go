//go:build mage

package main

import (
	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

// Default builds the backend for every platform Grafana runs on.
var Default = build.BuildAll

// The backend belongs to the nested data source, not to the app at the top:
// the SDK reads the executable's name and the plugin id it links into the
// binary (its build info, which Grafana's plugin validator checks against
// the data source's plugin.json) from src/datasource/plugin.json, and
// writes the binaries and their manifest next to it in dist/datasource/.
func init() {
	_ = build.SetBeforeBuildCallback(func(cfg build.Config) (build.Config, error) {
		cfg.PluginJSONPath = "src/datasource"
		cfg.OutputBinaryPath = "dist/datasource"
		return cfg, nil
	})
}
