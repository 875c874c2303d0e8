package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cited matches a repository path in docs and comments, e.g.
// docs/SCHEMA.md, pkg/query/model.go or pkg/storage.Tables (a package's
// identifier).
var cited = regexp.MustCompile("(?:^|[\\s(`\\[\"'])((?:docs|pkg|cmd|internal|src|scripts|testdata|provisioning|e2e)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*])")

// mdLink matches a relative Markdown link target such as (QUERIES.md).
var mdLink = regexp.MustCompile(`\]\(([A-Za-z0-9_./-]+\.md)(?:#[^)]*)?\)`)

// Docs and code comments cite only files of the repository (the README,
// the docs, and comments in Go and TypeScript), never an outside spec.
func TestDocsCiteExistingFiles(t *testing.T) {
	root := "../.."
	var files []string
	for _, dir := range []string{"docs", "pkg", "cmd", "internal", "src", "scripts", "provisioning", "e2e"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && regexp.MustCompile(`\.(md|go|ts|tsx|sh|yaml)$`).MatchString(path) {
				files = append(files, path)
			}
			return nil
		})
	}
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 100 {
		t.Fatalf("found only %d files", len(files))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		text := string(b)
		if spec := "SPEC " + "§"; strings.Contains(text, spec) {
			t.Errorf("%s cites %s, which is not in the repository", rel, spec)
		}
		for _, at := range cited.FindAllStringSubmatchIndex(text, -1) {
			p := strings.TrimSuffix(text[at[2]:at[3]], ".")
			if strings.HasPrefix(text[at[3]:], ".(") {
				continue // a Go function's frame name, such as internal/poll.(*FD).Read
			}
			// Globs and placeholders (docs/img/NAME.png) name no one file.
			if strings.ContainsAny(p, "*") || strings.HasSuffix(p, "/") || strings.Contains(p, "NAME") {
				continue
			}
			if dir, ident, ok := strings.Cut(p, "."); ok && ident[0] >= 'A' && ident[0] <= 'Z' {
				p = dir // pkg/query.Model names an identifier of pkg/query
			}
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s cites %s, which does not exist", rel, p)
			}
		}
		if strings.HasSuffix(file, ".md") {
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				if _, err := os.Stat(filepath.Join(filepath.Dir(file), m[1])); err != nil {
					t.Errorf("%s links %s, which does not exist", rel, m[1])
				}
			}
		}
	}
}
