package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// GitHub's documented escaping of workflow commands
// (docs.github.com, "Workflow commands for GitHub Actions"; actions/toolkit
// command.ts): in the message % -> %25, CR -> %0D, LF -> %0A; in property
// values also : -> %3A and , -> %2C.
func TestGitHubEscaping(t *testing.T) {
	for _, tt := range []struct{ in, data, property string }{
		{"plain", "plain", "plain"},
		{"50% of a:b,c", "50%25 of a:b,c", "50%25 of a%3Ab%2Cc"},
		{"line1\r\nline2", "line1%0D%0Aline2", "line1%0D%0Aline2"},
		{"%0A stays text", "%250A stays text", "%250A stays text"},
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
	} {
		if got := escapeData(tt.in); got != tt.data {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := escapeProperty(tt.in); got != tt.property {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
	}
}

// workflowCommand matches one workflow command line: ::name props::message, with
// props comma-separated key=value pairs whose values hold no : or ,.
var workflowCommand = regexp.MustCompile(`^::(error|notice) ((?:[a-z]+=[^:,]*)(?:,[a-z]+=[^:,]*)*)::([^\r\n]*)$`)

func TestGitHubOutput(t *testing.T) {
	root := t.TempDir()
	v := &verdict.Verdict{Result: verdict.Fail, Headline: "h", Why: "w",
		Regressions: []verdict.Culprit{
			{Function: "pkg.(*T).Do", Kind: "self", Path: []string{"main", "pkg.(*T).Do"}, Delta: 0.1, Regression: true,
				File: filepath.Join(root, "src", "a, b:c.go"), Line: 12},
			{Function: "runtime.mallocgc", Kind: "spread", Path: []string{"runtime.mallocgc"}, Delta: 0.05, Regression: true,
				File: "/usr/local/go/src/runtime/malloc.go", Line: 900},
			{Function: "gen.f", Kind: "new", Path: []string{"gen.f"}, Delta: 0.02, Regression: true},
		},
		Improvements: []verdict.Culprit{{Function: "x.g", Kind: "removed", Path: []string{"x.g"}, Delta: -0.03, File: "lib/gone.go", Line: 3}},
	}
	var out bytes.Buffer
	if err := writeGitHub(&out, v, root); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	want := []string{
		"::error file=src/a%2C b%3Ac.go,line=12,title=Flamediff%3A self pkg.(*T).Do::",
		"::error title=Flamediff%3A spread runtime.mallocgc::",
		"::error title=Flamediff%3A new gen.f::",
		"::notice file=lib/gone.go,line=3,title=Flamediff%3A removed x.g::",
		"Flamediff: FAIL: h w",
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) {
			t.Errorf("line %d: %q, want it to start with %q", i, l, want[i])
		}
		if i < 4 && !workflowCommand.MatchString(l) {
			t.Errorf("line %d is no workflow command: %q", i, l)
		}
	}
	if strings.Contains(out.String(), "/usr/local") || !strings.Contains(lines[1], "(source malloc.go:900, outside the source root)") {
		t.Errorf("a file outside the root:\n%s", out.String())
	}
}

// A function's name is the profile's to choose: one with line breaks and
// colons stays inside its command's message and the verdict's line, and
// starts no command of its own.
func TestGitHubOutputHostileName(t *testing.T) {
	name := "evil\n::warning file=x.go::injected\r\n::stop-commands::tok"
	c := verdict.Culprit{Function: name, Kind: "new", Path: []string{"main", name}, Delta: 0.1, Regression: true, File: "a.go", Line: 1}
	v := &verdict.Verdict{Result: verdict.Fail, Headline: c.Sentence(), Why: "w", Regressions: []verdict.Culprit{c}}
	var out bytes.Buffer
	if err := writeGitHub(&out, v, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !workflowCommand.MatchString(lines[0]) || !strings.HasPrefix(lines[0], "::error file=a.go,line=1,title=") ||
		!strings.HasPrefix(lines[1], "Flamediff: FAIL: ") || strings.ContainsRune(out.String(), '\r') {
		t.Errorf("github output:\n%q", out.String())
	}
}

// On real Go profiles the new function's annotation names its file
// relative to the source root (the profiled program was built in
// /home/build/src/demo/genprof) and its first line; the runtime's
// culprit, outside the root, has no file property and no absolute path.
func TestGitHubOutputRealProfile(t *testing.T) {
	head, base := testkit.PprofRuns(t, "head"), testkit.PprofRuns(t, "base")
	args := append(append(append([]string{"query", "--type", "diff", "--output", "github", "--source-root", "/home/build/src/demo",
		"--fail-on-regression", "--head"}, head...), "--base"), base...)
	out, err := flamediff(t, args...)
	if !isRegression(err) {
		t.Errorf("gate: %v", err)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "::error file=genprof/main.go,line=64,title=Flamediff%3A new main.validateHead::`main.validateHead` is new in head, called from `main.iteration`") ||
		!strings.HasPrefix(lines[1], "::error title=Flamediff%3A spread runtime.gcBgMarkWorker::") ||
		strings.Contains(out, "/usr/local/go") {
		t.Errorf("github output:\n%s", out)
	}
}
