package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/toolprofiles"
	"github.com/flamediff/flamediff/pkg/profile"
)

// traces holds a trace Node wrote and one Chromium wrote, recorded once.
var traces struct {
	sync.Once
	node, chrome string
	err          error
}

func traceFiles(t *testing.T) {
	t.Helper()
	traces.Do(func() {
		dir := t.TempDir()
		var chromeErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			core, err := toolprofiles.PlaywrightCore()
			if err == nil {
				err = toolprofiles.ChromeTraces(core, dir, "chrome", 2e6)
			}
			traces.chrome, chromeErr = filepath.Join(dir, "chrome0.json"), err
		})
		traces.node, traces.err = toolprofiles.NodeTrace(dir, "node.json", 2e6)
		wg.Wait()
		traces.err = errors.Join(traces.err, chromeErr)
	})
	if traces.err != nil {
		t.Fatal(traces.err)
	}
}

// The self time of each duration event, per thread, is what a sweep of
// the raw events' time line gives, in Node's and Chromium's traces; the
// samples of Chromium's CPU profile events per function are those its
// chunks name.
func TestTraceEventsAgainstEvents(t *testing.T) {
	traceFiles(t)
	for _, file := range []string{traces.node, traces.chrome} {
		if f, _ := detect(readHead(t, file), "x"); f.Name != TraceEvent {
			t.Errorf("%s detected as %s", file, f.Name)
		}
		want, err := toolprofiles.TraceSelfTimes(file)
		if err != nil {
			t.Fatal(err)
		}
		p := parseTool(t, file, Options{})
		self, _ := selfAndTotal(p, func(f profile.Frame) string { return f.Name })
		if len(want) < 3 || len(self) != len(want) {
			t.Errorf("%s: %d events with self time %v, the sweep %d %v", file, len(self), self, len(want), want)
		}
		for k, v := range want {
			if self[k] != v {
				t.Errorf("%s: %s: self %d ns, the sweep %d ns", file, k, self[k], v)
			}
		}
	}
	want, err := toolprofiles.TraceSamples(traces.chrome)
	if err != nil {
		t.Fatal(err)
	}
	p := parseTool(t, traces.chrome, Options{SampleType: "samples"})
	self, _ := selfAndTotal(p, func(f profile.Frame) string { return f.Name + " " + f.File })
	if len(self) != len(want) {
		t.Errorf("%d functions with samples %v, the chunks name %d %v", len(self), self, len(want), want)
	}
	for k, v := range want {
		if self[k] != v {
			t.Errorf("%s: %d samples, the chunks name it %d times", k, self[k], v)
		}
	}
	for _, f := range p.Frames {
		// The page's url whole, page.html by identity.
		if f.Name == "slow" && (!strings.HasPrefix(f.Module, "file:///") || profile.ModuleIdentity(f.Module) != "page.html" || f.Line != toolprofiles.SlowLineJS) {
			t.Errorf("slow: module %q line %d, want file:///.../page.html:%d", f.Module, f.Line, toolprofiles.SlowLineJS)
		}
	}
	// The array form, cut short as a writer's exit leaves it, reads alike.
	b, err := os.ReadFile(traces.node)
	if err != nil {
		t.Fatal(err)
	}
	arr := string(b)
	arr = arr[strings.Index(arr, "["):strings.LastIndex(arr, "]")] + ","
	q, err := Parse(strings.NewReader(arr), "array.json", Auto)
	if err != nil || q.Total() != parseTool(t, traces.node, Options{}).Total() {
		t.Errorf("the array form: %v", err)
	}
}

// The V8 CPU profile events' errors are the .cpuprofile's.
func TestTraceEventsProfileErrors(t *testing.T) {
	chunk := func(data string) string {
		return `{"traceEvents": [{"ph": "P", "name": "ProfileChunk", "pid": 1, "id": "0x1", "args": {"data": ` + data + `}}]}`
	}
	for in, want := range map[string]string{
		chunk(`{"cpuProfile": {"nodes": [{"id": 1, "callFrame": {}}], "samples": [1, 1]}, "timeDeltas": [1]}`):                                                    "event 1: 2 samples but 1 time deltas",
		chunk(`{"cpuProfile": {"nodes": [{"id": 1, "parent": 2, "callFrame": {}}, {"id": 2, "parent": 1, "callFrame": {}}], "samples": [1]}, "timeDeltas": [1]}`): "cycle",
		`[{"ph":"X","name":"a","ts":1,"dur":1}]`: "no CPU profile samples",
	} {
		_, err := Options{Format: TraceEvent, SampleType: "samples"}.Parse(strings.NewReader(in), "x")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q", err, want)
		}
	}
}
