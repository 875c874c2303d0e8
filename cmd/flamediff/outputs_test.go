package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/CLI.md's table of query's outputs and the help are the outputs
// table's: every row, in its words and order.
func TestOutputsDocumented(t *testing.T) {
	var want strings.Builder
	want.WriteString("| output | needs | what |\n|---|---|---|\n")
	for _, o := range outputs {
		fmt.Fprintf(&want, "| `%s` | %s | %s |\n", o.name, o.needs, o.help)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CLI.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), want.String()) {
		t.Errorf("docs/CLI.md lacks the outputs table; it is:\n%s", want.String())
	}
	var out, help bytes.Buffer
	_ = run(context.Background(), []string{"query", "--help"}, &out, &help)
	for _, o := range outputs {
		if !strings.Contains(help.String(), "  "+o.name+": "+o.help) {
			t.Errorf("query --help does not list the output %s", o.name)
		}
	}
}
