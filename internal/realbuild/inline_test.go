package realbuild

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
)

// inlined lists the functions that `go tool pprof -top` marks "(inline)"
// in files (merged): the lines that pprof says the compiler inlined.
func inlined(t *testing.T, files ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", append([]string{"tool", "pprof", "-top", "-trim=false", "-nodefraction=0"}, files...)...).Output()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v", err)
	}
	marked := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if name, ok := strings.CutSuffix(strings.TrimSpace(sc.Text()), " (inline)"); ok {
			f := strings.Fields(name)
			marked[f[len(f)-1]] = true
		}
	}
	return marked
}

// What the profile says about inlining is kept: the pprof export of a
// release's runs stored in ClickHouse marks as inlined what pprof marks so
// in the runs themselves
// (fold in the base build, not in the refactor built with
// -gcflags=<work>=-l), so a change of inlining reads as one.
func TestInlineMarksKept(t *testing.T) {
	f := app(t)
	dsn := chtest.DSN(t)
	Flamediff(t, "migrate", "--dsn", dsn)
	for _, release := range []string{"aa-base", "refactor"} {
		runs := f.files[release]
		want := inlined(t, runs...)
		if release == "aa-base" && !want[work("fold")] || release == "refactor" && want[work("fold")] {
			t.Fatalf("%s: pprof marks inlined %v; the build should (base) or should not (refactor) inline fold", release, want)
		}
		for r, file := range runs {
			Flamediff(t, "ingest", "--dsn", dsn, "--app", "app", "--build", release, "--run", fmt.Sprint(r), file)
		}
		// The export of a stored build; a query's tree has a location per
		// frame, since its nodes are functions across builds (docs/EXPORT.md).
		out, _ := Flamediff(t, "export", "--dsn", dsn, "--app", "app", "--build", release, "--output", "pprof")
		export := filepath.Join(t.TempDir(), release+".pb.gz")
		if err := os.WriteFile(export, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		got := inlined(t, export)
		for fn := range want {
			if !got[fn] {
				t.Errorf("%s: pprof marks %s inlined in the runs, not in Flamediff's export", release, fn)
			}
		}
		for fn := range got {
			if !want[fn] {
				t.Errorf("%s: Flamediff's export marks %s inlined, pprof does not in the runs", release, fn)
			}
		}
	}
}
