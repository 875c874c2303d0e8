// Package web writes Flamediff's pages that run without Grafana: the
// self-contained report (`flamediff report`) and the local web UI
// (`flamediff serve`). Their scripts are the panel's and the query editor's
// own code, bundled by src/report/build.mjs into dist/ (committed, so that
// the Go build needs no Node) and embedded here.
package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

//go:embed dist/first.js.gz dist/report.js.gz dist/serve.js.gz dist/page.css.gz
var dist embed.FS

// loader inflates the page's gzipped, base64-encoded parts, all at once,
// and applies them in document order: stylesheets, the data, the
// first-paint script (src/report/first.ts), then the main script. The
// first-paint script draws the diff before the main script, a second of
// evaluation, blocks the page: the loader waits until its drawing is
// painted (or given up, window.flamediffFirstReady). The main script is
// compiled before that, when the page is first idle: serve's page is idle
// while the first-paint script's query is answered. DecompressionStream is
// in every browser since 2023 (Uint8Array.fromBase64 since 2025, else
// atob; requestIdleCallback, else a task); nothing is fetched.
const loader = `(async () => {
  const bytes = (b64) => Uint8Array.fromBase64 ? Uint8Array.fromBase64(b64) : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const inflate = (el) => new Response(new Blob([bytes(el.textContent)]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  const parts = [...document.querySelectorAll('script[data-gzip]')].map((el) => [el, inflate(el)]);
  for (const [el, pending] of parts) {
    const text = await pending;
    if (el.dataset.gzip === 'css') {
      const style = document.createElement('style');
      style.textContent = text;
      document.head.append(style);
    } else if (el.dataset.gzip === 'first') {
      (0, eval)(text);
    } else if (el.dataset.gzip === 'js') {
      const idle = window.requestIdleCallback ?? setTimeout;
      const main = await new Promise((ok, fail) => idle(() => { try { ok(new Function(text)); } catch (e) { fail(e); } }));
      await window.flamediffFirstReady;
      await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok)));
      performance.mark('flamediff:run');
      main();
    } else {
      el.textContent = text;
    }
  }
})().catch((e) => { document.body.textContent = 'Flamediff: ' + e; });`

// Report is what a report page shows.
type Report struct {
	Title    string      `json:"title"`
	Subtitle string      `json:"subtitle,omitempty"`
	Frames   data.Frames `json:"frames"`
}

// WriteReport writes r as one HTML page that carries its scripts, styles
// and data, so it opens from disk, offline.
func WriteReport(w io.Writer, r Report) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var z bytes.Buffer
	if err := gzipped(&z, raw); err != nil {
		return err
	}
	return page(w, r.Title, "report.js.gz", `<script type="application/json" id="flamediff-data" data-gzip="json">`+
		base64.StdEncoding.EncodeToString(z.Bytes())+"</script>\n")
}

// writeServePage writes the local web UI's page, which reads its data from
// the server's API.
func writeServePage(w io.Writer) error {
	return page(w, "Flamediff", "serve.js.gz", "")
}

// page writes a page; its icon is empty, so that the browser asks no server
// for one (serve answered /favicon.ico with a 404 in the console).
func page(w io.Writer, title, script, data string) error {
	css, err := dist.ReadFile("dist/page.css.gz")
	if err != nil {
		return err
	}
	first, err := dist.ReadFile("dist/first.js.gz")
	if err != nil {
		return err
	}
	js, err := dist.ReadFile("dist/" + script)
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString
	_, err = io.WriteString(w, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`+html.EscapeString(title)+`</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="root"></div>
<script type="application/gzip" data-gzip="css">`+enc(css)+`</script>
`+data+`<script type="application/gzip" data-gzip="first">`+enc(first)+`</script>
<script type="application/gzip" data-gzip="js">`+enc(js)+`</script>
<script>`+loader+`</script>
</body>
</html>
`)
	return err
}

func gzipped(w io.Writer, b []byte) error {
	z, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := z.Write(b); err != nil {
		return err
	}
	return z.Close()
}
