package realbuild

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/toolprofiles"
)

// webApp is a web page's app of five source files, bundled by esbuild:
// two classes with a table method each (app/users.js, app/orders.js),
// anonymous callbacks in app/stats.js and app/format.js, and the npm
// library escape-html, whose escapeHtml users.js calls per row. version
// is escape-html's, banner the text of app/banner.js (a change no
// function's cost sees, which gives the bundle another hash).
func webApp(version, banner string) map[string]string {
	return map[string]string{
		"package.json": `{"name":"shop-web","version":"1.0.0","private":true,"dependencies":{"escape-html":"` + version + `"}}`,
		"index.html":   "<!doctype html><html><body><script src=\"BUNDLE\"></script></body></html>\n",
		"app/banner.js": `export const banner = '` + banner + `'
`,
		"app/users.js": `import escapeHtml from 'escape-html'

export class Users {
  constructor(rows) { this.rows = rows }
  table() {
    let html = ''
    for (const r of this.rows) html += '<tr><td>' + escapeHtml(r.name) + '</td><td>' + escapeHtml(r.city) + '</td></tr>'
    return html.length
  }
}
`,
		"app/orders.js": `export class Orders {
  constructor(rows) { this.rows = rows }
  table() {
    let s = 0
    for (const r of this.rows) { for (let k = 0; k < 24; k++) s += Math.sqrt(r.id * k + 1) }
    return s
  }
}
`,
		"app/stats.js": `export const summarize = (rows) => rows
  .map((r) => r.id * 1.5)
  .filter(function (x) { return Math.floor(x) % 7 !== 0 })
  .reduce((a, b) => a + Math.log1p(b), 0)
`,
		"app/format.js": `export function formatAll(rows) {
  return rows.map((r) => r.name.toUpperCase()).map((s) => s.length * 3).reduce((a, b) => a + b, 0)
}
`,
		"app/main.js": `import { Users } from './users.js'
import { Orders } from './orders.js'
import { summarize } from './stats.js'
import { formatAll } from './format.js'
import { banner } from './banner.js'

const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: 'customer number ' + i + ' of the shop', city: 'city of ' + (i % 97) }))

window.work = (n) => {
  let t = banner.length
  for (let k = 0; k < n; k++) {
    t += new Users(rows).table() + new Orders(rows).table() + summarize(rows) + formatAll(rows)
  }
  return t
}
`,
	}
}

// buildPage installs the app's npm packages and bundles it with esbuild,
// minified with a source map and a content-hashed name, as a web
// build's CI does; index.html loads the bundle. It returns the bundle's
// file name.
func buildPage(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	install(t, dir, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error")
	install(t, dir, testkit.Esbuild(t), "app/main.js", "--bundle", "--minify", "--sourcemap",
		"--entry-names=[name]-[hash]", "--outdir=dist", "--log-level=warning")
	js, _ := filepath.Glob(filepath.Join(dir, "dist", "main-*.js"))
	if len(js) != 1 {
		t.Fatalf("esbuild wrote %v", js)
	}
	page := strings.Replace(files["index.html"], "BUNDLE", "dist/"+filepath.Base(js[0]), 1)
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(js[0])
}

// A web app bundled by esbuild (minified, content-hashed, source maps),
// served over loopback HTTP, each build from a path of its own, profiled
// in headless Chromium through the DevTools protocol, the builds' runs
// interleaved; the profiles read with the builds' maps (--source-maps).
//
//   - A/A: the app rebuilt with a change no function's cost sees (another
//     hash, another URL): no culprit at --alpha 0.01 and under 2% of the
//     samples in stacks of one side only; the two table methods are rows
//     of their own (app/users.js, app/orders.js).
//   - A library release: escape-html 1.0.2 to 1.0.3, whose HISTORY.md
//     says "perf: optimize string replacement" (1.0.3 / 2015-09-01,
//     github.com/component/escape-html: escapeHtml scans a string once
//     for the five characters and returns it as it is if none is there,
//     where 1.0.2 ran five replace calls on every string): escapeHtml,
//     named by the map (the bundle names it by a minified letter), is the
//     first culprit.
func TestWebBundlesSourceMaps(t *testing.T) {
	core, err := toolprofiles.PlaywrightCore()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal(err)
	}
	root, maps, out := t.TempDir(), t.TempDir(), t.TempDir()
	builds := map[string]map[string]string{
		"old":   webApp("1.0.2", "Welcome"),
		"new":   webApp("1.0.3", "Welcome"),
		"other": webApp("1.0.3", "Welcome back, and thanks for shopping"),
	}
	bundles := map[string]string{}
	for name, files := range builds {
		dir := filepath.Join(root, "builds", name)
		bundles[name] = buildPage(t, dir, files)
		b, err := os.ReadFile(filepath.Join(dir, "dist", bundles[name]+".map"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(maps, bundles[name]+".map"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if bundles["new"] == bundles["other"] {
		t.Fatalf("the unrelated change left the bundle's name %s", bundles["new"])
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(root)))
	defer srv.Close()
	pages := map[string]string{}
	for name := range builds {
		pages[name] = srv.URL + "/builds/" + name + "/index.html"
	}
	start := time.Now()
	files, err := toolprofiles.PageCPUProfiles(core, out, "work(300)", runsPerSide(), pages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs of %d pages in Chromium: %s; bundles %v", runsPerSide(), len(pages), time.Since(start).Round(time.Second), bundles)
	withMaps := []string{"--source-maps", maps}

	// The two sides of each comparison are two hashes at two URLs.
	t.Run("aa", func(t *testing.T) {
		base, head := files["new"], files["other"]
		folded, _ := Flamediff(t, DiffArgs(base, head, "--output", "folded")...)
		t.Logf("without maps: %.1f%% of the samples in one-sided stacks", 100*oneSided(t, folded))
		folded, _ = Flamediff(t, DiffArgs(base, head, append(withMaps, "--output", "folded")...)...)
		share := oneSided(t, folded)
		t.Logf("with maps: %.1f%% of the samples in one-sided stacks", 100*share)
		if share > 0.02 {
			t.Errorf("%.1f%% of the samples are in stacks of one side only; one app rebuilt has the same stacks:\n%s", 100*share, alone(folded))
		}
		v := DiffVerdict(t, base, head, append(withMaps, "--alpha", "0.01")...)
		t.Logf("A/A: %s", Describe(v))
		if len(Culprits(v)) > 0 {
			t.Errorf("one app rebuilt with a change no function's cost sees:\n%s", Describe(v))
		}
		titles := func(maps ...string) map[string]bool {
			js, _ := Flamediff(t, append(append([]string{"query", "--type", "functions", "--output", "json"}, maps...), append([]string{"--head"}, base...)...)...)
			titles := map[string]bool{}
			for _, r := range Rows(t, js, "functions") {
				titles[fmt.Sprint(r["function"])] = true
			}
			return titles
		}
		if without := titles(); !without["table"] || without["table (app/users.js)"] {
			t.Errorf("without maps, the bundle's two table methods are not the one function table: %v", without)
		}
		with := titles(withMaps...)
		for _, want := range []string{"table (app/users.js)", "table (app/orders.js)", "escapeHtml"} {
			if !with[want] {
				t.Errorf("no row %q among %v", want, with)
			}
		}
		anonymous := 0
		for title := range with {
			if strings.HasPrefix(title, "(anonymous #") {
				anonymous++
			}
		}
		if anonymous < 3 {
			t.Errorf("%d numbered anonymous functions, want the callbacks of app/stats.js and app/format.js apart: %v", anonymous, with)
		}
		t.Logf("functions with maps: %v", with)
	})

	t.Run("release", func(t *testing.T) {
		v := DiffVerdict(t, files["old"], files["new"], append(withMaps, "--alpha", "0.01")...)
		t.Logf("escape-html 1.0.2 → 1.0.3: %s", Describe(v))
		c := Culprits(v)
		if len(c) == 0 || c[0].Function != "escapeHtml" || !strings.HasSuffix(c[0].Module, "escape-html/index.js") {
			t.Errorf("escapeHtml is not the first culprit:\n%s", Describe(v))
		}
	})
}
