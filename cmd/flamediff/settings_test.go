package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The provisioning file reader never panics, and what it accepts the
// plugin's settings accept.
func FuzzLoadSettingsFile(f *testing.F) {
	if b, err := os.ReadFile("../../provisioning/datasources/flamediff.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("datasources:\n  - type: flamediff-clickhouse-datasource\n    jsonData: {host: h, tables: {runs: r}, systemFrames: ['^x']}\n"))
	path := filepath.Join(f.TempDir(), "s.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := loadSettingsFile(path)
		if err == nil && s.Host == "" {
			t.Fatalf("accepted settings without a host: %+v", s)
		}
	})
}

// The repository's provisioning file is one the CLI reads.
func TestProvisionedSettings(t *testing.T) {
	s, err := loadSettingsFile("../../provisioning/datasources/flamediff.yaml")
	if err != nil || s.Host != "clickhouse" || s.Password != "flamediff" || s.DefaultDatabase != "flamediff" {
		t.Errorf("settings %+v, %v", s, err)
	}
}
