package ingest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strconv"
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
		if recorded.callgrind, recorded.err = toolprofiles.Callgrind(recorded.dir, 60000); recorded.err != nil {
			return
		}
		recorded.cpuprofile, recorded.err = toolprofiles.CPUProfile(recorded.dir, 6e6)
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

// annotateLine is a function's line of callgrind_annotate's output:
// "4,400,150 (97.22%)  prog.c:leaf [/tmp/x/prog]".
var annotateLine = regexp.MustCompile(`^\s*([\d,]+) \(\s*[\d.]+%\)\s+[^:]*:(.*?)(?: \[(.*)\])?$`)

// annotate runs callgrind_annotate and returns each function's cost by
// name. (It keys a function by file, function and object, but names the
// file of inlined code and leaves the object out there, so only the name
// is a key both sides share.)
func annotate(t *testing.T, file string, args ...string) map[string]int64 {
	t.Helper()
	out, err := exec.Command("callgrind_annotate", append(args, "--threshold=100", "--auto=no", file)...).Output()
	if err != nil {
		t.Fatalf("callgrind_annotate: %v", err)
	}
	costs := map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		m := annotateLine.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, "PROGRAM TOTALS") || strings.Contains(line, "events annotated") {
			continue
		}
		v, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		costs[m[2]] += v
	}
	if len(costs) < 10 {
		t.Fatalf("callgrind_annotate listed %d functions:\n%s", len(costs), out)
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
		if f.Name == "slow" && (path.Base(f.File) != "prog.c" || f.Line != 8) {
			t.Errorf("slow at %s:%d, want prog.c:8", f.File, f.Line)
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

// The samples of each function are V8's own hit counts of its nodes, and
// with sample type cpu their time adds up to the profile's.
func TestCPUProfileAgainstHitCounts(t *testing.T) {
	toolFiles(t)
	if f, _ := detect(readHead(t, recorded.cpuprofile), "x"); f.Name != CPUProfile {
		t.Errorf("detected as %s", f.Name)
	}
	var raw struct {
		Nodes []struct {
			ID        int64
			CallFrame struct {
				FunctionName, URL string
			}
			HitCount int64
		}
		StartTime, EndTime int64
		Samples            []int64
	}
	b, _ := os.ReadFile(recorded.cpuprofile)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, n := range raw.Nodes {
		fn := n.CallFrame.FunctionName
		if fn == "" {
			fn = "(anonymous)"
		}
		// V8 counts every sample in its node's hit count but the one
		// taken when profiling starts.
		if n.ID == raw.Samples[0] {
			n.HitCount++
		}
		if n.HitCount > 0 {
			want[fn+" "+n.CallFrame.URL] += n.HitCount
		}
	}
	p := parseTool(t, recorded.cpuprofile, Options{})
	self, _ := selfAndTotal(p, func(f profile.Frame) string { return f.Name + " " + f.File })
	if len(want) < 3 || len(self) != len(want) {
		t.Errorf("%d functions with samples %v, V8 counts %d %v", len(self), self, len(want), want)
	}
	for k, v := range want {
		if self[k] != v {
			t.Errorf("%s: %d samples, V8's hit count %d", k, self[k], v)
		}
	}
	for _, f := range p.Frames {
		if f.Name == "slow" && (f.Module != "app.js" || f.Line != 3) {
			t.Errorf("slow: module %q line %d, want app.js:3", f.Module, f.Line)
		}
	}
	cpu := parseTool(t, recorded.cpuprofile, Options{SampleType: "cpu"})
	if got, want := cpu.Total(), raw.EndTime-raw.StartTime; got <= 0 || got > want {
		t.Errorf("cpu total %d µs, profile lasts %d µs", got, want)
	}
}
