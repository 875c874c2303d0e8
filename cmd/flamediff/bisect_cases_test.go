package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Regressions that are not one clean step, on the same program: one that
// a later commit undid (a slower layout, reverted) before another (the
// discount), which alone is bad's: each is named, the undone one as made
// by its commit and undone by the revert; and one split over two
// commits (surcharge's taxes, in two halves) beside an independent one
// (line wrapping in layout): the split is named as its two commits and
// the other as its own. Without the discount, bad carries no regression:
// the answer is none (exit 6), with a regression made and undone (two
// probes apart) named all the same. And a regression made, undone and
// made again in the same function: bad's is named as the last commit, not
// the first, and the first as undone by the revert.
func TestBisectNotOneStep(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the bisect test builds a Go program: go is not on PATH")
	}
	layout := func(subject, body string) bisectEdit {
		return bisectEdit{subject, "layout.go", "", "package main\n\n// layout places the lines of a receipt.\nfunc layout() {" + body + "}\n"}
	}
	surcharge := func(subject, body string) bisectEdit {
		return bisectEdit{subject, "surcharge.go", "", "package main\n\n// surcharge adds the taxes to a price.\nfunc surcharge() {" + body + "}\n"}
	}
	// Aligning the columns costs about 6% of the run (in the probes'
	// shares of the run, render's share moves by about 4%, over the 3%
	// threshold).
	align := "\n\twork(unit)\n"
	// Up to 60 runs a commit: a commit carrying half of the split sits on
	// the midpoint, and at 30 the quarters' searches ended undecided in
	// about one run of two (with costs in time or against the rest alike).
	flags := []string{"--max-runs", "60", "--batch", "5", "--min-base-share", "0.03", "--output", "json"}
	count := filepath.Join(t.TempDir(), "count")
	for _, c := range []struct {
		name     string
		plants   map[int]bisectEdit
		discount bool
		want     map[string][]int // culprit: the commits that made its regression
		undone   map[string][2]int
		code     int
	}{
		{"undone", map[int]bisectEdit{
			5:  layout("layout: align the columns", align),
			10: layout("Revert \"layout: align the columns\"", ""),
		}, true, map[string][]int{"main.price": {20}}, map[string][2]int{"main.render": {5, 10}}, 0},
		{"undone alone", map[int]bisectEdit{
			4:  layout("layout: align the columns", align),
			13: layout("Revert \"layout: align the columns\"", ""),
		}, false, map[string][]int{}, map[string][2]int{"main.render": {4, 13}}, exitNoRegression},
		{"undone and made again", map[int]bisectEdit{
			5:  layout("layout: align the columns", align),
			10: layout("Revert \"layout: align the columns\"", ""),
			18: layout("layout: align the columns, again", align),
		}, false, map[string][]int{"main.render": {18}}, map[string][2]int{"main.render": {5, 10}}, 0},
		{"split and independent", map[int]bisectEdit{
			8:  surcharge("surcharge: the national tax", "\n\twork(unit / 2)\n"),
			16: surcharge("surcharge: the regional tax", "\n\twork(unit)\n"),
			24: layout("layout: wrap long lines", "\n\twork(unit / 2)\n"),
		}, false, map[string][]int{"main.price": {8, 16}, "main.render": {24}}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			history := planted(c.plants, c.discount)
			repo, commits := bisectRepo(t, history)
			stdout, stderr, code := bisectCLI(t, repo, []string{"BENCH_COUNT=" + count},
				append([]string{"--good", commits[0], "--bad", commits[len(commits)-1]}, flags...)...)
			var a bisectJSON
			if err := json.Unmarshal([]byte(stdout), &a); err != nil || code != c.code {
				t.Fatalf("exit %d (%v), want %d:\n%s\n%s", code, err, c.code, stdout, stderr)
			}
			t.Logf("%d runs; stderr:\n%s", a.Runs, stderr)
			got, undone := map[string][]int{}, map[string][2]int{}
			for _, f := range a.Found {
				if f.Kind == "undone" {
					if len(f.Commits) != 1 || len(f.Undone) != 1 {
						t.Errorf("%s undone: made by %d commits and undone by %d, want one each", f.Culprit.Function, len(f.Commits), len(f.Undone))
						continue
					}
					undone[f.Culprit.Function] = [2]int{slices.Index(commits, f.Commits[0].Hash), slices.Index(commits, f.Undone[0].Hash)}
					continue
				}
				for _, fc := range f.Commits {
					got[f.Culprit.Function] = append(got[f.Culprit.Function], slices.Index(commits, fc.Hash))
				}
				if want := map[int]string{1: "one", 2: "split"}[len(c.want[f.Culprit.Function])]; f.Kind != want {
					t.Errorf("%s: %s, want %s", f.Culprit.Function, f.Kind, want)
				}
			}
			if !maps.EqualFunc(got, c.want, slices.Equal[[]int]) {
				t.Errorf("found %v, want %v (commits: %v)", got, c.want, history)
			}
			if !maps.Equal(undone, c.undone) && !(len(undone) == 0 && len(c.undone) == 0) {
				t.Errorf("undone %v (made by, undone by), want %v", undone, c.undone)
			}
		})
	}
}

// The example workflow (bisect-workflow.yml, beside action.yml) is a valid
// workflow by the schema @action-validator/cli checks against, the
// validator rejects a broken copy (a job without runs-on), and every flag
// its bisect command passes is one of bisect's.
func TestBisectWorkflow(t *testing.T) {
	validator, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", "action-validator"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(validator); err != nil {
		t.Fatalf("%v: run npm install (scripts/test.sh does)", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "bisect-workflow.yml"))
	if err != nil {
		t.Fatal(err)
	}
	workflow := string(raw)
	validate := func(text string) (string, error) {
		file := filepath.Join(t.TempDir(), "bisect.yml") // not action.yml: a workflow
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(validator, file).CombinedOutput()
		return string(out), err
	}
	if out, err := validate(workflow); err != nil {
		t.Errorf("bisect-workflow.yml is not a valid workflow: %v\n%s", err, out)
	}
	broken := strings.Replace(workflow, "    runs-on: ubuntu-latest\n", "", 1)
	if broken == workflow {
		t.Fatal("the workflow has no runs-on to remove")
	}
	if out, err := validate(broken); err == nil {
		t.Errorf("a job without runs-on passed the validator:\n%s", out)
	}
	if !strings.Contains(workflow, "workflow_dispatch:") || !strings.Contains(workflow, "flamediff bisect ") {
		t.Fatal("the workflow is not run by hand or does not bisect")
	}
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	commands["bisect"].setup(fs)
	_, command, _ := strings.Cut(workflow, "flamediff bisect ")
	command, _, _ = strings.Cut(command, "> bisect.md")
	seen := 0
	for _, word := range strings.Fields(command) {
		if name, ok := strings.CutPrefix(word, "--"); ok {
			seen++
			if fs.Lookup(name) == nil {
				t.Errorf("the workflow passes %s, not a flag of bisect", word)
			}
		}
	}
	if seen < 8 {
		t.Errorf("only %d flags read from the workflow's command:\n%s", seen, command)
	}
}

// Bad command lines get a clear error and exit 2, before anything is
// built: a missing command, an unknown revision, a bad that does not
// descend from good, --dsn without --app.
func TestBisectUsage(t *testing.T) {
	repo, commits := bisectRepo(t, bisectHistory[:3])
	base := []string{"bisect", "--repo", repo, "--build", "true", "--bench", "true"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no bench", []string{"bisect", "--repo", repo, "--good", commits[0], "--bad", commits[3], "--build", "true"}, "needs --good, --bad, --build and --bench"},
		{"unknown revision", append(base, "--good", "v9.9.9", "--bad", commits[3]), "--good: git rev-parse"},
		{"bad before good", append(base, "--good", commits[3], "--bad", commits[0]), "does not descend from --good"},
		{"dsn without app", append(base, "--good", commits[0], "--bad", commits[3], "--dsn", "clickhouse://127.0.0.1:1/x"), "--app go together"},
		{"max runs under the batch", append(base, "--good", commits[0], "--bad", commits[3], "--max-runs", "3"), "--max-runs (3) at least the batch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stderr, code := runBinary(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, c.want, stderr)
			}
		})
	}
}

// widthProgram measures github.com/mattn/go-runewidth's StringWidth on
// mixed text (ASCII, CJK, emoji) by the thread's CPU clock, with the
// module's source in ./runewidth, and writes it as a folded stack.
var widthProgram = map[string]string{
	"go.mod": "module widthbench\n\ngo 1.22\n\nrequire github.com/mattn/go-runewidth v0.0.0\n\nreplace github.com/mattn/go-runewidth => ./runewidth\n",
	"main.go": `package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/mattn/go-runewidth"
)

var text = strings.Repeat("Hello, 世界! こんにちは 🙂 width ", 30)

var sink int

func measure() {
	for range 400 {
		sink += runewidth.StringWidth(text)
	}
}

` + cpuClock + `
func main() {
	runtime.LockOSThread()
	t0 := cpu()
	measure()
	line := fmt.Sprintf("main.main;main.measure %d\n", cpu()-t0)
	if err := os.WriteFile(os.Getenv("FLAMEDIFF_PROFILE"), []byte(line), 0o600); err != nil {
		panic(err)
	}
}
`,
}

// A second real case: consecutive releases of github.com/mattn/go-runewidth
// from the Go module proxy, committed in release order under ./runewidth
// of a program that measures StringWidth. Its pull request #82 ("Replace
// uniseg with uax29", merged 2025-09-08) made StringWidth 60% to 74%
// faster in the module's own benchmarks; the first release with it is the
// first whose go.mod requires github.com/clipperhouse/uax29/v2 instead of
// github.com/rivo/uniseg (v0.0.19). bisect --improvement names that
// release's commit.
func TestBisectModuleReleases(t *testing.T) {
	const module = "github.com/mattn/go-runewidth"
	versions := []string{"v0.0.14", "v0.0.15", "v0.0.16", "v0.0.17", "v0.0.19", "v0.0.20"}
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "--quiet", "--initial-branch=main")
	for name, text := range widthProgram {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var commits []string
	want := -1
	for i, v := range versions {
		out, err := exec.Command("go", "mod", "download", "-json", module+"@"+v).Output()
		if err != nil {
			t.Fatalf("go mod download %s@%s: %v", module, v, err)
		}
		var m struct{ Dir, GoMod string }
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		if mod, err := os.ReadFile(m.GoMod); err != nil {
			t.Fatal(err)
		} else if want < 0 && strings.Contains(string(mod), "github.com/clipperhouse/uax29") {
			want = i
		}
		dst := filepath.Join(dir, "runewidth")
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		err = filepath.WalkDir(m.Dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(m.Dir, path)
			if err != nil {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "--quiet", "-m", "go-runewidth "+v)
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	if want < 1 {
		t.Fatalf("no release after the first requires uax29 (%d)", want)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(flamediffBinary(t), "bisect", "--repo", dir, "--ext", "folded", "--improvement",
		"--good", commits[0], "--bad", commits[len(commits)-1], "--max-runs", "30", "--batch", "5", "--min-base-share", "0.05",
		"--build", "go build -mod=mod -o wb .", "--bench", "./wb", "--output", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v:\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	var a bisectJSON
	if err := json.Unmarshal(stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if a.First != commits[want] || len(a.Found) != 1 || a.Found[0].Kind != "one" || a.Found[0].Culprit.Function != "main.measure" {
		t.Errorf("named %s (%+v), want %s, the commit of go-runewidth %s", a.First, a.Found, commits[want], versions[want])
	}
}
