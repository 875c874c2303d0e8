package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
)

// pprofRuns lists testdata/pprof's runs of one side.
func pprofRuns(t *testing.T, side string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "pprof", side+"-run*.pb.gz"))
	if len(files) == 0 {
		t.Fatal("no testdata/pprof profiles")
	}
	return files
}

// ingestPprof stores testdata/pprof's runs as builds "base" and "head" of
// app "app" in a fresh database and returns its DSN.
func ingestPprof(t *testing.T) string {
	t.Helper()
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	for _, side := range []string{"base", "head"} {
		for i, f := range pprofRuns(t, side) {
			mustRun(t, "ingest", "--dsn", dsn, "--app", "app", "--build", side, "--run", string(rune('a'+i)), f)
		}
	}
	return dsn
}

// serveTest starts `flamediff serve` in-process on a free loopback port over
// ingestPprof's database and returns its URL; the server stops with the test.
func serveTest(t *testing.T) (url, dsn string) {
	t.Helper()
	dsn = ingestPprof(t)
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dsn", dsn, "--addr", "127.0.0.1:0"}, w, io.Discard)
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
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "flamediff serve: "), "/"), dsn
}

// call sends a request (a POST when body is not empty) and returns the
// answer's status and body.
func call(t *testing.T, url, body string) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	if body == "" {
		resp, err = http.Get(url)
	} else {
		resp, err = http.Post(url, "application/json", strings.NewReader(body))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
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
