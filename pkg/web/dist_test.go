package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDistIsCurrent fails when a source of the embedded scripts changed
// after they were built: run `npm run build:report` and commit dist/.
// The hash is src/report/build.mjs's sourcesHash.
func TestDistIsCurrent(t *testing.T) {
	repo := filepath.Join("..", "..")
	bundled := regexp.MustCompile(`\.(ts|tsx|svg)$`)
	test := regexp.MustCompile(`\.test\.tsx?$`)
	files := []string{"src/report/build.mjs", "scripts/bundle.mjs", "package-lock.json"}
	err := filepath.WalkDir(filepath.Join(repo, "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !bundled.MatchString(path) || test.MatchString(path) {
			return err
		}
		rel, err := filepath.Rel(repo, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(f + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	want, err := os.ReadFile("dist/sources.sha256")
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(string(want)) {
		t.Fatalf("pkg/web/dist was built from other sources (%s, now %s): run npm run build:report", strings.TrimSpace(string(want)), got)
	}
}
