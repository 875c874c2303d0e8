package main

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/ingest"
)

// formatsTable is the format table as docs/FORMATS.md and the README show it.
func formatsTable() string {
	var b strings.Builder
	b.WriteString("| --format | file | carries | threads (--threads) | written by |\n|---|---|---|---|---|\n")
	for _, f := range ingest.Formats() {
		auto := ""
		if f.Runs {
			auto = " (not detected by auto)"
		}
		b.WriteString("| `" + string(f.Name) + "`" + auto + " | " + f.Title + " | " + f.Carries + " | " + cmp.Or(f.Threads, "-") + " | " + f.Writer + " |\n")
	}
	return b.String()
}

// The format table, the CLI's help and docs/FORMATS.md's and the README's
// tables are one: each names every row, in the table's words; and
// docs/FORMATS.md has a paragraph of details on every row.
func TestFormatsDocumented(t *testing.T) {
	want := formatsTable()
	for _, doc := range []string{"docs/FORMATS.md", "README.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks the format table; it is:\n%s", doc, want)
		}
	}
	var out, help bytes.Buffer
	_ = run(context.Background(), []string{"ingest", "--help"}, &out, &help)
	if !strings.Contains(help.String(), "input FORMAT: "+ingest.Names()+" ") {
		t.Errorf("ingest --help does not list %s:\n%s", ingest.Names(), help.String())
	}
	details, err := os.ReadFile(filepath.Join("..", "..", "docs", "FORMATS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ingest.Formats() {
		if !strings.Contains(ingest.Names(), string(f.Name)) {
			t.Errorf("the format names leave out %s", f.Name)
		}
		if !regexp.MustCompile(`(?m)^- (\*\*[a-z-]+\*\* and )?\*\*` + regexp.QuoteMeta(string(f.Name)) + `\*\*`).Match(details) {
			t.Errorf("docs/FORMATS.md has no paragraph (- **%s**: ...) on the %s row", f.Name, f.Name)
		}
	}
}
