//go:build race

package plugin_test

// raceEnabled: the tests run under -race, so the plugin binary is built
// with it too.
const raceEnabled = true
