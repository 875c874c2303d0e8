package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/bisect"
)

// bisectProgram is the first commit of the program bisected: three
// functions of busy work, each timed by the thread's CPU clock and written
// as a folded stack under its Go frame name to $FLAMEDIFF_PROFILE (about
// 30 ms a run).
var bisectProgram = map[string]string{
	"go.mod": "module shop\n\ngo 1.22\n",
	"work.go": `package main

import (
	"syscall"
	"unsafe"
)

` + busyWork + "\n" + cpuClock,
	"main.go": `package main

import (
	"fmt"
	"os"
	"runtime"
)

const unit = 2000000

func main() {
	runtime.LockOSThread()
	var lines string
	for _, f := range []struct {
		name string
		fn   func()
	}{{"main.parse", parse}, {"main.price", price}, {"main.render", render}} {
		t0 := cpu()
		f.fn()
		lines += fmt.Sprintf("main.main;%s %d\n", f.name, cpu()-t0)
	}
	if err := os.WriteFile(os.Getenv("FLAMEDIFF_PROFILE"), []byte(lines), 0o600); err != nil {
		panic(err)
	}
}
`,
	"parse.go":     "package main\n\nfunc parse() {\n\twork(3 * unit)\n}\n",
	"price.go":     "package main\n\nfunc price() {\n\twork(4 * unit)\n\tsurcharge()\n}\n",
	"render.go":    "package main\n\nfunc render() {\n\twork(3 * unit)\n\tlayout()\n}\n",
	"surcharge.go": "package main\n\n// surcharge adds the taxes to a price.\nfunc surcharge() {}\n",
	"layout.go":    "package main\n\n// layout places the lines of a receipt.\nfunc layout() {}\n",
}

// bisectEdit is one commit: its subject and its change of the files
// (old text replaced by new; an empty old writes the whole file).
type bisectEdit struct {
	subject        string
	file, old, new string
}

// bisectHistory is the 25 commits after the first: refactors, features
// and docs that keep the cost, one that does not build (12, fixed by 13),
// and one that makes price do 12.5% more work, 5% of the total (17).
var bisectHistory = []bisectEdit{
	{"docs: add a README", "README.md", "", "# shop\n\nPrices a basket.\n"},
	{"parse: name its work", "parse.go", "func parse() {\n\twork(3 * unit)", "const parseRounds = 3\n\nfunc parse() {\n\twork(parseRounds * unit)"},
	{"add a version", "version.go", "", "package main\n\nconst version = \"1.0\"\n\nfunc versionLine() string { return \"shop \" + version }\n"},
	{"render: split the header from the body", "render.go", "\twork(3 * unit)\n", "\theader()\n\tbody()\n}\n\nfunc header() { work(unit / 2) }\n\nfunc body() {\n\twork(5 * unit / 2)\n"},
	{"work: say what it computes", "work.go", "func work(n int) {", "// work runs n rounds of xorshift64.\nfunc work(n int) {"},
	{"price: tiers", "price.go", "\twork(4 * unit)\n", "\tfor _, tier := range []int{2, 2} {\n\t\twork(tier * unit)\n\t}\n"},
	{"add a config reader", "config.go", "", "package main\n\nimport \"os\"\n\nfunc configPath() string {\n\tif p := os.Getenv(\"SHOP_CONFIG\"); p != \"\" {\n\t\treturn p\n\t}\n\treturn \"shop.conf\"\n}\n"},
	{"main: -version prints the version", "main.go", "\truntime.LockOSThread()\n", "\tif len(os.Args) > 1 && os.Args[1] == \"-version\" {\n\t\tfmt.Println(versionLine())\n\t\treturn\n\t}\n\truntime.LockOSThread()\n"},
	{"parse: check the rounds", "parse.go", "func parse() {\n", "func parse() {\n\tif parseRounds < 1 {\n\t\tpanic(\"no rounds\")\n\t}\n"},
	{"add a test", "shop_test.go", "", "package main\n\nimport \"testing\"\n\nfunc TestVersion(t *testing.T) {\n\tif versionLine() != \"shop 1.0\" {\n\t\tt.Fatal(versionLine())\n\t}\n}\n"},
	{"render: name the body's share", "render.go", "func body() {\n\twork(5 * unit / 2)", "const bodyShare = 5\n\nfunc body() {\n\twork(bodyShare * unit / 2)"},
	{"currency: start (does not build)", "currency.go", "", "package main\n\nfunc currency() string {\n\treturn \"EUR\" +\n}\n"},
	{"currency: finish", "currency.go", "\"EUR\" +\n", "\"EUR\"\n"},
	{"price: declare the tiers", "price.go", "func price() {", "var priceTiers = []int{2, 2}\n\nfunc price() {"},
	{"price: use the declared tiers", "price.go", "range []int{2, 2}", "range priceTiers"},
	{"docs: usage", "README.md", "Prices a basket.\n", "Prices a basket.\n\n    go build && ./shop\n"},
	{"parse: split the rounds", "parse.go", "work(parseRounds * unit)", "for range parseRounds {\n\t\twork(unit)\n\t}"},
	{"price: apply the discount rules", "price.go", "\t\twork(tier * unit)\n\t}\n", "\t\twork(tier * unit)\n\t}\n\tdiscount()\n}\n\n// discount checks every rule against the basket.\nfunc discount() {\n\twork(unit / 2)\n"},
	{"render: add a footer", "render.go", "func header() { work(unit / 2) }", "func header() { work(unit / 4); footer() }\n\nfunc footer() { work(unit / 4) }"},
	{"version 1.1", "version.go", "\"1.0\"", "\"1.1\""},
	{"fix the version test", "shop_test.go", "shop 1.0", "shop 1.1"},
	{"config: a default directory", "config.go", "\"shop.conf\"", "\"/etc/shop/shop.conf\""},
	{"main: print the profile's path with -v", "main.go", "\tif err := os.WriteFile", "\tif len(os.Args) > 1 && os.Args[1] == \"-v\" {\n\t\tfmt.Fprintln(os.Stderr, os.Getenv(\"FLAMEDIFF_PROFILE\"))\n\t}\n\tif err := os.WriteFile"},
	{"docs: the benchmark", "README.md", "go build && ./shop\n", "go build && ./shop\n\nFLAMEDIFF_PROFILE names the profile it writes.\n"},
	{"version 1.2", "version.go", "\"1.1\"", "\"1.2\""},
}

const (
	bisectBroken = 12 // the commit that does not build (1-based after good)
	bisectSlow   = 18 // the commit that slows price
)

// planted inserts edits into bisectHistory (without its slowdown, with
// discount false): at[k] becomes commit k (1-based after good) of the
// history returned, in increasing k.
func planted(at map[int]bisectEdit, discount bool) []bisectEdit {
	h := slices.Clone(bisectHistory)
	if !discount {
		h = slices.Delete(h, bisectSlow-1, bisectSlow)
	}
	keys := slices.Sorted(maps.Keys(at))
	for _, k := range keys {
		h = slices.Insert(h, k-1, at[k])
	}
	return h
}

// gitIn runs git in dir as the author Ada, failing the test on an error,
// and returns its trimmed output.
func gitIn(t *testing.T, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// bisectRepo commits the program and a history in a new repository and
// returns its directory and the commits, good first.
func bisectRepo(t *testing.T, history []bisectEdit) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	git := gitIn(t, dir)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet", "--initial-branch=main")
	for name, text := range bisectProgram {
		write(name, text)
	}
	git("add", "-A")
	git("commit", "--quiet", "-m", "shop: price a basket")
	commits := []string{git("rev-parse", "HEAD")}
	for _, e := range history {
		if e.old == "" {
			write(e.file, e.new)
		} else {
			raw, err := os.ReadFile(filepath.Join(dir, e.file))
			if err != nil || !strings.Contains(string(raw), e.old) {
				t.Fatalf("%s: %s lacks %q (%v)", e.subject, e.file, e.old, err)
			}
			write(e.file, strings.Replace(string(raw), e.old, e.new, 1))
		}
		git("add", "-A")
		git("commit", "--quiet", "-m", e.subject)
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	return dir, commits
}

// bisectCLI runs the built flamediff bisect in repo and returns stdout,
// stderr and the exit code.
func bisectCLI(t *testing.T, repo string, env []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(flamediffBinary(t), append([]string{"bisect", "--repo", repo, "--ext", "folded",
		"--build", "go build -o shop .", "--bench", `echo run >> "$BENCH_COUNT" && ./shop`}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// The bisection of a real program's history through files: it names the
// commit that slowed price and price as the function it changed, skips
// the commit that does not build, decides every tested commit as the
// planted truth has it within the stated budget of runs, and a second call
// on the same --out resumes from the kept runs without running anything.
// Between good and a commit before the slowdown it says there is no
// regression, and without probes (TestBisectNotOneStep probes such a
// range) tests no commit in between.
func TestBisectFiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the bisect test builds a Go program: go is not on PATH")
	}
	repo, commits := bisectRepo(t, bisectHistory)
	good, bad, slow := commits[0], commits[len(commits)-1], commits[bisectSlow]
	const maxRuns = 30
	flags := []string{"--max-runs", "30", "--batch", "5", "--min-base-share", "0.03"}
	count := filepath.Join(t.TempDir(), "count")
	env := []string{"BENCH_COUNT=" + count}
	t.Run("one slowdown", func(t *testing.T) {
		out := t.TempDir()
		args := append([]string{"--good", good, "--bad", bad, "--out", out}, flags...)
		// Interrupted (Ctrl-C) once the search of the commits begins, it
		// resumes from the runs it kept and runs none of them again.
		interrupted := interruptBisect(t, repo, env, "hunting the regression", args...)
		stdout, stderr, code := bisectCLI(t, repo, env, args...)
		t.Logf("stderr:\n%s", stderr)
		if !strings.Contains(stderr, "resuming the search in "+out) {
			t.Errorf("the second call did not resume:\n%s", stderr)
		}
		if first, _, _ := strings.Cut(stdout, "\n"); code != 0 || first != "first bad commit: "+slow {
			t.Fatalf("exit %d, want 0 and commit %s (%s):\n%s", code, slow, bisectHistory[bisectSlow-1].subject, stdout)
		}
		t.Logf("stdout:\n%s", stdout)
		ran := benchRuns(t, count)
		stdout, _, code = bisectCLI(t, repo, env, append(args, "--output", "json")...)
		if again := benchRuns(t, count); code != 0 || again != ran {
			t.Fatalf("resuming exited %d and ran %d more runs, want 0 and none", code, again-ran)
		}
		var a bisectJSON
		if err := json.Unmarshal([]byte(stdout), &a); err != nil {
			t.Fatal(err)
		}
		if len(a.Found) != 1 || a.Found[0].Kind != "one" || a.Found[0].Culprit.Function != "main.price" {
			t.Fatalf("found %+v, want main.price's regression made by one commit", a.Found)
		}
		f := a.Found[0]
		if c := f.Commits[0]; c.Hash != slow || c.Subject != bisectHistory[bisectSlow-1].subject || c.Author != "Ada <ada@example.com>" || !c.Matched {
			t.Errorf("first bad commit %+v, want %s by Ada, changing main.price", c, slow)
		}
		index := map[string]int{}
		for i, c := range commits {
			index[c] = i
		}
		skipped := false
		for _, s := range f.Steps {
			i := index[s.Commit]
			want := map[bool]string{true: "carries", false: "clean"}[i >= bisectSlow]
			if i == bisectBroken {
				want, skipped = "skipped", true
			}
			// The whole step's check, a quarter away, may end undecided
			// within --max-runs; never on the wrong side.
			if s.Outcome != want && !(s.At != 0.5 && s.Outcome == "undecided") {
				t.Errorf("commit %d (%s) at %.0f%%: %s, want %s", i, s.Commit, 100*s.At, s.Outcome, want)
			}
		}
		if !skipped {
			t.Errorf("the search never met the commit that does not build: %+v", f.Steps)
		}
		// Every run kept is counted once; the interrupted call's last run
		// may have been cut short and not kept. A probe runs 2 batches for
		// its verdict, and up to --max-runs when the culprit's cost is read
		// there.
		if budget := (2+bisect.Searches*a.Budget.PerSearch)*maxRuns + len(a.Probes)*maxRuns; len(a.Probes) != 8 || a.Runs > budget || ran < a.Runs || ran > a.Runs+1 || interrupted < 2*maxRuns {
			t.Errorf("%d runs kept, the benchmark ran %d times (%d before the interruption), want them at most the budget of %d (%d probes) and each run once",
				a.Runs, ran, interrupted, budget, len(a.Probes))
		}
		// The pull-request comment and the report, from the kept runs: only
		// the report's two commits are topped up to --max-runs.
		report := filepath.Join(t.TempDir(), "bisect.html")
		md, _, code := bisectCLI(t, repo, env, append(args, "--output", "markdown", "--report", report)...)
		if more := benchRuns(t, count) - ran; code != 0 || !strings.HasPrefix(md, "first bad commit: "+slow+"\n\n### Flamediff bisect\n") || more > 2*maxRuns {
			t.Fatalf("markdown: exit %d, %d more runs:\n%s", code, more, md)
		}
		for _, want := range []string{"**main.price**", "| " + short(slow) + " | price: apply the discount rules | 50% | carries |", "| " + short(commits[bisectBroken]) + " | currency: start (does not build) | 50% | skipped |"} {
			if !strings.Contains(md, want) {
				t.Errorf("the markdown lacks %q:\n%s", want, md)
			}
		}
		_, data := reportData(t, report)
		frames, err := json.Marshal(data.Frames)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(data.Title, short(slow)+" price: apply the discount rules against ") || !bytes.Contains(frames, []byte("main.price")) {
			t.Errorf("the report of the commit: %q, %d frames", data.Title, len(data.Frames))
		}
		// Judged as bad against good was (--min-base-share 0.03, not the
		// default), with the commit's runs in its run details.
		judged, runs := 0, 0
		for _, raw := range data.Frames {
			var f struct {
				Schema struct {
					Name string
					Meta struct {
						Custom struct {
							Verdict struct {
								Result    string
								MinChange float64
							}
						}
					}
				}
			}
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			v := f.Schema.Meta.Custom.Verdict
			switch f.Schema.Name {
			case "culprits":
				if v.Result != "FAIL" || v.MinChange != 0.03 {
					t.Errorf("the report's verdict: %s at a minimum change of %g, want FAIL at bisect's 0.03", v.Result, v.MinChange)
				}
				judged++
			case "runs":
				runs++
			}
		}
		if judged == 0 || runs != 1 {
			t.Errorf("the report has %d culprits frames and %d runs frames, want them both", judged, runs)
		}
	})
	t.Run("one slowdown, stored", func(t *testing.T) {
		dsn := chtest.DSN(t)
		mustRun(t, "migrate", "--dsn", dsn)
		stdout, stderr, code := bisectCLI(t, repo, env, append([]string{"--good", good, "--bad", bad, "--dsn", dsn, "--app", "shop", "--output", "json"}, flags...)...)
		var a bisectJSON
		if err := json.Unmarshal([]byte(stdout), &a); err != nil || code != 0 || a.First != slow || len(a.Found) != 1 {
			t.Fatalf("exit %d (%v), want 0 and %s:\n%s\n%s", code, err, slow, stdout, stderr)
		}
		// Every tested commit is a build, in the history's order, with its
		// runs; a skipped one has none.
		tested := map[string]bool{short(good): true, short(bad): true}
		for _, s := range a.Found[0].Steps {
			tested[short(s.Commit)] = s.Outcome != "skipped"
		}
		for _, p := range a.Probes {
			tested[short(p.Commit)] = p.Skipped == ""
		}
		var want []string
		for _, c := range commits {
			if tested[short(c)] {
				want = append(want, short(c))
			}
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "builds", "--dsn", dsn, "--app", "shop")), "\n")[1:] {
			got = append(got, strings.Fields(line)[0])
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("stored builds %v, want the tested commits in order %v", got, want)
		}
		// The slowing commit's stored changes mark its culprit modified in
		// a stored comparison, as the evolution matrix reads them.
		model := `{"queryType":"diff","app":"shop","head":{"builds":["` + short(slow) + `"]},"base":{"builds":["` + short(good) + `"]}}`
		var v struct {
			Regressions []struct {
				Function string
				Modified bool
			}
		}
		if err := json.Unmarshal([]byte(mustRun(t, "query", "--dsn", dsn, "--model", model, "--output", "verdict")), &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Regressions) == 0 || v.Regressions[0].Function != "main.price" || !v.Regressions[0].Modified {
			t.Errorf("stored diff of the slowing commit: %+v, want main.price modified", v.Regressions)
		}
	})
	t.Run("no regression", func(t *testing.T) {
		stdout, stderr, code := bisectCLI(t, repo, env, append([]string{"--good", good, "--bad", commits[bisectSlow-1], "--probes", "0"}, flags...)...)
		if first, _, _ := strings.Cut(stdout, "\n"); code != exitNoRegression || first != "no regression between good and bad" {
			t.Fatalf("exit %d, want %d and no regression:\n%s\n%s", code, exitNoRegression, stdout, stderr)
		}
		if strings.Contains(stderr, "building "+short(commits[1])) {
			t.Errorf("it tested commits between good and bad without a regression:\n%s", stderr)
		}
	})
}

// interruptBisect starts bisect and interrupts it as Ctrl-C does when its
// progress first says at; it returns how often the benchmark ran.
func interruptBisect(t *testing.T, repo string, env []string, at string, args ...string) int {
	t.Helper()
	cmd := exec.Command(flamediffBinary(t), append([]string{"bisect", "--repo", repo, "--ext", "folded",
		"--build", "go build -o shop .", "--bench", `echo run >> "$BENCH_COUNT" && ./shop`}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), at) {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_, _ = io.Copy(&log, stderr)
	if err := cmd.Wait(); err == nil {
		t.Fatalf("bisect was not interrupted at %q:\n%s", at, log.String())
	}
	return benchRuns(t, env[0][len("BENCH_COUNT="):])
}

// bisectJSON is bisect's --output json, as the tests read it.
type bisectJSON struct {
	First string
	Found []struct {
		Culprit struct{ Function string }
		Kind    string
		Commits []struct {
			Hash, Subject, Author string
			Matched               bool
		}
		Range  []string
		Peak   string
		Undone []struct{ Hash string }
		Steps  []struct {
			Commit, Outcome string
			At              float64
		}
	}
	Probes []struct {
		Commit  string
		Skipped string
	}
	Budget struct{ PerSearch int }
	Runs   int
}

// benchRuns is how often the benchmark ran.
func benchRuns(t *testing.T, count string) int {
	raw, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), "run")
}
