package ingest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The package comment names every row of the format table, each once, in
// the table's order.
func TestPackageCommentListsTheTable(t *testing.T) {
	src, err := os.ReadFile("ingest.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "\npackage ingest")
	var named []string
	for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(doc, -1) {
		if _, ok := Lookup(m[1]); ok {
			named = append(named, m[1])
		}
	}
	var rows []string
	for _, f := range Formats() {
		rows = append(rows, string(f.Name))
	}
	if !slices.Equal(named, rows) {
		t.Errorf("the package comment names %v; the format table's rows are %v", named, rows)
	}
}
