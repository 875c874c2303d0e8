package ingest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// speedscopeSample has a sampled profile (in seconds, as py-spy writes
// them) and an evented one (in milliseconds) over shared frames.
const speedscopeSample = `{"$schema": "https://www.speedscope.app/file-format-schema.json",
 "shared": {"frames": [{"name": "main", "file": "/srv/app/main.py", "line": 1},
   {"name": "work", "file": "/srv/app/work.py", "line": 10}, {"name": "io"}]},
 "profiles": [
  {"type": "sampled", "name": "MainThread", "unit": "seconds", "startValue": 0, "endValue": 0.03,
   "samples": [[0, 1], [0, 1], [0, 2]], "weights": [0.01, 0.01, 0.005]},
  {"type": "evented", "name": "Worker", "unit": "milliseconds", "startValue": 100, "endValue": 110,
   "events": [{"type": "O", "frame": 0, "at": 100}, {"type": "O", "frame": 1, "at": 102},
     {"type": "C", "frame": 1, "at": 106}, {"type": "C", "frame": 0, "at": 110}]}],
 "name": "sample", "exporter": "py-spy@0.3.14"}`

// Sampled and evented profiles of one file add up in one run, in
// nanoseconds, with the file's positions.
func TestSpeedscope(t *testing.T) {
	p, err := Parse(strings.NewReader(speedscopeSample), "x.speedscope.json", Auto)
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType != "time" || p.Unit != "nanoseconds" {
		t.Errorf("sample type %s/%s", p.SampleType, p.Unit)
	}
	want := map[string]int64{"main;work": 2e7 + 4e6, "main;io": 5e6, "main": 2e6 + 4e6}
	if got := foldedCounts(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	for _, f := range p.Frames {
		if f.Name == "work" && (f.File != "/srv/app/work.py" || f.Line != 10 || f.Module != "work.py") {
			t.Errorf("work: %+v", f)
		}
	}
}

// Hostile and broken files of the new formats are refused with an error
// naming what is wrong, within the limits (no hang, no crash).
func TestHostileFormats(t *testing.T) {
	node := func(id int, fn string, children ...int) string {
		c := make([]string, len(children))
		for i, id := range children {
			c[i] = fmt.Sprint(id)
		}
		return fmt.Sprintf(`{"id":%d,"callFrame":{"functionName":%q,"url":"a.js","lineNumber":1},"children":[%s]}`, id, fn, strings.Join(c, ","))
	}
	cpu := func(nodes string, samples string) string {
		return `{"nodes":[` + nodes + `],"startTime":0,"endTime":9,"samples":` + samples + `,"timeDeltas":[]}`
	}
	// A chain of levels of two functions, each calling both of the next
	// level: 2^40 call paths.
	var diamond strings.Builder
	diamond.WriteString("# callgrind format\nevents: Ir\nfl=a.c\n")
	for i := range 40 {
		fmt.Fprintf(&diamond, "fn=f%d_0\n1 1\ncfn=f%d_0\ncalls=1 1\n1 10\ncfn=f%d_1\ncalls=1 1\n1 10\n", i, i+1, i+1)
		fmt.Fprintf(&diamond, "fn=f%d_1\n1 1\ncfn=f%d_0\ncalls=1 1\n1 10\ncfn=f%d_1\ncalls=1 1\n1 10\n", i, i+1, i+1)
	}
	jfr := testkit.ReadTestdata(t, "formats/app.jfr")
	bigChunk := bytes.Clone(jfr[:100])
	copy(bigChunk[8:16], []byte{0x7f, 0, 0, 0, 0, 0, 0, 0})
	pastEnd := bytes.Clone(jfr[:100]) // 256 MiB said, 100 bytes held: what it holds is read
	copy(pastEnd[8:16], []byte{0, 0, 0, 0, 0x10, 0, 0, 0})
	headerOnly := bytes.Clone(jfr[:68])
	copy(headerOnly[8:16], []byte{0, 0, 0, 0, 0, 0, 0, 68}) // a chunk of its header alone
	tests := []struct {
		name, in string
		format   Format
		want     string
	}{
		{"cpuprofile cycle", cpu(node(1, "(root)", 2)+","+node(2, "a", 3)+","+node(3, "b", 2), "[3]"), CPUProfile, "two parents"},
		{"cpuprofile self-child", cpu(node(1, "a", 1), "[1]"), CPUProfile, "two parents"},
		{"cpuprofile parent cycle", cpu(`{"id":1,"callFrame":{"functionName":"a"},"parent":2},{"id":2,"callFrame":{"functionName":"b"},"parent":1}`, "[1]"), CPUProfile, "cycle"},
		{"cpuprofile unknown sample node", cpu(node(1, "a"), "[7]"), CPUProfile, "unknown node 7"},
		{"cpuprofile unknown child", cpu(node(1, "a", 9), "[1]"), CPUProfile, "unknown child 9"},
		{"cpuprofile deltas", `{"nodes":[` + node(1, "a") + `],"samples":[1,1],"timeDeltas":[1]}`, CPUProfile, "2 samples but 1 time deltas"},
		{"deep JSON", `{"nodes":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `,"callFrame":1}`, Auto, "exceeded max depth"},
		{"truncated JSON", cpu(node(1, "a"), "[1]")[:30], CPUProfile, "bad JSON"},
		{"unknown JSON", `{"events": []}`, Auto, "JSON that is no V8 CPU profile, speedscope file, trace events or Gecko profile"},
		{"trace without events", `{"traceEvents": []}`, Auto, "no trace events"},
		{"trace with only a profile chunk", `{"traceEvents": [{"ph": "P", "name": "ProfileChunk", "args": {"data": {"cpuProfile": {"nodes": [{"callFrame": {}}]}}}}]}`,
			Auto, "no duration events (X, B/E, b/e): read its CPU profile with sample type samples or cpu"},
		{"trace async without id", `[{"ph":"b","name":"a","cat":"c","pid":1,"tid":1,"ts":1},{"ph":"e","name":"a","cat":"c","pid":1,"tid":1,"ts":3}]`,
			Auto, `event 1: an async b event ("a") with no id`},
		{"trace negative dur", `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":-1}]`, Auto, "event 1: dur -1 µs out of range"},
		{"trace huge ts", `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e300,"dur":1}]`, Auto, "event 1: ts 1e+300 µs out of range"},
		{"trace deep nesting", "[" + strings.Repeat(`{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},`, 1001) + strings.Repeat(`{"ph":"E","pid":1,"tid":1,"ts":2},`, 1001),
			TraceEvent, "events nest deeper than 1000 on thread 1 of process 1"},
		{"speedscope frame index", strings.Replace(speedscopeSample, "[0, 2]", "[0, 99]", 1), Speedscope, "frame 99 of 3 frames"},
		{"speedscope unbalanced", strings.Replace(speedscopeSample, `"C", "frame": 1`, `"C", "frame": 0`, 1), Speedscope, "not the innermost open"},
		{"speedscope negative weight", strings.Replace(speedscopeSample, "0.005", "-1", 1), Speedscope, "bad weight"},
		{"callgrind path explosion", diamond.String(), Callgrind, "more than 1048576 call paths"},
		{"callgrind undefined name id", "# callgrind format\nevents: Ir\nfn=(3)\n1 1\n", Callgrind, "name id (3) used before it is defined"},
		{"callgrind cost before events", "# callgrind format\nfn=main\n1 1\n", Callgrind, "cost line before fn= and events:"},
		{"callgrind overflow", "# callgrind format\nevents: Ir\nfn=a\n1 9223372036854775807\n2 1\n", Callgrind, "past the int64 maximum"},
		{"jfr truncated", string(jfr[:len(jfr)/2]), Auto, "chunk size"},
		{"jfr huge chunk", string(bigChunk), JFR, "chunk size 9151314442816847872: over 1073741824 bytes"},
		{"jfr chunk past the end", string(pastEnd), JFR, "offset 0: chunk size 268435456: 100 bytes left"},
		{"jfr header only", string(headerOnly), JFR, "outside the chunk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "x", tc.format)
			if err == nil || !strings.Contains(err.Error(), tc.want) || p != nil {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
