package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/internal/plugintest"
)

// BenchmarkCheckHealth is how long "Save & test" makes a user wait, on a
// fresh data source instance each op: healthy, and on each failure
// TestCheckHealth checks (the target: a few seconds at most, the check's
// own deadline is 5 s). Run with:
//
//	go test -run '^$' -bench CheckHealth -benchtime 5x ./pkg/plugin/
func BenchmarkCheckHealth(b *testing.B) {
	_, dsn := migratedStore(b)
	f := startOn(b, dsn)
	cases := append([]healthCase{{name: "healthy", change: func(*plugintest.Settings) {}}}, healthFailures(b)...)
	for i, c := range cases {
		b.Run(strings.ReplaceAll(c.name, " ", "-"), func(b *testing.B) {
			for b.Loop() {
				s := copySettings(f.settings) // a new Updated: a fresh instance
				s.UID = fmt.Sprintf("bench-health-%d", i)
				c.change(&s)
				res, err := f.plugin.CheckHealth(context.Background(), s)
				if err != nil {
					b.Fatal(err)
				}
				if ok := res.Status == backend.HealthStatusOk; ok != (c.want == "") || !strings.Contains(res.Message, c.want) {
					b.Fatalf("health: %v %q, want ok %v and %q", res.Status, res.Message, c.want == "", c.want)
				}
			}
		})
	}
}
