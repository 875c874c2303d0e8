package testkit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sourceRoot is where the program of testdata/pprof (genprof) was built,
// a neutral path that names no one's machine.
const sourceRoot = "/home/build/src/demo/"

// Every source file the profiles of testdata/pprof name is under the
// neutral root or in Go's own tree.
func TestPprofRunsNameTheNeutralRoot(t *testing.T) {
	files := append(PprofRuns(t, "base"), PprofRuns(t, "head")...)
	for _, file := range files {
		p := ParsePprof(t, file)
		mains := 0
		for _, fn := range p.Function {
			switch {
			case strings.HasPrefix(fn.Filename, sourceRoot+"genprof/"):
				mains++
			case !strings.HasPrefix(fn.Filename, "/usr/local/go/src/"):
				t.Errorf("%s: %s is in %s, outside %s and Go's tree", filepath.Base(file), fn.Name, fn.Filename, sourceRoot)
			}
		}
		if mains == 0 {
			t.Errorf("%s: no function of genprof", filepath.Base(file))
		}
	}
}

// rootNames are the places a text names the profiles' source root: a path
// of genprof and a --source-root flag's value.
var rootNames = []*regexp.Regexp{
	regexp.MustCompile(`(?:/[A-Za-z0-9_.~-]+)+/genprof\b`),
	regexp.MustCompile(`--source-root"?,? "?(/[^\s",\x60]*)`),
}

// allowedNames are what rootNames may find: the root, genprof below it,
// and the executable's path the profiles record (/tmp/genprof).
var allowedNames = map[string]bool{
	strings.TrimSuffix(sourceRoot, "/"): true, sourceRoot + "genprof": true, "/tmp/genprof": true,
}

// No doc, test or code of the repository names another source root for
// genprof than the profiles' (the machine they were first made on, for
// one).
func TestNoOtherSourceRoot(t *testing.T) {
	root := Root()
	text := regexp.MustCompile(`\.(md|go|ts|tsx|mjs|js|sh|yaml|yml|json|txt)$`)
	read := 0
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			switch info.Name() {
			case ".git", "node_modules", "dist", "test-results", "playwright-report":
				return filepath.SkipDir
			}
			return nil
		}
		if !text.MatchString(path) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		for _, re := range rootNames {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if name := m[len(m)-1]; !allowedNames[name] {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s names %s, not %s", rel, name, sourceRoot)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 100 {
		t.Fatalf("read only %d files of the repository", read)
	}
}
