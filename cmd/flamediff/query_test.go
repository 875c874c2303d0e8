package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// A stored query (--dsn --model) answers exactly what the local engine
// answers on the same files: ingest, aggregation in ClickHouse and the
// executor lose nothing.
func TestStoredQueryEqualsLocalQuery(t *testing.T) {
	for name, dsn := range targets(t) {
		t.Run(name, func(t *testing.T) { storedEqualsLocal(t, dsn) })
	}
}

func storedEqualsLocal(t *testing.T, dsn string) {
	ingestPprofInto(t, dsn)
	sides := map[string][]string{"base": testkit.PprofRuns(t, "base"), "head": testkit.PprofRuns(t, "head")}
	// Every variant's tree and culprits frame (its verdict in the meta),
	// in both normalisations, and the GitHub annotations, whose file is
	// relative to the source root.
	for _, norm := range []string{"absolute", "relative"} {
		for _, output := range []string{"json", "github"} {
			local, lerr := flamediff(t, append(append(append([]string{"query", "--type", "diff", "--output", output, "--variants",
				"--normalize", norm, "--source-root", "/home/build/src/demo", "--head"}, sides["head"]...), "--base"), sides["base"]...)...)
			stored, serr := flamediff(t, "query", "--dsn", dsn, "--output", output, "--source-root", "/home/build/src/demo", "--model",
				`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"variants":true,"normalize":"`+norm+`"}`)
			if lerr != nil || serr != nil || local != stored || !strings.Contains(stored, "validateHead") {
				t.Errorf("%s %s: stored (%v) and local (%v) diffs differ:\n stored %.300s\n local  %.300s", norm, output, serr, lerr, stored, local)
			}
			if output == "github" && !strings.HasPrefix(stored, "::error file=genprof/main.go,line=64,title=Flamediff%3A new main.validateHead::") {
				t.Errorf("%s: stored github output:\n%s", norm, stored)
			}
		}
	}
	// The gate and its report read the same engine either way.
	diffModel := `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"normalize":"relative"}`
	local, err := flamediff(t, append(append(append([]string{"query", "--type", "diff", "--output", "markdown", "--normalize", "relative",
		"--fail-on-regression", "--head"}, sides["head"]...), "--base"), sides["base"]...)...)
	if !isRegression(err) {
		t.Errorf("local gate: %v, want a regression", err)
	}
	stored, err := flamediff(t, "query", "--dsn", dsn, "--output", "markdown", "--fail-on-regression", "--model", diffModel)
	if !isRegression(err) || stored != local || !strings.Contains(stored, "relative normalisation") ||
		!strings.Contains(stored, "**FAIL**: `main.validateHead` is new in head, called from `main.iteration`") ||
		!strings.Contains(stored, "`main.go:64`") {
		t.Errorf("stored gate: %v, markdown:\n%s\nlocal:\n%s", err, stored, local)
	}
	table := mustRun(t, "query", "--dsn", dsn, "--output", "table", "--model", diffModel)
	if !strings.Contains(table, "*main.validateHead") || !strings.Contains(table, " ms ") {
		t.Errorf("stored diff table:\n%s", table)
	}
	// Other query types print names and units, not enum indexes and raw floats.
	table = mustRun(t, "query", "--dsn", dsn, "--output", "table", "--model",
		`{"queryType":"runs","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]}}`)
	if !strings.Contains(table, "pValue") || strings.Count(table, "head") < len(sides["head"]) || !strings.Contains(table, " ms") {
		t.Errorf("runs table:\n%s", table)
	}
	for _, bad := range [][]string{
		{"query", "--dsn", dsn},
		{"query", "--dsn", dsn, "--model", `{"queryType":"nope","app":"a"}`},
		{"query", "--dsn", dsn, "--model", `{}`, "--head", "x.pb.gz"},
		{"query", "--dsn", dsn, "--model", `{"queryType":"runs","app":"app","head":{"builds":["head"]}}`, "--output", "folded"},
		{"query", "--dsn", dsn, "--model", `{"queryType":"flamegraph","app":"app","head":{"builds":["head"]}}`, "--output", "markdown"},
		{"query", "--dsn", dsn, "--model", `{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"alpha":2}`},
	} {
		if _, err := flamediff(t, bad...); err == nil || !isUsage(err) {
			t.Errorf("%v: error %v, want a usage error", bad[3:], err)
		}
	}
}

func isUsage(err error) bool { return errors.As(err, new(usageError)) }
