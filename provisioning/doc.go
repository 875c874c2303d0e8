// Package provisioning holds Grafana's provisioning files for Flamediff (the
// data source, the app, the "Build comparison" and "Builds over time"
// dashboards and the regression alert rule) that the dev stack in
// docker-compose.yaml mounts into Grafana. It has no Go code of its own: its
// tests check that every file parses, references the plugin ids and files
// that exist, and that every query in it is one the backend answers.
package provisioning
