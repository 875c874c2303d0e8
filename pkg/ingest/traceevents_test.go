package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
		// The page's url whole as its file, its path below the app's root
		// as its module (profile.Identify).
		if f.Name == "slow" && (!strings.HasPrefix(f.File, "file:///") || f.Module != "page.html" || f.Line != toolprofiles.SlowLineJS) {
			t.Errorf("slow: file %q module %q line %d, want file:///.../page.html, page.html, %d", f.File, f.Module, f.Line, toolprofiles.SlowLineJS)
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

// specTrace is a hand-written trace with an event of every phase of the
// Trace Event Format, in the object form with a displayTimeUnit (a
// viewer's unit: ts and dur stay microseconds). Thread 7 ("main") runs
// run 1-6 µs with step 2-5 in it, after an E whose B is before the trace;
// thread 8, named by its process only, begins tail at 7 and never ends it
// (it ends with the trace, at 12) with last 11-12 in it; the async track
// of category net and id 0x2 fetches 2-10 with parse 4-6 in it, its end
// written first and on another thread; a process-local id2 of net fetches
// 3-5. The other phases carry no duration.
const specTrace = `{"displayTimeUnit": "ns", "traceEvents": [
 {"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
 {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"main"}},
 {"ph":"E","pid":1,"tid":7,"ts":0.5},
 {"ph":"B","name":"run","pid":1,"tid":7,"ts":1},
 {"ph":"X","name":"step","pid":1,"tid":7,"ts":2,"dur":3},
 {"ph":"i","name":"mark","pid":1,"tid":7,"ts":3,"s":"t"},
 {"ph":"I","name":"old mark","pid":1,"tid":7,"ts":3},
 {"ph":"C","name":"heap","pid":1,"ts":3,"args":{"used":5}},
 {"ph":"s","name":"flow","cat":"c","id":1,"pid":1,"tid":7,"ts":2},
 {"ph":"t","name":"flow","cat":"c","id":1,"pid":1,"tid":7,"ts":3},
 {"ph":"f","name":"flow","cat":"c","id":1,"pid":1,"tid":7,"ts":4,"bp":"e"},
 {"ph":"N","name":"obj","id":"0x1","pid":1,"tid":7,"ts":2},
 {"ph":"O","name":"obj","id":"0x1","pid":1,"tid":7,"ts":3,"args":{"snapshot":{}}},
 {"ph":"D","name":"obj","id":"0x1","pid":1,"tid":7,"ts":4},
 {"ph":"R","name":"navigationStart","pid":1,"tid":7,"ts":2},
 {"ph":"c","name":"clock_sync","pid":1,"tid":7,"ts":2,"args":{"sync_id":"x"}},
 {"ph":"n","name":"tick","cat":"net","id":"0x2","pid":1,"tid":7,"ts":3},
 {"ph":"S","name":"legacy","cat":"net","id":"0x9","pid":1,"tid":7,"ts":3},
 {"ph":"E","pid":1,"tid":7,"ts":6},
 {"ph":"B","name":"tail","pid":1,"tid":8,"ts":7},
 {"ph":"e","name":"fetch","cat":"net","id":"0x2","pid":1,"tid":9,"ts":10},
 {"ph":"b","name":"fetch","cat":"net","id":"0x2","pid":1,"tid":7,"ts":2},
 {"ph":"b","name":"parse","cat":"net","id":"0x2","pid":1,"tid":8,"ts":4},
 {"ph":"e","name":"parse","cat":"net","id":"0x2","pid":1,"tid":8,"ts":6},
 {"ph":"b","name":"fetch","cat":"net","id2":{"local":"0x2"},"pid":1,"tid":7,"ts":3},
 {"ph":"e","name":"fetch","cat":"net","id2":{"local":"0x2"},"pid":1,"tid":7,"ts":5},
 {"ph":"X","name":"last","pid":1,"tid":8,"ts":11,"dur":1}
]}`

// The phases of the Trace Event Format as its specification defines them:
// the self times of specTrace's spans, by hand; the array form reads the
// same; with threads each stack starts with its thread's or track's frame.
func TestTraceEventPhases(t *testing.T) {
	want := map[string]int64{
		"main: run": 2000, "main: run;main: step": 3000,
		"app: tail": 4000, "app: tail;app: last": 1000,
		"net: fetch": 6000 + 2000, "net: fetch;net: parse": 2000,
	}
	p, err := Parse(strings.NewReader(specTrace), "spec.json", Auto)
	if err != nil {
		t.Fatal(err)
	}
	if got := foldedCounts(p); !reflect.DeepEqual(got, want) {
		t.Errorf("self times %v, want %v", got, want)
	}
	arr := specTrace[strings.Index(specTrace, "["):strings.LastIndex(specTrace, "]")]
	if q, err := Parse(strings.NewReader(arr), "array.json", Auto); err != nil || !reflect.DeepEqual(foldedCounts(q), want) {
		t.Errorf("the array form cut short: %v, %v", err, q)
	}
	p, err = Options{Threads: true}.Parse(strings.NewReader(specTrace), "spec.json")
	if err != nil {
		t.Fatal(err)
	}
	threads := map[string]int64{}
	for stack, v := range want {
		threads[stack[:strings.IndexByte(stack, ':')]+";"+stack] = v
	}
	if got := foldedCounts(p); !reflect.DeepEqual(got, threads) {
		t.Errorf("per thread %v, want %v", got, threads)
	}
	for _, s := range p.Samples {
		if f := p.Frames[s.Stack[0]]; f.Module != profile.ThreadModule {
			t.Errorf("root frame %+v is no thread", f)
		}
	}
}
