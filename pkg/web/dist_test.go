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

// TestReportBundlesEveryIcon fails when a component names an icon the
// report and local UI bundles do not draw (src/report/icons.tsx: Grafana's
// Icon fetches the others from a Grafana server, so they showed nothing).
func TestReportBundlesEveryIcon(t *testing.T) {
	repo := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(repo, "src", "report", "icons.tsx"))
	if err != nil {
		t.Fatal(err)
	}
	icons := string(b)
	table := icons[strings.Index(icons, "const icons"):]
	table = table[:strings.Index(table, "};")]
	used := regexp.MustCompile(`icon=(?:"|\{')([a-z-]+)`)
	seen := 0
	err = filepath.WalkDir(filepath.Join(repo, "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".tsx") || strings.HasSuffix(path, ".test.tsx") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range used.FindAllStringSubmatch(string(src), -1) {
			seen++
			name := m[1]
			imported := strings.Contains(icons, "'grafana-icons/unicons/"+name+".svg'")
			listed := regexp.MustCompile(`(?m)^\s*(?:'` + name + `'|` + name + `)[:,]`).MatchString(table)
			if !imported || !listed {
				t.Errorf("%s uses icon %q, which src/report/icons.tsx does not bundle (imported %v, listed %v)", path, name, imported, listed)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no icon=\"...\" in src: the pattern no longer finds them")
	}
}
