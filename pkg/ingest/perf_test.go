package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
)

// foldedCounts sums a profile's values per stack of names, joined by ';'.
func foldedCounts(p *profile.Profile) map[string]int64 {
	m := make(map[string]int64)
	for _, s := range p.Samples {
		m[strings.Join(p.Names(s.Stack), ";")] += s.Value
	}
	return m
}

// readFoldedFile reads a reference .folded file into stack -> count.
func readFoldedFile(t *testing.T, path string) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]int64)
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("%s: bad reference line %q", path, line)
		}
		m[line[:i]] += n
	}
	return m
}

func TestPerfMatchesStackcollapse(t *testing.T) {
	inputs, err := filepath.Glob("../../testdata/perf-script/*.perf.txt")
	if err != nil || len(inputs) != 13 {
		t.Fatalf("want the 13 perf captures of testdata/perf-script, found %d (%v)", len(inputs), err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if f, err := detect(data[:min(len(data), detectSize)], in); err != nil || f.Name != Perf {
				t.Errorf("detected %s (%v), want perf", f.Name, err)
			}
			p, err := Parse(bytes.NewReader(data), in, Auto)
			if err != nil {
				t.Fatal(err)
			}
			got := foldedCounts(p)
			want := readFoldedFile(t, strings.TrimSuffix(in, ".perf.txt")+".folded")
			for k, w := range want {
				if got[k] != w {
					t.Errorf("stack %q: got %d, want %d", k, got[k], w)
				}
			}
			for k, g := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected stack %q (%d)", k, g)
				}
			}
			for _, f := range p.Frames[1:] {
				if f.Module == "" && !isComm(p, f.Name) {
					t.Errorf("frame %q has no module", f.Name)
				}
			}
		})
	}
}

// isComm reports whether name is the first frame of some sample.
func isComm(p *profile.Profile, name string) bool {
	for _, s := range p.Samples {
		if p.Frames[s.Stack[0]].Name == name {
			return true
		}
	}
	return false
}

func TestPerfRules(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]int64
	}{
		{"first event type only, period as value",
			"app 1 [000] 1.000001: 5 cycles: \n\t 1 f (/bin/a)\n\napp 1 [000] 1.000002: 9 instructions: \n\t 1 g (/bin/a)\n\napp 1 [000] 1.000003: cycles: \n\t 1 f (/bin/a)\n\n",
			map[string]int64{"app;f": 6}},
		{"open event at end of input is dropped",
			"app 1 1.5: cpu-clock:\n\t 1 f (/bin/a)\n\napp 1 1.6: cpu-clock:\n\t 1 g (/bin/a)\n",
			map[string]int64{"app;f": 1}},
		{"comm with spaces, pid/tid, no stack",
			"V8 WorkerThread 24636/25607 [000] 94564.109216: cycles:\n\n",
			map[string]int64{"V8_WorkerThread": 1}},
		{"one-character comm is not a header", "a 1 cpu-clock:\n\t 1 f (/bin/a)\n\n", nil},
		{"inline chain, offsets, unknown",
			"app 1 cpu-clock:\n\t 1 leaf+0x1f (/bin/a)\n\t 2 outer->mid->inner (/bin/a)\n\t 3 [unknown] (/usr/lib/libc.so)\n\t 4 [unknown] ([unknown])\n\n",
			map[string]int64{"app;[unknown];[libc.so];outer;mid_[i];inner_[i];leaf": 1}},
		{"CRLF and process-name symbols",
			"app 1 cpu-clock:\r\n\t 1 (deleted) (/bin/a)\r\n\t 2 main (/bin/a)\r\n\r\n",
			map[string]int64{"app;main": 1}},
		{"java signatures",
			"java 7 cycles:\n\t 1 Lorg/x/Foo;.call(Lorg/x/Bar;)V (/tmp/perf-7.map)\n\t 2 Interpreter (/tmp/perf-7.map)\n\n",
			map[string]int64{"java;Interpreter;org/x/Foo:.call": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "x.perf", Perf)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("got %v, want no events", foldedCounts(p))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := foldedCounts(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTidySymbol(t *testing.T) {
	tests := []struct {
		sym, module, comm string
		inlined           bool
		want              string
	}{
		{"net/http.(*Client).Do", "/bin/a", "a", false, "net/http.(*Client).Do"},
		{"foo(int, char*)", "/bin/a", "a", false, "foo"},
		{"(anonymous namespace)::f(int)", "/bin/a", "a", false, "(anonymous namespace)::f"},
		{`RegExp:[&<>\"\']`, "/tmp/perf-1.map", "node", false, `RegExp:[&<>\\]`},
		{"a;b", "/bin/a", "a", false, "a:b"},
		{"[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so", "a", false, "[libc.so]"},
		{"[unknown]", "[unknown]", "a", false, "[unknown]"},
		{"Ljava/lang/Thread;::run", "/tmp/perf-9.map", "java", false, "java/lang/Thread:::run"},
		{"Ljava/lang/Thread;::run", "/tmp/perf-9.map", "javac", false, "java/lang/Thread:::run"},
		{"Ljava/lang/Thread;::run", "/tmp/perf-9.map", "node", false, "Ljava/lang/Thread:::run"},
		{"inner", "/bin/a", "a", true, "inner_[i]"},
		{"inner_[i]", "/bin/a", "a", true, "inner_[i]"},
	}
	for _, tc := range tests {
		if got := tidySymbol(tc.sym, tc.module, []byte(tc.comm), tc.inlined); got != tc.want {
			t.Errorf("tidySymbol(%q, %q, %q) = %q, want %q", tc.sym, tc.module, tc.comm, got, tc.want)
		}
	}
}

func TestPerfTimes(t *testing.T) {
	tests := []struct {
		file  string
		timed bool
		// the second kept event's offset from the first, from the file's headers
		second int64
	}{
		{"perf-funcab-cmd-01.perf.txt", true, (28075374530122 - 28075374517811) * 1000},
		{"perf-dd-stacks-01.perf.txt", true, (666709782078 - 666709771979) * 1000},
		{"perf-funcab-pid-01.perf.txt", false, -1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := parseFile(t, "../../testdata/perf-script/"+tc.file)
			if p.Timed() != tc.timed {
				t.Fatalf("Timed() = %v", p.Timed())
			}
			if p.Samples[1].Time != tc.second {
				t.Errorf("second sample at %d ns, want %d", p.Samples[1].Time, tc.second)
			}
			if tc.timed && p.Samples[0].Time != 0 {
				t.Errorf("first sample at %d ns, want 0", p.Samples[0].Time)
			}
		})
	}
}

// What the collapse ignores is counted and reported, or with Strict
// refused; the result is the collapse's either way.
func TestPerfIgnored(t *testing.T) {
	in := "app 1 1.5: cycles:\n\t 1 f (/bin/a)\n\tjunk without a dso\n\n" +
		"stray line\n" +
		"app 1 1.6: instructions:\n\t 1 g (/bin/a)\n\n" +
		"app 1 1.7: cycles:\n\t 1 h (/bin/a)\n"
	var notes []string
	p, err := Options{Format: Perf, Warn: func(s string) { notes = append(notes, s) }}.Parse(strings.NewReader(in), "x.perf")
	if err != nil {
		t.Fatal(err)
	}
	if got := foldedCounts(p); !reflect.DeepEqual(got, map[string]int64{"app;f": 1}) {
		t.Errorf("stacks %v", got)
	}
	want := []string{
		`x.perf: 4 lines ignored, as stackcollapse-perf.pl ignores them (the first: line 3 "\tjunk without a dso")`,
		`x.perf: 1 events other than "cycles" skipped (the collapse keeps the first event type)`,
	}
	if !reflect.DeepEqual(notes, want) {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	for _, tc := range []struct{ in, want string }{
		{in, `x.perf:3: line ignored by the collapse: "\tjunk without a dso"`},
		{"app 1 1.7: cycles:\n\t 1 h (/bin/a)\n", "x.perf:1: event not ended by a blank line (the collapse drops it)"},
	} {
		_, err := Options{Format: Perf, Strict: true}.Parse(strings.NewReader(tc.in), "x.perf")
		if err == nil || err.Error() != tc.want {
			t.Errorf("strict: error %v, want %q", err, tc.want)
		}
	}
}
