package ingest

import (
	"errors"
	"os"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/toolprofiles"
	"github.com/flamediff/flamediff/pkg/profile"
)

// recorded holds the files the real tools wrote, recorded once per test
// binary.
var recorded struct {
	sync.Once
	dir                   string
	callgrind, cpuprofile string
	jfr                   string
	err                   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if recorded.dir != "" {
		os.RemoveAll(recorded.dir)
	}
	os.Exit(code)
}

func toolFiles(t *testing.T) {
	t.Helper()
	recorded.Do(func() {
		if recorded.dir, recorded.err = os.MkdirTemp("", "flamediff-tools"); recorded.err != nil {
			return
		}
		dir := recorded.dir
		errs := make([]error, 3)
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			bin, err := toolprofiles.BuildC(dir)
			if errs[0] = err; err == nil {
				recorded.callgrind, errs[0] = toolprofiles.Callgrind(dir, bin, "run.callgrind", 60000)
			}
		}()
		go func() {
			defer wg.Done()
			recorded.cpuprofile, errs[1] = toolprofiles.CPUProfile(dir, "run.cpuprofile", 6e6)
		}()
		go func() {
			defer wg.Done()
			if errs[2] = toolprofiles.BuildJava(dir); errs[2] == nil {
				recorded.jfr, errs[2] = toolprofiles.JFR(dir, dir, "run.jfr", 2e6)
			}
		}()
		wg.Wait()
		recorded.err = errors.Join(errs...)
	})
	if recorded.err != nil {
		t.Fatal(recorded.err)
	}
}

func parseTool(t *testing.T, file string, o Options) *profile.Profile {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := o.Parse(f, file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// selfAndTotal sums each frame's self (leaf) and inclusive values, keyed by
// key(frame).
func selfAndTotal(p *profile.Profile, key func(profile.Frame) string) (self, total map[string]int64) {
	self, total = map[string]int64{}, map[string]int64{}
	for _, s := range p.Samples {
		self[key(p.Frames[s.Stack[len(s.Stack)-1]])] += s.Value
		seen := map[string]bool{}
		for _, id := range s.Stack {
			if k := key(p.Frames[id]); !seen[k] {
				seen[k] = true
				total[k] += s.Value
			}
		}
	}
	return self, total
}

func annotate(t *testing.T, file string, args ...string) map[string]int64 {
	t.Helper()
	costs, err := toolprofiles.Annotate(file, args...)
	if err != nil {
		t.Fatal(err)
	}
	return costs
}

// Each function's self cost is callgrind_annotate's, and so is the
// inclusive cost of the program's own functions (a tree of calls).
func TestCallgrindAgainstAnnotate(t *testing.T) {
	toolFiles(t)
	p := parseTool(t, recorded.callgrind, Options{})
	if f, _ := detect(readHead(t, recorded.callgrind), "x"); f.Name != Callgrind {
		t.Errorf("detected as %s", f.Name)
	}
	if p.SampleType != "Ir" {
		t.Errorf("sample type %q, want Ir", p.SampleType)
	}
	self, total := selfAndTotal(p, func(f profile.Frame) string { return f.Name })
	want := annotate(t, recorded.callgrind)
	for k, v := range want {
		if self[k] != v {
			t.Errorf("self of %s: %d, callgrind_annotate %d", k, self[k], v)
		}
	}
	for k, v := range self {
		if want[k] != v {
			t.Errorf("self of %s: %d, callgrind_annotate %d", k, v, want[k])
		}
	}
	inclusive := annotate(t, recorded.callgrind, "--inclusive=yes")
	for _, k := range []string{"fast", "slow", "leaf"} {
		if total[k] != inclusive[k] || total[k] == 0 {
			t.Errorf("inclusive of %s: %d, callgrind_annotate %d", k, total[k], inclusive[k])
		}
	}
	// main calls printf, whose callees the loader calls too: their self
	// costs are shared by the largest remainder, a unit per path at most.
	if d := total["main"] - inclusive["main"]; d < -int64(len(p.Samples)) || d > int64(len(p.Samples)) || inclusive["main"] == 0 {
		t.Errorf("inclusive of main: %d, callgrind_annotate %d", total["main"], inclusive["main"])
	}
	for _, f := range p.Frames {
		if f.Name == "slow" && (path.Base(f.File) != "prog.c" || f.Line < toolprofiles.SlowLineC || f.Line > toolprofiles.SlowLineC+3) {
			t.Errorf("slow at %s:%d, want prog.c:%d", f.File, f.Line, toolprofiles.SlowLineC)
		}
	}
}

func readHead(t *testing.T, file string) []byte {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), detectSize)]
}

// The samples of each function are those the profile's samples name (and
// V8's own hit counts of its nodes, give or take the sample V8 counts
// apart), and
// with sample type cpu their time adds up to the profile's.
func TestCPUProfileAgainstHitCounts(t *testing.T) {
	toolFiles(t)
	if f, _ := detect(readHead(t, recorded.cpuprofile), "x"); f.Name != CPUProfile {
		t.Errorf("detected as %s", f.Name)
	}
	want, hits, duration, err := toolprofiles.V8Counts(recorded.cpuprofile)
	if err != nil {
		t.Fatal(err)
	}
	p := parseTool(t, recorded.cpuprofile, Options{})
	self, _ := selfAndTotal(p, func(f profile.Frame) string { return f.Name + " " + f.File })
	if len(want) < 3 || len(self) != len(want) {
		t.Errorf("%d functions with samples %v, V8 counts %d %v", len(self), self, len(want), want)
	}
	for k, v := range want {
		if self[k] != v {
			t.Errorf("%s: %d samples, the profile's samples name its nodes %d times", k, self[k], v)
		}
		if d := self[k] - hits[k]; d < -1 || d > 1 {
			t.Errorf("%s: %d samples, V8's hit count %d", k, self[k], hits[k])
		}
	}
	for _, f := range p.Frames {
		// The script's url whole as its file, its path below the app's
		// root as its module (profile.Identify).
		if f.Name == "slow" && (!strings.HasPrefix(f.File, "file:///") || f.Module != "app.js" || f.Line != toolprofiles.SlowLineJS) {
			t.Errorf("slow: file %q module %q line %d, want file:///.../app.js, app.js, %d", f.File, f.Module, f.Line, toolprofiles.SlowLineJS)
		}
	}
	cpu := parseTool(t, recorded.cpuprofile, Options{SampleType: "cpu"})
	if got, want := cpu.Total(), duration; got <= 0 || got > want {
		t.Errorf("cpu total %d µs, profile lasts %d µs", got, want)
	}
}

// Each method's execution samples and allocated bytes, by the top frame,
// are what the JDK's own jfr print reads, and the samples all that jfr
// summary counts.
func TestJFRAgainstJDK(t *testing.T) {
	toolFiles(t)
	if f, _ := detect(readHead(t, recorded.jfr), "x"); f.Name != JFR {
		t.Errorf("detected as %s", f.Name)
	}
	for _, tc := range []struct{ sampleType, event, weight string }{
		{"", "jdk.ExecutionSample", ""},
		{"alloc", "jdk.ObjectAllocationSample", "weight"},
	} {
		want, events, err := toolprofiles.JFRTopFrames(recorded.jfr, tc.event, tc.weight)
		if err != nil {
			t.Fatal(err)
		}
		p := parseTool(t, recorded.jfr, Options{SampleType: tc.sampleType})
		self, _ := selfAndTotal(p, func(f profile.Frame) string { return f.Name })
		if len(want) < 2 || len(self) != len(want) {
			t.Errorf("%s: %d methods %v, jfr print has %d %v", tc.event, len(self), self, len(want), want)
		}
		for k, v := range want {
			if self[k] != v {
				t.Errorf("%s: %s: %d, jfr print %d", tc.event, k, self[k], v)
			}
		}
		if tc.weight == "" && int64(len(p.Samples)) != events {
			t.Errorf("%d samples, jfr summary counts %d", len(p.Samples), events)
		}
		if !p.Timed() {
			t.Errorf("%s: samples without their time", tc.event)
		}
	}
	p := parseTool(t, recorded.jfr, Options{})
	for _, f := range p.Frames {
		if f.Name == "App.slow" && (f.Module != "" || f.File != "App" || f.Line < toolprofiles.SlowLinesJava[0] || f.Line > toolprofiles.SlowLinesJava[1]) {
			t.Errorf("App.slow: module %q, %s:%d", f.Module, f.File, f.Line)
		}
	}
}
