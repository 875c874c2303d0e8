package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/plugintest"
)

// TestLoad sends 200 diff queries, 20 at a time, over one plugin process.
// The test script runs it with -race.
func TestLoad(t *testing.T) {
	f := loadPprof(t)
	model := mustJSON(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase), "variants": true})
	const total, concurrency = 200, 20
	var wg sync.WaitGroup
	errs := make(chan error, total)
	work := make(chan int)
	var first []byte
	var mu sync.Mutex
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				resp, err := f.plugin.QueryData(context.Background(), f.settings, plugintest.Query{RefID: "A", JSON: model})
				if err == nil && resp.Responses["A"].Error != nil {
					err = resp.Responses["A"].Error
				}
				if err != nil {
					errs <- fmt.Errorf("query %d: %w", i, err)
					continue
				}
				b, _ := json.Marshal(resp.Responses["A"].Frames)
				mu.Lock()
				if first == nil {
					first = b
				} else if !bytes.Equal(first, b) {
					errs <- fmt.Errorf("query %d answered differently", i)
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	for i := 0; i < total; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d diff queries (4 variants each) at concurrency %d in %v", total, concurrency, time.Since(start))
}

// TestFocus: a focus query returns the path's subtree only; a path the
// tree lacks is the user's mistake (400), naming the path.
func TestFocus(t *testing.T) {
	f := loadPprof(t)
	model := map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
	whole := f.mustQuery(t, model)[0]
	level, _ := whole.FieldByName("level")
	label, _ := whole.FieldByName("label")
	text := func(fr *data.Frame, i int) string { return labelAt(fr, i) }
	last := ""
	for i := range level.Len() {
		if level.At(i).(int64) == 1 {
			last = text(whole, i) // the last child of the root: not the largest
		}
	}
	model["focus"] = []string{last}
	focused := f.mustQuery(t, model)[0]
	fl, _ := focused.FieldByName("level")
	for i := range fl.Len() {
		if fl.At(i).(int64) == 1 && text(focused, i) != last {
			t.Errorf("focus on %q returned the root child %q", last, text(focused, i))
		}
	}
	if n := fl.Len(); n < 2 || n >= label.Len() {
		t.Errorf("focused tree has %d nodes, the whole %d", n, label.Len())
	}
	model["focus"] = []string{last, "no such frame"}
	r := f.query(t, model)
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "no such frame") {
		t.Errorf("unknown focus: %v (status %d)", r.Error, r.Status)
	}
}

// labelAt is the label of node i (an enum or a string field).
func labelAt(fr *data.Frame, i int) string {
	fl, _ := fr.FieldByName("label")
	if v, ok := fl.At(i).(data.EnumItemIndex); ok {
		return fl.Config.TypeConfig.Enum.Text[v]
	}
	return fmt.Sprint(fl.At(i))
}
