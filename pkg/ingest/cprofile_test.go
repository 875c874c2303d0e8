package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
)

// cprofileProgram is a script and two packages that both define work().
var cprofileProgram = map[string]string{
	"pkga/__init__.py": "def work(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n",
	"pkgb/__init__.py": "def work(n):\n    return sum(i * i for i in range(n))\n",
	"main.py": `import time
import pkga, pkgb

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def ping(n):
    return pong(n - 1) if n > 0 else 0

def pong(n):
    return ping(n - 1) if n > 0 else 0

def main():
    fib(18)
    ping(40)
    pkga.work(200000)
    pkgb.work(200000)
    time.sleep(0.02)

main()
`,
}

// pstatsSnippet prints each function's own time and their sum as Python's
// pstats reads them.
const pstatsSnippet = `import json, pstats, sys
stats = pstats.Stats(sys.argv[1]).stats
print(json.dumps({"funcs": [[f[0], f[1], f[2], v[2]] for f, v in stats.items()], "total": sum(v[2] for v in stats.values())}))
`

// recordCProfile runs cprofileProgram under python3 -m cProfile and
// returns the stats file.
func recordCProfile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range cprofileProgram {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("python3", "-m", "cProfile", "-o", "run.prof", "main.py")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3 -m cProfile: %v: %s", err, out)
	}
	return filepath.Join(dir, "run.prof")
}

// A real cProfile recording: each function's own time is what Python's
// pstats reads, to the nanosecond, and the profile's total their sum; the
// two packages' work() are two frames; built-ins are named inside <>.
// Functions are keyed by Flamediff's identity, name and module: two
// classes' __init__ in one file are one function, as in every format.
func TestCProfileAgainstPstats(t *testing.T) {
	file := recordCProfile(t)
	out, err := exec.Command("python3", "-c", pstatsSnippet, file).Output()
	if err != nil {
		t.Fatalf("pstats: %v", err)
	}
	var want struct {
		Funcs [][4]any
		Total float64
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if f, _ := detect(readHead(t, file), "x"); f.Name != CProfile {
		t.Errorf("detected as %s", f.Name)
	}
	p := parseTool(t, file, Options{})
	if p.SampleType != "cpu" || p.Unit != "nanoseconds" || p.Timed() {
		t.Errorf("sample type %s/%s, timed %v", p.SampleType, p.Unit, p.Timed())
	}
	key := func(f profile.Frame) string { return f.Name + " " + profile.ModuleIdentity(f.Module) }
	self, total := selfAndTotal(p, key)
	pstats := map[string]int64{}
	var sum int64
	for _, fn := range want.Funcs {
		ns := int64(math.Round(fn[3].(float64) * 1e9))
		pstats[key(cprofileFrame(cpFunc{fn[0].(string), int64(fn[1].(float64)), fn[2].(string)}))] += ns
		sum += ns
	}
	for k, ns := range pstats {
		if self[k] != ns {
			t.Errorf("%s: own time %d ns, pstats %d", k, self[k], ns)
		}
	}
	for k, ns := range self {
		if _, ok := pstats[k]; !ok {
			t.Errorf("%s: own time %d ns, not in pstats", k, ns)
		}
	}
	t.Logf("%d functions in pstats, %d by identity, %d ns", len(want.Funcs), len(pstats), sum)
	if p.Total() != sum || math.Abs(float64(sum)-want.Total*1e9) > float64(len(want.Funcs)) {
		t.Errorf("total %d ns, pstats' own times %d ns (%.9f s)", p.Total(), sum, want.Total)
	}
	works := map[string]bool{}
	for _, f := range p.Frames {
		if f.Name == "work" {
			works[profile.ModuleIdentity(f.Module)] = f.Line == 1 && strings.HasSuffix(f.File, "/"+f.Module) // the file whole, the module below the app's root
		}
	}
	if !works["pkga/__init__.py"] || !works["pkgb/__init__.py"] {
		t.Errorf("the packages' work(): %v", works)
	}
	// main's calls: its paths reach sleep and both works; recursion is
	// not followed, so fib's own time sits under main alone.
	folded := foldedCounts(p)
	for _, stack := range []string{"main;built-in method time.sleep", "main;work", "main;fib", "main;ping;pong"} {
		var found bool
		for k := range folded {
			found = found || strings.HasSuffix(k, stack)
		}
		if !found {
			t.Errorf("no stack ending %s", stack)
		}
	}
	if total["fib main.py"] != self["fib main.py"] || self["fib main.py"] == 0 {
		t.Errorf("fib: total %d, self %d", total["fib main.py"], self["fib main.py"])
	}
}

// marshalStats writes a pstats dict by hand: each function's (file, line,
// name), times and callers.
type marshalStats struct{ bytes.Buffer }

func (m *marshalStats) str(s string) {
	m.WriteByte('z')
	m.WriteByte(byte(len(s)))
	m.WriteString(s)
}

func (m *marshalStats) key(file string, line int32, name string) {
	m.WriteString(")\x03")
	m.str(file)
	m.int(line)
	m.str(name)
}

func (m *marshalStats) int(v int32) {
	m.WriteByte('i')
	_ = binary.Write(m, binary.LittleEndian, v)
}

func (m *marshalStats) float(v float64) {
	m.WriteByte('g')
	_ = binary.Write(m, binary.LittleEndian, math.Float64bits(v))
}

// entry writes a function's stats with one caller, or none.
func (m *marshalStats) entry(name string, tt, ct float64, caller string, edge float64) {
	var callers []string
	if caller != "" {
		callers = []string{caller}
	}
	m.called(name, tt, ct, edge, callers...)
}

// called writes a function's stats with callers, each calls of edge
// seconds.
func (m *marshalStats) called(name string, tt, ct, edge float64, callers ...string) {
	m.key("a.py", 1, name)
	m.WriteString(")\x05")
	m.int(1)
	m.int(1)
	m.float(tt)
	m.float(ct)
	m.WriteByte('{')
	for _, caller := range callers {
		m.key("a.py", 1, caller)
		m.WriteString(")\x04")
		m.int(1)
		m.int(1)
		m.float(edge)
		m.float(edge)
	}
	m.WriteByte('0')
}

// diamondStats is a chain of chain functions, then levels of two
// functions each called by both of the level before: 2^levels paths.
func diamondStats(chain, levels int) string {
	var m marshalStats
	m.WriteByte('{')
	m.called("c0", 0.001, 1, 0)
	for i := 1; i < chain; i++ {
		m.called(fmt.Sprint("c", i), 0.001, 0.001, 0.001, fmt.Sprint("c", i-1))
	}
	prev := []string{fmt.Sprint("c", chain-1)}
	for l := range levels {
		next := []string{fmt.Sprint("d", l, "_0"), fmt.Sprint("d", l, "_1")}
		for _, f := range next {
			m.called(f, 0.001, 0.002, 0.001, prev...)
		}
		prev = next
	}
	m.WriteByte('0')
	return m.String()
}

// A hand-written pstats file: main calls f and g; g is also entered
// from no caller (as exec is, by the script and by imports).
func TestCProfileCallGraph(t *testing.T) {
	var m marshalStats
	m.WriteByte('{')
	m.entry("main", 0.001, 0.004, "", 0)
	m.entry("f", 0.002, 0.002, "main", 0.002)
	m.entry("g", 0.003, 0.004, "main", 0.001)
	m.WriteByte('0')
	p, err := Parse(bytes.NewReader(m.Bytes()), "x.prof", Auto)
	if err != nil {
		t.Fatal(err)
	}
	// g's 3 ms: a quarter of what entered it came from main.
	want := map[string]int64{"main": 1e6, "main;f": 2e6, "main;g": 750000, "g": 2250000}
	if got := foldedCounts(p); len(got) != len(want) {
		t.Errorf("stacks %v, want %v", got, want)
	} else {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("stacks %v, want %v", got, want)
			}
		}
	}
}

// A caller with no stats of its own (no pstats writer makes one) is a
// function of no time: its callee is a path of its own.
func TestCProfileCallerWithoutStats(t *testing.T) {
	var m marshalStats
	m.WriteByte('{')
	m.entry("f", 0.002, 0.002, "ghost", 0.002)
	m.WriteByte('0')
	p, err := Parse(bytes.NewReader(m.Bytes()), "x.prof", CProfile)
	if err != nil {
		t.Fatal(err)
	}
	if got := foldedCounts(p); len(got) != 1 || got["f"] != 2e6 {
		t.Errorf("stacks %v, want f 2000000", got)
	}
}

// Broken and hostile pstats files are errors with their offset, no panic.
func TestHostileCProfile(t *testing.T) {
	var good marshalStats
	good.WriteByte('{')
	good.entry("main", 0.001, 0.001, "", 0)
	good.WriteByte('0')
	g := good.String()
	deep := "{" + strings.Repeat(")\x01", 50) + "N"
	var noStats marshalStats
	noStats.WriteByte('{')
	noStats.key("a.py", 1, "main")
	noStats.WriteString("N0")
	tests := []struct{ name, in, want string }{
		{"truncated", g[:len(g)/2], "offset 21: length 5 out of range: 4 bytes left"},
		{"no end", g[:len(g)-1], "offset 52: truncated marshal data: 1 bytes wanted, 0 left"},
		{"trailing", g + "N", "1 bytes after the pstats dict"},
		{"deep", deep, "nest deeper than 8"},
		{"huge tuple", "{(\xff\xff\xff\x7f", "offset 2: length 2147483647 out of range"},
		{"negative tuple", "{(\xff\xff\xff\xff", "length -1 out of range"},
		{"huge string", "{)\x03a\xff\xff\xff\x7f", "length 2147483647 out of range"},
		{"bad ref", "{)\x03r\x05\x00\x00\x00", "offset 3: reference 5 to no object read before"},
		{"self ref", "\xfb)\x03r\x00\x00\x00\x00", "reference 0 to no object read before"},
		{"code object", "{)\x03cNN", "marshal type 'c' (0x63)"},
		{"key no tuple", "{NN0", "a function key is no (file, line, name)"},
		{"wrong stats", noStats.String(), "offset 20: a function's stats are no (cc, nc, tt, ct, callers)"},
		{"negative time", strings.Replace(g, "g\xfc\xa9\xf1\xd2MbP?", "g\xfc\xa9\xf1\xd2MbP\xbf", 1), "time -0.001 s out of range"},
		{"NaN", strings.Replace(g, "g\xfc\xa9\xf1\xd2MbP?", "g\x01\x00\x00\x00\x00\x00\xf8\x7f", 1), "out of range"},
		{"huge long", "{)\x03l\x06\x00\x00\x00", "integer of 6 15-bit digits"},
		{"no own time", strings.ReplaceAll(g, "g\xfc\xa9\xf1\xd2MbP?", "g\x00\x00\x00\x00\x00\x00\x00\x00"), "no own time"},
		{"twice", g[:len(g)-1] + g[1:], "listed twice"},
		{"path explosion", diamondStats(1, 40), "more than 1048576 call paths"},
		{"deep paths", diamondStats(230, 19), "call paths of more than 67108864 frames"},
	}
	if !strings.Contains(g, "g\xfc\xa9\xf1\xd2MbP?") {
		t.Fatal("0.001 is not where the cases replace it")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "x", CProfile)
			if err == nil || !strings.Contains(err.Error(), tc.want) || p != nil {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	// References repeat a big tuple without its bytes: counted all the same.
	var refs bytes.Buffer
	refs.WriteString("{\xa8\x00\x00\x01\x00" + strings.Repeat("N", 1<<16))
	for range 1 << 10 {
		refs.WriteString(")\x03r\x00\x00\x00\x00r\x00\x00\x00\x00r\x00\x00\x00\x00")
	}
	if _, err := Parse(&refs, "x", CProfile); err == nil || !strings.Contains(err.Error(), "more than 33554432 marshal objects") {
		t.Errorf("references: %v", err)
	}
}
