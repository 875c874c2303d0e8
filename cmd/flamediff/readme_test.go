package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/testkit"
)

// The README's run command brings the product up on this machine: the
// script it names installs what is missing, seeds the demo and serves the
// UI, whose apps resource then lists the demo's apps. --check stops it
// there; port 0 keeps it off ports in use.
func TestReadmeRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ClickHouse and seeds the demo (about a minute)")
	}
	repo := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## Run it\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README has no sh block under ## Run it")
	}
	lines := strings.Split(strings.TrimSpace(string(block[1])), "\n")
	if last := lines[len(lines)-1]; last != "./scripts/run.sh" {
		t.Fatalf("README's run command is %q; this test runs ./scripts/run.sh", last)
	}
	for _, unfetchable := range []string{"go install github.com/", "go get github.com/flamediff"} {
		if strings.Contains(string(readme), unfetchable) {
			t.Errorf("README says %q: the module path is not published", unfetchable)
		}
	}
	cmd := exec.Command("./scripts/run.sh", "--check", "--addr", "127.0.0.1:0")
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/run.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `["checkout-service","ios-app"]`) {
		t.Errorf("scripts/run.sh --check did not list the demo's apps:\n%s", out)
	}
}

// The README's doc index links every doc of docs/.
func TestReadmeIndexesEveryDoc(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testkit.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, index, found := strings.Cut(string(readme), "\n| document | what it covers |\n")
	if !found {
		t.Fatal("the README has no doc index (a table | document | what it covers |)")
	}
	index, _, _ = strings.Cut(index, "\n\n")
	docs, err := filepath.Glob(filepath.Join(testkit.Root(), "docs", "*.md"))
	if err != nil || len(docs) < 20 {
		t.Fatalf("docs/*.md: %d files, %v", len(docs), err)
	}
	for _, doc := range docs {
		if link := "](docs/" + filepath.Base(doc) + ")"; !strings.Contains(index, link) {
			t.Errorf("the README's doc index has no link to docs/%s", filepath.Base(doc))
		}
	}
}
