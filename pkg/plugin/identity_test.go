package plugin_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// One binary at two paths and under two names, through the plugin over
// go-plugin from one server and the cluster: every diff (each variant,
// both normalisations) has no delta at any node and no culprit.
func TestOneBinaryAtTwoPathsOverGRPC(t *testing.T) {
	files := testkit.PprofRuns(t, "base")
	if len(files) != 3 {
		t.Fatalf("testdata/pprof base runs: %d", len(files))
	}
	for name, cluster := range map[string]bool{"one server": false, "cluster": true} {
		t.Run(name, func(t *testing.T) {
			if cluster {
				chtest.ClusterShards(t)
			}
			store, dsn := teststore.Fresh(t, cluster)
			for build, exe := range map[string]string{"base": "/opt/app/1.2/app-base", "head": "/home/ci/checkout-2/app-head"} {
				for i, file := range files {
					p := movedTo(t, file, exe)
					if err := store.Write(context.Background(), storage.RunMeta{App: "app", Build: build, Run: strconv.Itoa(i)}, p, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			f := startOn(t, dsn)
			for _, norm := range []string{"absolute", "relative"} {
				frames := f.mustQuery(t, map[string]any{"queryType": "diff", "app": "app", "head": sel("head"), "base": sel("base"), "normalize": norm, "variants": true})
				trees := 0
				for _, fr := range frames {
					switch fr.Name {
					case "flamegraph":
						trees++
						delta, _ := fr.FieldByName("delta")
						for i := range delta.Len() {
							if d := delta.At(i).(float64); d != 0 {
								t.Fatalf("%s: node %d has delta %g", norm, i, d)
							}
						}
					case "culprits":
						if fr.Rows() != 0 {
							t.Errorf("%s: %d culprits", norm, fr.Rows())
						}
					}
				}
				if trees < 2 {
					t.Errorf("%s: %d trees, want every variant's", norm, trees)
				}
			}
		})
	}
}

// movedTo parses a real Go CPU profile with its executable mapping (the
// first) moved to exe.
func movedTo(t *testing.T, file, exe string) *profile.Profile {
	t.Helper()
	src := testkit.ParsePprof(t, file)
	src.Mapping[0].File = exe
	var buf bytes.Buffer
	if err := src.Write(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := ingest.Parse(&buf, file, ingest.Auto)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
