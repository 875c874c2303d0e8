package plugin_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/internal/toolprofiles"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/storage"
)

var (
	toolsOnce sync.Once
	toolRuns  []toolprofiles.Recording
	toolsErr  error
)

// recordTools records runs of the real profilers once per test binary,
// in binDir (removed by TestMain).
func recordTools(t *testing.T) []toolprofiles.Recording {
	t.Helper()
	toolsOnce.Do(func() {
		dir := filepath.Join(binDir, "tools")
		if toolsErr = os.MkdirAll(dir, 0o755); toolsErr == nil {
			toolRuns, toolsErr = toolprofiles.Record(dir, 5)
		}
	})
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
	return toolRuns
}

// Runs the real callgrind, node --cpu-prof and JFR wrote, detected and
// stored, answer a diff over go-plugin, on one server and on the two-shard
// cluster, whose first culprit is slow() with its file and line.
func TestToolFormatsOverGRPC(t *testing.T) {
	recs := recordTools(t)
	for name, cluster := range map[string]bool{"one server": false, "cluster": true} {
		t.Run(name, func(t *testing.T) {
			store, dsn := teststore.Fresh(t, cluster)
			// totals are each run's total by format and build, for a failure's
			// message: a recording that lacks the planted change shows there.
			totals := map[string][]int64{}
			for _, r := range recs {
				for build, dir := range map[string]string{"base": r.Base, "head": r.Head} {
					files, err := filepath.Glob(filepath.Join(dir, "run*"))
					if err != nil || len(files) == 0 {
						t.Fatalf("no runs in %s", dir)
					}
					for _, file := range files {
						meta := storage.RunMeta{App: r.Format, Build: build, Run: path.Base(file)}
						p, err := profilefile.Parse(file, ingest.Options{Format: ingest.Auto, SampleType: r.SampleType})
						if err != nil {
							t.Fatal(err)
						}
						if err := store.Write(context.Background(), meta, p, nil); err != nil {
							t.Fatal(err)
						}
						totals[r.Format+" "+build] = append(totals[r.Format+" "+build], p.Total())
					}
				}
			}
			f := startOn(t, dsn)
			for _, r := range recs {
				frames := f.mustQuery(t, map[string]any{"queryType": "diff", "app": r.Format, "head": sel("head"), "base": sel("base")})
				var found bool
				for _, fr := range frames {
					if fr.Name != "culprits" {
						continue
					}
					found = true
					culprit, _ := fr.FieldByName("culprit")
					file, _ := fr.FieldByName("file")
					line, _ := fr.FieldByName("line")
					regression, _ := fr.FieldByName("regression")
					first := -1 // the first regression (improvements may come first)
					for i := range culprit.Len() {
						if regression.At(i) == true {
							first = i
							break
						}
					}
					if first < 0 {
						t.Errorf("%s: no regression among %d culprits (run totals: base %v, head %v)", r.Format, culprit.Len(),
							totals[r.Format+" base"], totals[r.Format+" head"])
						continue
					}
					at := path.Base(file.At(first).(string)) + ":" + strconv.FormatInt(line.At(first).(int64), 10)
					if culprit.At(first) != r.Slow || at != r.SlowAt {
						t.Errorf("%s: first regression %v at %s, want %s at %s", r.Format, culprit.At(first), at, r.Slow, r.SlowAt)
					}
				}
				if !found {
					t.Errorf("%s: no culprits frame in %d frames", r.Format, len(frames))
				}
			}
		})
	}
}
