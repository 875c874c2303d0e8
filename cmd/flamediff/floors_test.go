package main

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every package of pkg/ sits on a floor of docs/ARCHITECTURE.md's list and
// imports only packages on floors below its own.
func TestImportFloors(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Floors\n")
	section, _, _ = strings.Cut(section, "\n## ")
	floor := map[string]int{}
	item, pkg := regexp.MustCompile(`(?m)^(\d+)\. (.*)$`), regexp.MustCompile("`(pkg[a-z/]*)`")
	for _, m := range item.FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			floor[p[1]] = n
		}
	}
	if len(floor) < 10 {
		t.Fatalf("docs/ARCHITECTURE.md's floors list only %d packages", len(floor))
	}
	const module = "github.com/flamediff/flamediff/"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./pkg/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := bufio.NewScanner(strings.NewReader(string(out)))
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		p := strings.TrimPrefix(fields[0], module)
		at, ok := floor[p]
		if !ok {
			t.Errorf("%s is on no floor of docs/ARCHITECTURE.md", p)
			continue
		}
		for _, imp := range fields[1:] {
			q, ours := strings.CutPrefix(imp, module)
			if ours && floor[q] >= at {
				t.Errorf("%s (floor %d) imports %s (floor %d)", p, at, q, floor[q])
			}
		}
	}
}

// No Go file of the module is over 500 lines (docs/ARCHITECTURE.md): a
// longer one holds more than one concern; split it along its seams.
func TestGoFilesWithin500Lines(t *testing.T) {
	const most = 500
	seen := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../..":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen++
		if n := strings.Count(string(b), "\n"); n > most {
			t.Errorf("%s has %d lines, over %d", strings.TrimPrefix(path, "../../"), n, most)
		}
		return nil
	})
	if err != nil || seen < 100 {
		t.Fatalf("read %d Go files: %v", seen, err)
	}
}
