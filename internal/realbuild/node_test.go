package realbuild

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// A Node app of real npm packages, pinned: qs (lib/stringify.js,
// lib/parse.js, lib/utils.js, lib/index.js), ms, fast-json-stable-stringify
// and escape-html (each an index.js), and two files of its own that are
// both index.js with a function handle each.
var nodeApp = map[string]string{
	"package.json": `{"name":"shop","version":"1.0.0","private":true,
  "dependencies":{"qs":"6.13.0","ms":"2.1.3","fast-json-stable-stringify":"2.1.0","escape-html":"1.0.3"}}`,
	"app.js": `const routes = require('./routes');
const lib = require('./lib');
let acc = 0;
for (let i = 0; i < 200000; i++) acc += routes.handle(i) + lib.handle(i);
console.log(acc);
`,
	"routes/index.js": `const qs = require('qs');
function handle(i) {
  return qs.stringify({ a: i, b: [1, 2, { c: 'x' + i }] }).length + qs.parse('a=' + i + '&b[c]=d&e[]=1&e[]=2').a.length;
}
exports.handle = handle;
`,
	"lib/index.js": `const stable = require('fast-json-stable-stringify');
const escape = require('escape-html');
const ms = require('ms');
function handle(i) {
  return stable({ x: i, y: [i, i + 1], z: { w: 'q' } }).length + escape('<a href="' + i + '">&</a>').length + (ms((i % 1000) + 's') | 0);
}
exports.handle = handle;
`,
}

// v8Profile is what our own readers take of a V8 .cpuprofile: the nodes
// of its call tree and the node of each sample.
type v8Profile struct {
	Nodes []struct {
		ID        int `json:"id"`
		CallFrame struct {
			FunctionName string `json:"functionName"`
			URL          string `json:"url"`
		} `json:"callFrame"`
		Children []int `json:"children"`
	} `json:"nodes"`
	Samples []int `json:"samples"`
}

func readV8Profile(t *testing.T, file string) v8Profile {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var p v8Profile
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// cpuProfileSelf reads a V8 .cpuprofile with our own code: each sampled
// function's self samples, keyed by name and the file as a package
// manager's layout leaves it alone (the path below the last node_modules/,
// else below root), or the url as given for Node's own code.
func cpuProfileSelf(t *testing.T, file, root string, into map[string]int) {
	t.Helper()
	p := readV8Profile(t, file)
	key := map[int]string{}
	for _, n := range p.Nodes {
		url := strings.TrimPrefix(n.CallFrame.URL, "file://")
		if i := strings.LastIndex(url, "/node_modules/"); i >= 0 {
			url = url[i+len("/node_modules/"):]
		} else {
			url = strings.TrimPrefix(url, root+"/")
		}
		key[n.ID] = n.CallFrame.FunctionName + " " + url
	}
	for _, s := range p.Samples {
		into[key[s]]++
	}
}

// NodeProfile runs the app.js of the directory app under node --cpu-prof,
// which writes its profile to file: a Runner of Node apps.
func NodeProfile(t testing.TB, app, file string) {
	t.Helper()
	c := exec.Command("node", "--cpu-prof", "--cpu-prof-dir="+filepath.Dir(file), "--cpu-prof-name="+filepath.Base(file), "app.js")
	c.Dir = app
	run(t, c)
}

// install runs a package manager's install in dir.
func install(t *testing.T, dir string, cmd ...string) {
	t.Helper()
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(cmd, " "), dir, err, out)
	}
}

// Node: one app installed by npm at one root and by pnpm (its
// node_modules/.pnpm store) at another, run under node --cpu-prof. No two
// source files merge (the functions with self samples, counted in the raw
// profiles by our own reader, are as many as the functions table's rows
// with self time, and the two handle of routes/index.js and lib/index.js
// are rows of their own), and the A/A across the two roots has no culprit
// and under 5% of its samples in one-sided stacks (start-up's module
// resolution differs between the two layouts).
func TestNodeAppTwoPackageManagers(t *testing.T) {
	roots := map[string]string{
		"npm":  filepath.Join(Write(t, nodeApp), ""),
		"pnpm": filepath.Join(Write(t, nodeApp), ""),
	}
	install(t, roots["npm"], "npm", "install", "--no-audit", "--no-fund", "--loglevel=error")
	install(t, roots["pnpm"], "npx", "--yes", "pnpm@9.15.0", "install", "--silent")
	if _, err := os.Stat(filepath.Join(roots["pnpm"], "node_modules", ".pnpm")); err != nil {
		t.Fatalf("pnpm left no store in node_modules: %v", err)
	}
	files := RunInterleaved(t, t.TempDir(), runsPerSide(), roots, NodeProfile, ".cpuprofile")
	for _, side := range []string{"npm", "pnpm"} {
		raw := map[string]int{}
		for _, f := range files[side] {
			cpuProfileSelf(t, f, roots[side], raw)
		}
		js, _ := Flamediff(t, append([]string{"query", "--type", "functions", "--output", "json", "--head"}, files[side]...)...)
		rows := Rows(t, js, "functions")
		titles := map[string]bool{}
		withSelf := 0
		for _, r := range rows {
			titles[fmt.Sprint(r["function"])] = true
			if r["self"].(float64) > 0 {
				withSelf++
			}
		}
		sampled := 0
		for _, n := range raw {
			if n > 0 {
				sampled++
			}
		}
		t.Logf("%s: %d functions with self samples in the raw profiles, %d rows with self time, %d rows", side, sampled, withSelf, len(rows))
		if withSelf != sampled {
			t.Errorf("%s: %d functions with self samples in the raw profiles, %d rows with self time", side, sampled, withSelf)
		}
		for _, want := range []string{"handle (routes/index.js)", "handle (lib/index.js)"} {
			if !titles[want] {
				t.Errorf("%s: no row %q among %d rows", side, want, len(rows))
			}
		}
	}
	base, head := files["npm"], files["pnpm"]
	folded, _ := Flamediff(t, DiffArgs(base, head, "--output", "folded")...)
	// pnpm's store resolves each require through its symlinks (Node's
	// realpathSync, toRealPath): start-up does other work for real, 1.6% of
	// the samples in stacks of one side here, against 3.9% for a third of
	// the work.
	share := oneSided(t, folded)
	t.Logf("A/A npm against pnpm: %.2f%% of the samples in one-sided stacks", 100*share)
	if share > 0.05 {
		t.Errorf("%.1f%% of the samples are in stacks of one side only; one app at two roots has the same stacks:\n%s", 100*share, alone(folded))
	}
	if v := DiffVerdict(t, base, head, "--alpha", "0.01"); v.Result == verdict.Fail || len(Culprits(v)) > 0 {
		t.Errorf("one app installed by npm and by pnpm:\n%s", Describe(v))
	}
}
