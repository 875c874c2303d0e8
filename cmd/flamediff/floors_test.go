package main

import (
	"bufio"
	"os"
	"os/exec"
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
