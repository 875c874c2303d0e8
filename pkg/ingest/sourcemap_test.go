package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/profile"
)

// bundledApp is an app of three source files, two classes with a table
// method each, a named function and anonymous callbacks.
var bundledApp = map[string]string{
	"app/users.js": `export class Users {
  constructor(n) { this.n = n }
  table() { let s = 0; for (let i = 0; i < this.n; i++) s += Math.sqrt(i); return s }
}
`,
	"app/orders.js": `export class Orders {
  constructor(n) { this.n = n }
  table() { let s = 0; for (let i = 0; i < this.n; i++) s += Math.cbrt(i) * Math.sin(i); return s }
}

export function computeTotals(rows) {
  return rows.map((r) => Math.sqrt(r) * 2).filter(function (x) { return Math.floor(x) % 3 }).reduce((a, b) => a + Math.log1p(b), 0)
}
`,
	"app/main.js": `import { Users } from './users.js'
import { Orders, computeTotals } from './orders.js'
const rows = Array.from({ length: 20000 }, (_, i) => i)
const spin = () => {
  let t = 0
  for (let k = 0; k < 150; k++) { t += new Users(20000).table() + new Orders(20000).table() + computeTotals(rows) }
  return t
}
console.log(spin())
`,
}

// bundle writes files into a new directory and bundles app/main.js there
// with esbuild (minified, source map, content-hashed name) into dist/;
// it returns the directory and the bundle's path.
func bundle(t *testing.T, files map[string]string, platform string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := exec.Command(testkit.Esbuild(t), "app/main.js", "--bundle", "--minify", "--sourcemap",
		"--entry-names=[name]-[hash]", "--outdir=dist", "--platform="+platform, "--log-level=warning")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	js, _ := filepath.Glob(filepath.Join(dir, "dist", "main-*.js"))
	if len(js) != 1 {
		t.Fatalf("esbuild wrote %v", js)
	}
	return dir, js[0]
}

// The decoder reads esbuild's map as @jridgewell/trace-mapping (the
// decoder of Babel, Jest and Vite) does: every segment of every line.
func TestSourceMapEsbuildMatchesTraceMapping(t *testing.T) {
	_, js := bundle(t, bundledApp, "node")
	data, err := os.ReadFile(js + ".map")
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseSourceMap(data, "file://"+js)
	if err != nil {
		t.Fatal(err)
	}
	script := `const { TraceMap, decodedMappings } = require(process.argv[1]);
console.log(JSON.stringify(decodedMappings(new TraceMap(require('fs').readFileSync(process.argv[2], 'utf8')))));`
	out, err := exec.Command("node", "-e", script, testkit.NodeModule(t, "@jridgewell/trace-mapping"), js+".map").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want [][][]int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	var got [][][]int
	segments := 0
	for i := range m.lines {
		var l [][]int
		for _, s := range m.line(int64(i)) {
			seg := []int{int(s.col)}
			if s.source >= 0 {
				seg = append(seg, int(s.source), int(s.line), int(s.column))
			}
			if s.name >= 0 {
				seg = append(seg, int(s.name))
			}
			l = append(l, seg)
			segments++
		}
		got = append(got, l)
	}
	for len(got) > 0 && len(got[len(got)-1]) == 0 { // trace-mapping drops trailing empty lines
		got = got[:len(got)-1]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || segments < 100 {
		t.Errorf("%d segments decoded:\n%v\ntrace-mapping:\n%v", segments, got, want)
	}
	if want := filepath.Join(filepath.Dir(filepath.Dir(js)), "app", "orders.js"); !slices.Contains(m.sources, "file://"+want) {
		t.Errorf("sources %q, want file://%s among them (../app/orders.js beside dist/)", m.sources, want)
	}
}

// Node runs the bundle under --cpu-prof; read with its map, its frames
// are the original sources' functions: the two table methods apart by
// source, the minified computeTotals by its name, its callbacks numbered
// apart, lines the sources', no name the minifier made.
func TestSourceMapCPUProfile(t *testing.T) {
	dir, js := bundle(t, bundledApp, "node")
	c := exec.Command("node", "--cpu-prof", "--cpu-prof-interval=200", "--cpu-prof-dir=prof", "--cpu-prof-name=run.cpuprofile", js)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "prof", "run.cpuprofile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var asked []string
	o := Options{SourceMaps: func(url string) ([]byte, error) {
		asked = append(asked, url)
		if url != "file://"+js {
			return nil, nil
		}
		return os.ReadFile(js + ".map")
	}}
	p, err := o.Parse(f, "run.cpuprofile")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(asked); n != len(slices.Compact(slices.Sorted(slices.Values(asked)))) {
		t.Errorf("maps asked for more than once: %q", asked)
	}
	functions := map[string]int64{}
	for _, fr := range p.Frames {
		id := profile.FrameIdentity(fr.Name, fr.Module)
		functions[id.Name+" "+id.Module] = fr.Line
	}
	for fn, line := range map[string]int64{"table app/users.js": 3, "table app/orders.js": 3, "computeTotals app/orders.js": 6, "spin app/main.js": 4} {
		if got, ok := functions[fn]; !ok || got != line {
			t.Errorf("no function %q at line %d (%d): %v", fn, line, got, functions)
		}
	}
	anonymous := 0
	for fn := range functions {
		if strings.HasPrefix(fn, "(anonymous #") && strings.HasSuffix(fn, " app/orders.js") {
			anonymous++
		}
		name, module, _ := strings.Cut(fn, " app/")
		if module != "" && !strings.HasPrefix(name, "(anonymous #") && !slices.Contains([]string{"table", "constructor", "computeTotals", "spin"}, name) {
			t.Errorf("%q: no name of the sources (a minified one?)", fn)
		}
	}
	if anonymous < 2 {
		t.Errorf("%d numbered anonymous functions of app/orders.js, want its callbacks apart: %v", anonymous, functions)
	}
}

// A hostile map is an error, never a panic nor a huge allocation.
func TestSourceMapHostile(t *testing.T) {
	for name, text := range map[string]string{
		"not JSON":        `{"version":3,`,
		"version 2":       `{"version":2,"sources":["a.js"],"mappings":"AAAA"}`,
		"index map":       `{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{}}]}`,
		"bad digit":       `{"version":3,"sources":["a.js"],"mappings":"AA!A"}`,
		"cut VLQ":         `{"version":3,"sources":["a.js"],"mappings":"AAAg"}`,
		"past 32 bits":    `{"version":3,"sources":["a.js"],"mappings":"AAAggggggggggggggggA"}`,
		"unknown source":  `{"version":3,"sources":["a.js"],"mappings":"ACAA"}`,
		"negative source": `{"version":3,"sources":["a.js"],"mappings":"ADAA"}`,
		"unknown name":    `{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAAA"}`,
		"negative line":   `{"version":3,"sources":["a.js"],"mappings":"AADA"}`,
		"negative column": `{"version":3,"sources":["a.js"],"mappings":"D"}`,
		"two fields":      `{"version":3,"sources":["a.js"],"mappings":"AA"}`,
		"six fields":      `{"version":3,"sources":["a.js"],"names":["x"],"mappings":"AAAAAA"}`,
		"line overflow":   `{"version":3,"sources":["a.js"],"mappings":"AA+/////D;AA+/////D"}`,
		"huge mappings":   `{"version":3,"sources":["a.js"],"mappings":"` + strings.Repeat(";", maxMappings+1) + `"}`,
	} {
		if m, err := parseSourceMap([]byte(text), "http://h/a.js"); err == nil {
			t.Errorf("%s: no error, %d lines", name, len(m.lines))
		}
	}
	m, err := parseSourceMap([]byte(`{"version":3,"sources":[null,"a.js"],"names":["x"],"mappings":";;A,CCAAA;;"}`), "http://h/d/b.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.frame("f", 0, 0); ok {
		t.Error("a line without segments mapped")
	}
	if _, ok := m.frame("f", 2, 0); ok {
		t.Error("a segment without a source mapped")
	}
	if f, ok := m.frame("f", 2, 5); !ok || f.Module != "http://h/d/a.js" || f.Line != 1 || f.Name != "f" {
		t.Errorf("frame %+v, %v", f, ok)
	}
	if _, ok := m.frame("f", 1<<40, -1); ok {
		t.Error("a position outside the map mapped")
	}
}
