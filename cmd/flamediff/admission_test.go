package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/mcptest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Every command that answers a tree query from stored runs goes through
// the data source's admission, with --settings' maxQueryMemory: a diff
// of 1,000 stacks of 10 frames (about 0.8 MB of rows, within 1 MB, but
// trees of up to 20,000 nodes, about 8 MB) is refused by each with the
// message the executor itself gives, before any tree is built.
func TestEveryCallerAdmitsAlike(t *testing.T) {
	dsn := chtest.DSN(t)
	settings := writeFile(t, "flamediff.yaml", `datasources:
  - type: flamediff-clickhouse-datasource
    jsonData: {host: clickhouse, maxQueryMemory: 1}
`)
	mustRun(t, "migrate", "--dsn", dsn)
	for _, build := range []string{"base", "head"} {
		for run := range 2 {
			var b strings.Builder
			for s := range 1000 {
				b.WriteString("main")
				for f := range 9 {
					fmt.Fprintf(&b, ";pkg.f%d_%d", s, f)
				}
				fmt.Fprintf(&b, " %d\n", 10+(s*7+run*3+len(build))%13)
			}
			file := writeFile(t, fmt.Sprintf("%s-%d.folded", build, run), b.String())
			mustRun(t, "ingest", "--dsn", dsn, "--app", "big", "--build", build, "--run", fmt.Sprint(run), file)
		}
	}
	const diff = `{"queryType":"diff","app":"big","head":{"builds":["head"]},"base":{"builds":["base"]}%s}`
	model := func(variants bool) string {
		if variants {
			return fmt.Sprintf(diff, `,"variants":true`)
		}
		return fmt.Sprintf(diff, "")
	}
	stored := []string{"--dsn", dsn, "--settings", settings}
	url := serveOn(t, dsn, "--addr", "127.0.0.1:0", "--settings", settings)
	compare := func(s *mcp.ClientSession) string {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_builds",
			Arguments: map[string]any{"app": "big", "head": []string{"head"}, "base": []string{"base"}}})
		if err != nil {
			return err.Error()
		}
		if !res.IsError {
			return "a verdict"
		}
		return mcptest.Text(res)
	}
	for _, c := range []struct {
		caller   string
		variants bool // the report asks for every variant
		refusal  func() string
	}{
		{"query", false, func() string {
			_, err := flamediff(t, append([]string{"query", "--model", model(false), "--output", "verdict"}, stored...)...)
			return fmt.Sprint(err)
		}},
		{"report", true, func() string {
			_, err := flamediff(t, append([]string{"report", "--model", model(false), "-o", filepath.Join(t.TempDir(), "r.html")}, stored...)...)
			return fmt.Sprint(err)
		}},
		{"serve", false, func() string {
			status, body := call(t, url+"/api/query", model(false))
			var answer struct{ Error string }
			if err := json.Unmarshal([]byte(body), &answer); err != nil || status != 400 {
				return fmt.Sprintf("%d %.200s", status, body)
			}
			return answer.Error
		}},
		{"serve's /mcp", false, func() string {
			return compare(mcptest.Connect(t, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}))
		}},
		{"mcp", false, func() string {
			return compare(mcptest.Connect(t, &mcp.CommandTransport{
				Command: exec.Command(flamediffBinary(t), append([]string{"mcp"}, stored...)...)}))
		}},
	} {
		want := executorRefusal(t, dsn, model(c.variants))
		if got := c.refusal(); got != want {
			t.Errorf("%s: %q, want the executor's %q", c.caller, got, want)
		}
	}
}

// executorRefusal is the data source executor's error for a model under
// a budget of 1 MB, which must be its admission's.
func executorRefusal(t *testing.T, dsn, model string) string {
	t.Helper()
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(storage.Options{ClickHouse: o})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := query.Parse([]byte(model))
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&query.Executor{Store: store, MaxMemory: 1 << 20}).Execute(context.Background(), m, query.Range{})
	if !errors.Is(err, query.ErrTooBig) || !strings.Contains(err.Error(), "trees of up to 20000 nodes") {
		t.Fatalf("the executor with 1 MB: %v, want its trees refused", err)
	}
	return err.Error()
}
