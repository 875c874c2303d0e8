package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/testkit"
)

// ingestPprof stores testdata/pprof's runs as builds "base" and "head" of
// app "app" in a fresh database and returns its DSN.
func ingestPprof(t *testing.T) string {
	t.Helper()
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	ingestPprofInto(t, dsn)
	return dsn
}

// ingestPprofInto is ingestPprof into dsn's migrated database.
func ingestPprofInto(t *testing.T, dsn string) {
	t.Helper()
	for _, side := range []string{"base", "head"} {
		for i, f := range testkit.PprofRuns(t, side) {
			mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", side, "--run", string(rune('a'+i)), f)
		}
	}
}

// serveTest starts `flamediff serve` in-process on a free loopback port over
// ingestPprof's database and returns its URL; the server stops with the test.
func serveTest(t *testing.T) (url, dsn string) {
	t.Helper()
	dsn = ingestPprof(t)
	return serveOn(t, dsn, "--addr", "127.0.0.1:0"), dsn
}

// serveOn starts `flamediff serve` with args over dsn and returns its URL.
func serveOn(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--dsn", dsn}, args...), w, io.Discard)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, r) //nolint:errcheck // drains the pipe until serve exits
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "flamediff serve: "), "/")
}

// call sends a request (a JSON POST when body is not empty) and returns
// the answer's status and body.
func call(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, b := send(t, url, "", body, map[string]string{"Content-Type": "application/json"})
	return resp.StatusCode, b
}

// The local web UI answers queries as `flamediff query --output json` prints
// them and its resources as the data source's, over HTTP, from ClickHouse.
func TestServe(t *testing.T) {
	url, dsn := serveTest(t)
	if code, page := call(t, url+"/", ""); code != http.StatusOK || !strings.Contains(page, `data-gzip="js"`) {
		t.Fatalf("GET /: %d %.200s", code, page)
	}
	model := `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"variants":true}`
	code, frames := call(t, url+"/api/query", model)
	if want := mustRun(t, "query", "--dsn", dsn, "--output", "json", "--model", model); code != http.StatusOK || frames != want {
		t.Errorf("POST /api/query: %d\n got  %.300s\n want %.300s", code, frames, want)
	}

	for path, want := range map[string]string{
		"/api/resources/apps":                        `["app"]`,
		"/api/resources/builds?app=app":              `"name":"head"`,
		"/api/resources/runs?app=app&build=head":     `"build":"head"`,
		"/api/resources/functions?app=app&q=regexp.": `"regexp.`,
	} {
		if code, body := call(t, url+path, ""); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %.200s, want %s", path, code, body, want)
		}
	}

	for _, c := range []struct {
		path, body string
		code       int
	}{
		{"/api/query", `{"queryType":"nope","app":"app"}`, http.StatusBadRequest},
		{"/api/query", `{"queryType":"diff","app":"unknown","head":{"builds":["head"]},"base":{"builds":["base"]}}`, http.StatusNotFound}, // as the data source answers
		{"/api/query", `not json`, http.StatusBadRequest},
	} {
		code, body := call(t, url+c.path, c.body)
		var e struct{ Error string }
		if code != c.code || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("POST %s %s: %d %s, want %d with an error", c.path, c.body, code, body, c.code)
		}
	}
	if code, _ := call(t, url+"/api/resources/builds", ""); code != http.StatusBadRequest {
		t.Errorf("builds without app: %d, want 400", code)
	}
}

// serveRoutes are every route of `flamediff serve`, static ones included,
// each with a request the page makes (a body means a POST).
var serveRoutes = []struct{ path, body string }{
	{"/", ""},
	{"/favicon.ico", ""},
	{"/no/such/file.js", ""},
	{"/api/query", `{"queryType":"runs","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`},
	{"/api/resources/apps", ""},
	{"/api/resources/builds?app=app", ""},
	{"/api/resources/runs?app=app&build=head", ""},
	{"/api/resources/functions?app=app&q=regexp.", ""},
}

// send makes the request of a route with a Host and headers of its own.
func send(t *testing.T, url, host, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	method := http.MethodGet
	if body != "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, b := testkit.Do(t, req)
	return resp, string(b)
}

// TestServeRefusesOtherSites: what a hostile page can send to the local
// UI — its own name as Host after rebinding it to 127.0.0.1, its own
// Origin, text/plain and form bodies — gets a refusal and none of the
// stored data, on every route; no answer carries a CORS header.
func TestServeRefusesOtherSites(t *testing.T) {
	url, dsn := serveTest(t)
	port := url[strings.LastIndex(url, ":")+1:]
	json := map[string]string{"Content-Type": "application/json"}
	leaks := func(body string) bool {
		return strings.Contains(body, "head") || strings.Contains(body, "regexp") || strings.Contains(body, "data-gzip")
	}
	check := func(t *testing.T, resp *http.Response, body string, want int) {
		t.Helper()
		if resp.StatusCode != want || leaks(body) || !strings.Contains(body, `"error"`) {
			t.Errorf("%d %.200s, want %d with a reason and no data", resp.StatusCode, body, want)
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("CORS header %s sent", k)
			}
		}
	}
	for _, r := range serveRoutes {
		t.Run(r.path, func(t *testing.T) {
			for _, host := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1.nip.io:" + port} {
				resp, body := send(t, url+r.path, host, r.body, json)
				check(t, resp, body, http.StatusMisdirectedRequest)
			}
			if !strings.HasPrefix(r.path, "/api/") {
				return
			}
			for _, origin := range []string{"http://attacker.example", "http://localhost:1", "null"} {
				resp, body := send(t, url+r.path, "", r.body, map[string]string{"Content-Type": "application/json", "Origin": origin})
				check(t, resp, body, http.StatusForbidden)
			}
			resp, body := send(t, url+r.path, "", r.body, map[string]string{"Sec-Fetch-Site": "cross-site"})
			check(t, resp, body, http.StatusForbidden)
			if r.body == "" {
				return
			}
			for _, typ := range []string{"text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=b"} {
				resp, body := send(t, url+r.path, "", r.body, map[string]string{"Content-Type": typ})
				check(t, resp, body, http.StatusUnsupportedMediaType)
			}
		})
	}
	// The page itself still works, by any of the names of loopback.
	for _, host := range []string{"", "localhost:" + port} {
		if resp, body := send(t, url+"/api/resources/apps", host, "", nil); resp.StatusCode != http.StatusOK || body != "[\"app\"]\n" {
			t.Errorf("apps with Host %q: %d %s", host, resp.StatusCode, body)
		}
	}
	// --allow-host adds a name.
	named := serveOn(t, dsn, "--addr", "127.0.0.1:0", "--allow-host", "profiles.build-box.internal")
	resp, body := send(t, named+"/api/query", "profiles.build-box.internal", serveRoutes[3].body, json)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"head"`) {
		t.Errorf("allowed host: %d %.200s", resp.StatusCode, body)
	}
}

// TestServeToken: a non-loopback address needs a token, and then every
// request needs it.
func TestServeToken(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	err := run(context.Background(), []string{"serve", "--dsn", dsn, "--addr", "0.0.0.0:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--token-file") || !strings.Contains(err.Error(), "0.0.0.0") {
		t.Fatalf("serve on 0.0.0.0 without a token: %v, want a refusal that says why", err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("correct-horse-battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Reached over loopback, which the test can: http://[::]:port/ is printed.
	url := strings.Replace(serveOn(t, dsn, "--addr", "0.0.0.0:0", "--token-file", file), "[::]", "127.0.0.1", 1)
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Bearer correct-horse-battery", 200}} {
		if resp, body := send(t, url+"/api/resources/apps", "", "", map[string]string{"Authorization": c.auth}); resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %d %s, want %d", c.auth, resp.StatusCode, body, c.want)
		}
	}
	t.Setenv("FLAMEDIFF_TOKEN", "from-the-environment")
	url = strings.Replace(serveOn(t, dsn, "--addr", "0.0.0.0:0"), "[::]", "127.0.0.1", 1)
	if resp, body := send(t, url+"/", "", "", map[string]string{"Authorization": "Bearer from-the-environment"}); resp.StatusCode != 200 {
		t.Errorf("token from $FLAMEDIFF_TOKEN: %d %.200s", resp.StatusCode, body)
	}
}
