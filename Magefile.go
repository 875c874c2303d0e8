//go:build mage

package main

import (
	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

// Default builds the backend for every platform Grafana runs on. The SDK finds
// the executable's name in src/datasource/plugin.json (the nested data source)
// because the top-level plugin is an app without a backend of its own.
var Default = build.BuildAll
