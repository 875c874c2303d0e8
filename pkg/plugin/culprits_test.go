package plugin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/changes"
)

// Culprits over gRPC from ClickHouse, on one server and on the two-shard
// cluster: every diff (each variant, both normalisations, with a focus)
// answers a culprits frame after each tree, whose verdict names the new
// main.validateHead first, with its file and line from the stored frames
// and "modified" from the head build's recorded changes; the functions
// frame carries the same.
func TestCulpritsOverGRPC(t *testing.T) {
	for name, cluster := range map[string]bool{"one server": false, "cluster": true} {
		t.Run(name, func(t *testing.T) {
			if cluster {
				chtest.ClusterShards(t)
			}
			f := loadPprofOn(t, cluster)
			err := f.store.SaveChanges(context.Background(), hostileApp, hostileHead, changes.Changes{Modified: []string{"main.validateHead"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, norm := range []string{"absolute", "relative"} {
				for _, extra := range []map[string]any{{"variants": true}, {"focus": []string{"runtime.main", "main.main"}}, {"maxNodes": 50}} {
					m := map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase), "normalize": norm}
					for k, v := range extra {
						m[k] = v
					}
					checkCulprits(t, f.mustQuery(t, m), norm, extra["variants"] == true)
				}
			}
			frames := f.mustQuery(t, map[string]any{"queryType": "functions", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)})
			if len(frames) != 2 || frames[0].Name != "functions" || frames[1].Name != "culprits" {
				t.Fatalf("functions answer: %d frames", len(frames))
			}
			fn, _ := frames[0].FieldByName("function")
			file, _ := frames[0].FieldByName("file")
			line, _ := frames[0].FieldByName("line")
			mod, _ := frames[0].FieldByName("modified")
			if file == nil || line == nil || mod == nil {
				t.Fatal("functions frame without file, line, modified")
			}
			for i := range fn.Len() {
				if fn.At(i) == "main.validateHead" && (!strings.HasSuffix(file.At(i).(string), "/main.go") || line.At(i) != int64(64) || mod.At(i) != true) {
					t.Errorf("main.validateHead: %v:%v modified %v", file.At(i), line.At(i), mod.At(i))
				}
			}
		})
	}
}

func checkCulprits(t *testing.T, frames data.Frames, norm string, variants bool) {
	t.Helper()
	var culprits []*data.Frame
	for i, f := range frames {
		if f.Name == "culprits" {
			culprits = append(culprits, f)
			if i == 0 || frames[i-1].Name == "culprits" {
				t.Errorf("culprits frame %d follows no tree", i)
			}
		}
	}
	want := 1
	if variants {
		want = 4
	}
	if len(culprits) != want {
		t.Fatalf("%s: %d culprits frames in %d, want %d", norm, len(culprits), len(frames), want)
	}
	var headline string
	for k, c := range culprits {
		v, _ := json.Marshal(c.Meta.Custom.(map[string]any)["verdict"])
		var verdict struct {
			Result, Headline, Normalize string
		}
		if err := json.Unmarshal(v, &verdict); err != nil {
			t.Fatal(err)
		}
		if k > 0 && verdict.Headline != headline {
			t.Errorf("verdicts differ between variants: %q, %q", verdict.Headline, headline)
		}
		headline = verdict.Headline
		if verdict.Result != "FAIL" || verdict.Normalize != norm ||
			!strings.HasPrefix(verdict.Headline, "`main.validateHead` is new in head, called from `main.iteration`") ||
			!strings.Contains(verdict.Headline, "the head build modified it") {
			t.Errorf("%s verdict %+v", norm, verdict)
		}
		if variant := c.Meta.Custom.(map[string]any)["variant"]; k > 0 || variant == "normal" || variant == "" {
			if k > 0 {
				continue // inverted and collapsed views have culprits of their own
			}
			fn, _ := c.FieldByName("culprit")
			file, _ := c.FieldByName("file")
			line, _ := c.FieldByName("line")
			mod, _ := c.FieldByName("modified")
			if fn.Len() == 0 || fn.At(0) != "main.validateHead" || !strings.HasSuffix(file.At(0).(string), "/main.go") ||
				line.At(0) != int64(64) || mod.At(0) != true {
				t.Errorf("%s: first culprit %v %v:%v modified %v", norm, fn.At(0), file.At(0), line.At(0), mod.At(0))
			}
		}
	}
}
