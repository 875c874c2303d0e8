package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/pkg/bisect"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
	"github.com/flamediff/flamediff/pkg/web"
)

// Exit codes of bisect besides 0 (a first bad commit named) and
// exitInconclusive, 5 (it could not decide): docs/BISECT.md.
const exitNoRegression = 6

// bisectCmd finds the commit between good and bad that made bad's
// regression, testing each commit with a sequential test whose error rates
// hold over the whole search (pkg/bisect).
func bisectCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	var r bisectRun
	fs.StringVar(&r.good, "good", "", "the `REV` without the regression")
	fs.StringVar(&r.bad, "bad", "", "the `REV` with it (a descendant of --good)")
	fs.StringVar(&r.build, "build", "", "shell `CMD` that builds the commit under test, run in its work tree (a failure skips the commit)")
	fs.StringVar(&r.bench, "bench", "", "shell `CMD` that runs the benchmark once in the commit's work tree and writes a profile to $FLAMEDIFF_PROFILE (a failure skips the commit)")
	fs.StringVar(&r.repo, "repo", ".", "the git work tree `DIR` (it is never checked out: commits are tested in a private clone)")
	fs.StringVar(&r.out, "out", "", "`DIR` that keeps every run's profile and the search's state: the same command resumes there after an interruption (default: a temporary directory)")
	fs.StringVar(&r.ext, "ext", "pb.gz", "the profile file's extension ($FLAMEDIFF_PROFILE ends with it)")
	fs.IntVar(&r.maxRuns, "max-runs", 30, "the most runs of a commit (and of good and of bad)")
	fs.IntVar(&r.batch, "batch", 5, "the runs added between looks")
	fs.IntVar(&r.extra, "extra-tests", 2, "tests allowed beyond a clean bisection's, for skipped and undecided commits")
	fs.Float64Var(&r.alpha, "alpha", 0.05, "the chance of naming a wrong commit over the whole search")
	fs.Float64Var(&r.beta, "beta", 0.05, "the chance of missing a regression of --min-base-share between good and bad")
	fs.StringVar(&r.output, "output", "table", "table, markdown (a pull request comment) or json")
	fs.BoolVar(&r.improvement, "improvement", false, "look for the commits that made bad faster than good (a speed-up or a fix) instead of slower")
	fs.StringVar(&r.report, "report", "", "write `FILE`, an HTML report of the first bad commit against the commit before it (docs/REPORT.md)")
	r.minBaseShare = minBaseShareFlag(fs)
	r.parse = parseFlags(fs)
	r.dsn = dsnFlag(fs)
	fs.StringVar(&r.app, "app", "", "with --dsn: the `APP` every tested commit is stored under, as a build named by its short hash with its source changes")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("unexpected argument %q", args[0])}
		}
		r.ctx, r.log = ctx, fs.Output()
		return r.run(out)
	}
}

// bisectRun is one search: its flags, its clone and what it measured.
type bisectRun struct {
	good, bad, build, bench, repo, out, ext, output string
	report                                          string
	improvement                                     bool
	maxRuns, batch, extra                           int
	alpha, beta                                     float64
	minBaseShare                                    *float64
	parse                                           *parseOptions
	dsn                                             *storeFlags
	app                                             string

	ctx   context.Context
	log   io.Writer
	opts  ingest.Options
	clone string // the private clone the commits are checked out in
	state bisectState
	built map[string]string // commit -> its built work tree
	// With --dsn: the store, its rules and each commit's first run's
	// start (its commit time, increasing along the line).
	store *storage.Store
	rules *sysframes.Rules
	start map[string]time.Time
	unit  string // the profiles' unit
}

// bisectState is the search's record in --out: what each commit is and
// why a commit was skipped. The profiles beside it are the runs; with the
// same flags, the search replays them to where it stopped.
type bisectState struct {
	Good, Bad string
	Skipped   map[string]string `json:"skipped"`
}

// bisectStep is one test of a commit, as reported.
type bisectStep struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	// At is the share of the regression the test asked about.
	At      float64     `json:"at"`
	Outcome string      `json:"outcome"`
	Step    bisect.Step `json:"step"`
	Skipped string      `json:"skipped,omitempty"`
}

// bisectFound is what the search found of one regression: one culprit of
// bad against good (none: the run totals).
type bisectFound struct {
	Culprit *verdict.Culprit `json:"culprit,omitempty"`
	// Kind is one, split or undecided (bisect.Finding).
	Kind string `json:"kind"`
	// Commits are the commit that made the regression, or the two that
	// made it between them (split).
	Commits []bisectCommit `json:"commits,omitempty"`
	// Range holds the commits among which it was made (undecided).
	Range []string     `json:"range,omitempty"`
	Why   string       `json:"why,omitempty"`
	Steps []bisectStep `json:"steps"`
	// Beyond are the commits tested clearly past bad or before good
	// (bisect.Finding.Beyond): the cost went further and came back.
	Beyond []string `json:"beyond,omitempty"`
}

// bisectCommit is a commit found, where a user acts.
type bisectCommit struct {
	Hash, Subject, Author, Date string
	// Share is the commit's share of the regression at its last test
	// (nil when it was not tested: bad itself).
	Share *bisect.Step `json:"share,omitempty"`
	// Changed is the functions it changed (changes --git-diff against
	// its first parent; nil when unknown), Matched the culprit among them.
	Changed *changes.Changes `json:"changed,omitempty"`
	Matched bool             `json:"matched"`
}

// bisectAnswer is the answer in every output.
type bisectAnswer struct {
	Result string `json:"result"` // found, none, undecided
	// Improvement says the search was for bad's speed-up (--improvement).
	Improvement bool `json:"improvement,omitempty"`
	// First is the earliest commit found.
	First      string            `json:"first,omitempty"`
	Why        string            `json:"why,omitempty"`
	Regression *verdict.Verdict  `json:"regression"`
	Found      []bisectFound     `json:"found"`
	Budget     map[string]any    `json:"budget"`
	Runs       int               `json:"runs"`
	Skipped    map[string]string `json:"skipped,omitempty"`
}

func (r *bisectRun) run(out io.Writer) error {
	switch {
	case r.good == "" || r.bad == "" || r.build == "" || r.bench == "":
		return usageError{errors.New("bisect needs --good, --bad, --build and --bench")}
	case r.batch < 1 || r.maxRuns < r.batch || r.maxRuns < 2:
		return usageError{fmt.Errorf("--batch (%d) must be 1 or more and --max-runs (%d) at least the batch and 2", r.batch, r.maxRuns)}
	case !(*r.minBaseShare > 0):
		return usageError{fmt.Errorf("--min-base-share (%v) must be positive", *r.minBaseShare)}
	case r.output != "table" && r.output != "markdown" && r.output != "json":
		return usageError{fmt.Errorf("--output must be table, markdown or json, not %q", r.output)}
	case strings.ContainsAny(r.ext, "/\\"):
		return usageError{fmt.Errorf("--ext %q must not hold a path", r.ext)}
	case r.dsn.set() != (r.app != ""):
		return usageError{errors.New("--dsn (or --settings) and --app go together")}
	}
	var err error
	if r.opts, err = r.parse.options(); err != nil {
		return err
	}
	good, err := r.git(r.repo, "rev-parse", "--verify", "--end-of-options", r.good+"^{commit}")
	if err != nil {
		return usageError{fmt.Errorf("--good: %w", err)}
	}
	bad, err := r.git(r.repo, "rev-parse", "--verify", "--end-of-options", r.bad+"^{commit}")
	if err != nil {
		return usageError{fmt.Errorf("--bad: %w", err)}
	}
	list, err := r.git(r.repo, "rev-list", "--reverse", "--first-parent", "--ancestry-path", good+".."+bad)
	if err != nil {
		return err
	}
	commits := strings.Fields(list)
	if len(commits) == 0 || commits[len(commits)-1] != bad {
		return usageError{fmt.Errorf("--bad %s does not descend from --good %s on its first-parent line", r.bad, r.good)}
	}
	budget := bisect.Budget{Alpha: r.alpha, Commits: len(commits), Extra: r.extra}
	if err := budget.Check(); err != nil {
		return usageError{err}
	}
	if err := r.open(good, bad); err != nil {
		return err
	}
	defer r.close()
	if r.dsn.set() {
		if r.store, r.rules, err = r.dsn.open(); err != nil {
			return err
		}
		defer r.store.Close()
		if err := r.times(append([]string{good}, commits...)); err != nil {
			return err
		}
	}

	a := &bisectAnswer{Improvement: r.improvement, Budget: map[string]any{"alpha": r.alpha, "regression": budget.Regression(), "perSearch": budget.PerSearch(),
		"firstTest": budget.PerTest(0, 0.5), "commits": len(commits), "maxRuns": r.maxRuns, "batch": r.batch}}
	fmt.Fprintf(r.log, "bisect: %d commits after %s up to %s; a wrong commit under %g over the search (%s under %.2g, each test of the largest culprit under %.2g)\n",
		len(commits), short(good), short(bad), r.alpha, r.sides(), budget.Regression(), budget.PerTest(0, 0.5))
	reg, badRuns, err := r.regression(good, bad, budget.Regression())
	if err != nil {
		return err
	}
	a.Regression = reg
	if reg.Result != verdict.Fail {
		a.Result, a.Why, a.Runs = "none", reg.Why, 2*badRuns
		if reg.Result != verdict.Pass {
			a.Result = "undecided"
		}
		return r.finish(out, a)
	}
	// The steps' reference: good and bad at --max-runs each, so that
	// their noise does not bound the steps' (docs/BISECT.md). The
	// culprits are those of all these runs (the deciding look may have
	// been too early to name every one).
	if err := r.runs(r.maxRuns, good, bad); err != nil {
		return fmt.Errorf("good or bad cannot be benchmarked: %w", err)
	}
	b, m, err := r.change(good, bad, r.maxRuns, budget.Regression())
	if err != nil {
		return err
	}
	all, err := query.Judge{MinBaseShare: *r.minBaseShare}.Verdict(b, query.TreeOptions(b, m, r.rules))
	if err != nil {
		return err
	}
	if len(all.Regressions) >= len(reg.Regressions) {
		reg.Regressions = all.Regressions
	}
	var names []string
	for _, c := range reg.Regressions {
		names = append(names, fmt.Sprintf("%s %s", c.Function, verdict.Percent(float64(c.Delta))))
	}
	fmt.Fprintf(r.log, "bisect: culprits of %s at %d runs each: %s\n", r.sides(), r.maxRuns, strings.Join(names, ", "))
	targets := []*verdict.Culprit{nil} // the run totals
	if len(reg.Regressions) > 0 {
		targets = targets[:0]
		for i := range reg.Regressions[:min(len(reg.Regressions), bisect.MaxTargets)] {
			targets = append(targets, &reg.Regressions[i])
		}
	}
	a.Result = "found"
	for j, culprit := range targets {
		found, err := r.hunt(j, culprit, good, bad, commits, budget)
		if err != nil {
			return err
		}
		if found.Kind == bisect.Unplaced {
			a.Result = "undecided"
		}
		for _, c := range found.Commits {
			if a.First == "" || slices.Index(commits, c.Hash) < slices.Index(commits, a.First) {
				a.First = c.Hash
			}
		}
		a.Found = append(a.Found, found)
	}
	a.Runs, a.Skipped = r.have(good)+r.have(bad), r.state.Skipped
	for _, c := range commits[:len(commits)-1] {
		a.Runs += r.have(c)
	}
	if r.report != "" && a.First != "" {
		i := slices.Index(commits, a.First)
		before := good
		if i > 0 {
			before = commits[i-1]
		}
		if err := r.writeReport(before, a.First); err != nil {
			return err
		}
	}
	return r.finish(out, a)
}

// writeReport writes --report: the diff of commit c's runs against those
// of the commit before it, as flamediff report draws one.
func (r *bisectRun) writeReport(before, c string) error {
	b, m, err := r.load(before, r.have(before), c, r.have(c), r.alpha)
	if err != nil {
		return err
	}
	m.Variants = true
	answer, err := query.Render(b, m, r.rules, r.unit)
	if err != nil {
		return err
	}
	m.QueryType, m.Variants = query.Functions, false
	functions, err := query.Render(b, m, r.rules, r.unit)
	if err != nil {
		return err
	}
	f, err := os.Create(r.report) // #nosec G304 -- the user names the file to write
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s %s against %s", short(c), r.subject(c), short(before))
	if err := web.WriteReport(f, web.Report{Title: title, Frames: append(answer, functions...)}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hunt finds the commits that made the regression of culprit (nil: of the
// run totals), the j-th of bad against good (bisect.Hunt).
func (r *bisectRun) hunt(j int, culprit *verdict.Culprit, good, bad string, commits []string, budget bisect.Budget) (bisectFound, error) {
	var target []string
	name := "the run totals"
	if culprit != nil {
		target, name = []string{culprit.Function}, culprit.Function
	}
	fmt.Fprintf(r.log, "bisect: hunting the regression of %s\n", name)
	found := bisectFound{Culprit: culprit}
	f, err := bisect.Hunt(len(commits), budget.PerSearch(), func(i int, at float64) (string, bisect.Step, error) {
		c := commits[i-1]
		plan := stats.Plan{Batch: r.batch, MaxRuns: r.maxRuns, Alpha: budget.PerTest(j, at)}
		step, skip, err := r.test(c, good, bad, target, plan, at)
		bs := bisectStep{Commit: c, Subject: r.subject(c), At: at, Outcome: step.Decision, Step: step, Skipped: skip}
		if skip != "" {
			bs.Outcome = bisect.Skipped
			fmt.Fprintf(r.log, "bisect: %s %s: skipped (%s)\n", short(c), bs.Subject, skip)
		}
		found.Steps = append(found.Steps, bs)
		return bs.Outcome, step, err
	})
	if err != nil {
		return found, err
	}
	found.Kind, found.Why = f.Kind, f.Why
	for _, i := range f.Beyond() {
		found.Beyond = append(found.Beyond, commits[i-1])
	}
	if f.Kind == bisect.Unplaced {
		found.Range = commits[f.Lo:f.Hi]
		return found, nil
	}
	for _, i := range f.Commits {
		c := commits[i-1]
		info, err := r.info(c)
		if err != nil {
			return found, err
		}
		for k := len(f.Tests) - 1; k >= 0; k-- {
			if f.Tests[k].Commit == i && f.Tests[k].Outcome != bisect.Skipped {
				info.Share = &f.Tests[k].Step
				break
			}
		}
		parent := good
		if i > 1 {
			parent = commits[i-2]
		}
		if ch, err := changes.FromGitDiff(r.clone, parent, c); err == nil {
			info.Changed = &ch
			if culprit != nil {
				for _, list := range [][]string{ch.Modified, ch.Added, ch.Removed} {
					info.Matched = info.Matched || slices.Contains(list, culprit.Function)
				}
			}
		} else {
			fmt.Fprintf(r.log, "bisect: the functions %s changed are unknown: %v\n", short(c), err)
		}
		found.Commits = append(found.Commits, *info)
	}
	return found, nil
}

// change is the diff the search looks for, of n runs a side: bad against
// good, or good against bad with --improvement (so that the change is a
// regression of its head either way).
func (r *bisectRun) change(good, bad string, n int, alpha float64) (*tree.Builder, query.Model, error) {
	if r.improvement {
		return r.load(bad, n, good, n, alpha)
	}
	return r.load(good, n, bad, n, alpha)
}

// sides names the diff change loads.
func (r *bisectRun) sides() string {
	if r.improvement {
		return "good against bad"
	}
	return "bad against good"
}

// regression tests bad against good with the sequential test of query
// --max-runs, alternating their runs a batch at a time, and returns the
// deciding look's verdict and the runs a side.
func (r *bisectRun) regression(good, bad string, alpha float64) (*verdict.Verdict, int, error) {
	plan := &stats.Plan{Batch: r.batch, MaxRuns: r.maxRuns, Alpha: alpha, Beta: r.beta, MinBaseShare: *r.minBaseShare}
	if err := plan.Check(); err != nil {
		return nil, 0, usageError{err}
	}
	for n := r.batch; ; n = min(n+r.batch, r.maxRuns) {
		if err := r.runs(n, good, bad); err != nil {
			return nil, 0, fmt.Errorf("good or bad cannot be benchmarked: %w", err)
		}
		b, m, err := r.change(good, bad, n, alpha)
		if err != nil {
			return nil, 0, err
		}
		v, err := query.Judge{MinBaseShare: *r.minBaseShare, Plan: plan}.Verdict(b, query.TreeOptions(b, m, r.rules))
		if err != nil {
			return nil, 0, err
		}
		fmt.Fprintf(r.log, "bisect: %s at %d runs each: %s: %s\n", r.sides(), n, v.Result, v.Why)
		if v.Result != verdict.Continue {
			return v, n, nil
		}
	}
}

// test is a commit's sequential test against good and bad on the target
// culprits' per-run costs, at share at of the regression: its last look,
// and why it was skipped ("" when it was not).
func (r *bisectRun) test(c, good, bad string, target []string, plan stats.Plan, at float64) (bisect.Step, string, error) {
	goodN, badN := r.have(good), r.have(bad)
	_, badCost, err := r.costs(good, goodN, bad, badN, target)
	if err != nil {
		return bisect.Step{}, "", err
	}
	if r.improvement { // the change is a fall of the cost: measure it rising
		negate(badCost)
	}
	for n := r.batch; ; n = min(n+r.batch, r.maxRuns) {
		if err := r.runs(n, c); err != nil {
			var skip skipError
			if errors.As(err, &skip) {
				r.state.Skipped[c] = skip.Error()
				return bisect.Step{}, skip.Error(), r.save()
			}
			return bisect.Step{}, "", err
		}
		goodCost, cost, err := r.costs(good, goodN, c, n, target)
		if err != nil {
			return bisect.Step{}, "", err
		}
		if r.improvement {
			negate(goodCost)
			negate(cost)
		}
		step, err := bisect.Classify(plan, at, goodCost, badCost, cost)
		if err != nil {
			return bisect.Step{}, "", err
		}
		fmt.Fprintf(r.log, "bisect: %s %s: %s at %d runs: %s\n", short(c), r.subject(c), step.Decision, n, step.Why)
		if step.Decision != bisect.Continue {
			return step, "", nil
		}
	}
}

func negate(xs []float64) {
	for i := range xs {
		xs[i] = -xs[i]
	}
}

// costs is the per-run cost of the target functions (summed; the run
// totals without a target) in the first baseN runs of base and headN of
// head.
func (r *bisectRun) costs(base string, baseN int, head string, headN int, target []string) (baseCost, headCost []float64, err error) {
	b, m, err := r.load(base, baseN, head, headN, r.alpha)
	if err != nil {
		return nil, nil, err
	}
	baseCost, headCost = make([]float64, baseN), make([]float64, headN)
	if len(target) == 0 {
		v, err := query.Judge{MinBaseShare: *r.minBaseShare}.Verdict(b, query.TreeOptions(b, m, r.rules))
		if err != nil {
			return nil, nil, err
		}
		return v.Totals.Base, v.Totals.Head, nil
	}
	seen := 0
	for _, row := range b.Functions(query.TreeOptions(b, m, r.rules)) {
		if !slices.Contains(target, row.Name) {
			continue
		}
		if len(row.BaseRuns) != baseN || len(row.HeadRuns) != headN {
			return nil, nil, fmt.Errorf("bisect: %s has no per-run costs (too few runs?)", row.Name)
		}
		seen++
		for i, v := range row.BaseRuns {
			baseCost[i] += v
		}
		for i, v := range row.HeadRuns {
			headCost[i] += v
		}
	}
	if seen == 0 {
		return nil, nil, fmt.Errorf("bisect: no function of the runs is named %s", strings.Join(target, ", "))
	}
	return baseCost, headCost, nil
}

// load is the diff of the first headN runs of head against the first
// baseN of base, and its model: from the files as query reads files, or
// with --dsn from the stored runs as query --dsn reads them.
func (r *bisectRun) load(base string, baseN int, head string, headN int, alpha float64) (*tree.Builder, query.Model, error) {
	m := query.Model{QueryType: "diff", App: "files", MaxNodes: query.DefaultMaxNodes, Normalize: "absolute", Alpha: &alpha,
		Head: query.Selection{Builds: []string{"head"}}, Base: query.Selection{Builds: []string{"base"}}}
	if r.store != nil {
		m.App = r.app
		m.Head = query.Selection{Builds: []string{short(head)}, Runs: runNames(headN)}
		m.Base = query.Selection{Builds: []string{short(base)}, Runs: runNames(baseN)}
		if err := m.Validate(); err != nil {
			return nil, m, err
		}
		e := &query.Executor{Store: r.store, Rules: r.rules}
		b, unit, err := e.Engine(r.ctx, m)
		r.unit = unit
		return b, m, err
	}
	b := tree.NewBuilder(tree.NewFrames())
	unit, _, _, err := loadSide(b, tree.Head, r.files(head, headN), r.opts)
	if err != nil {
		return nil, m, err
	}
	baseUnit, _, _, err := loadSide(b, tree.Base, r.files(base, baseN), r.opts)
	if err != nil {
		return nil, m, err
	}
	if unit != baseUnit {
		return nil, m, fmt.Errorf("runs in %s and in %s cannot be compared", unit, baseUnit)
	}
	r.unit = unit
	return b, m, nil
}

// runNames are the stored names of the first n runs of a commit.
func runNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("run-%03d", i+1)
	}
	return names
}

// times gives each commit's runs a start time that orders the builds as
// the history does: its commit time, at least a run's worth of seconds
// after the commit before it.
func (r *bisectRun) times(commits []string) error {
	r.start = map[string]time.Time{}
	var last time.Time
	for _, c := range commits {
		s, err := r.git(r.clone, "log", "-1", "--format=%ct", c)
		if err != nil {
			return err
		}
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("git log %s: commit time %q: %w", c, s, err)
		}
		t := time.Unix(sec, 0).UTC()
		if floor := last.Add(time.Duration(r.maxRuns+1) * time.Second); !last.IsZero() && t.Before(floor) {
			t = floor
		}
		r.start[c], last = t, t
	}
	return nil
}

// store keeps run i (0-based) of commit c in ClickHouse, and the commit's
// source changes with its first run.
func (r *bisectRun) storeRun(c string, i int, file string) error {
	p, err := profilefile.Parse(file, r.opts)
	if err != nil {
		return skipError{fmt.Errorf("run %d: %w", i+1, err)}
	}
	meta := storage.RunMeta{App: r.app, Build: short(c), Run: runNames(i + 1)[i], Commit: c,
		Start: r.start[c].Add(time.Duration(i) * time.Second), Labels: map[string]string{"bisect": short(r.state.Good) + ".." + short(r.state.Bad)}}
	if err := r.store.Write(r.ctx, meta, p, nil); err != nil {
		return err
	}
	if i > 0 {
		return nil
	}
	parent, err := r.git(r.clone, "rev-parse", c+"^")
	if err != nil {
		return nil // the root commit changed everything: nothing to record
	}
	ch, err := changes.FromGitDiff(r.clone, parent, c)
	if err != nil {
		fmt.Fprintf(r.log, "bisect: the changes of %s are not recorded: %v\n", short(c), err)
		return nil
	}
	return r.store.SaveChanges(r.ctx, r.app, short(c), ch)
}

// skipError is a commit that does not build or whose benchmark fails.
type skipError struct{ error }

// runs benchmarks each commit up to n runs, alternating between them run by
// run (a machine that slows down weighs on each), building a commit when it
// first needs a run. Runs kept in --out are not run again.
func (r *bisectRun) runs(n int, commits ...string) error {
	for _, c := range commits {
		if why, ok := r.state.Skipped[c]; ok {
			return skipError{errors.New(why)}
		}
	}
	for i := 0; i < n; i++ {
		for _, c := range commits {
			if r.have(c) > i {
				continue
			}
			if err := r.ctx.Err(); err != nil {
				return err
			}
			dir, err := r.checkout(c)
			if err != nil {
				return err
			}
			file := r.files(c, i+1)[i]
			if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
				return err
			}
			partial := filepath.Join(filepath.Dir(file), "partial."+r.ext)
			cmd := exec.CommandContext(r.ctx, "sh", "-c", r.bench) // #nosec G204 -- the user's own benchmark command
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "FLAMEDIFF_PROFILE="+partial, fmt.Sprintf("FLAMEDIFF_RUN=%d", i+1))
			if log, err := cmd.CombinedOutput(); err != nil {
				if r.ctx.Err() != nil {
					return r.ctx.Err()
				}
				return skipError{fmt.Errorf("the benchmark failed at run %d: %v: %s", i+1, err, tail(log))}
			}
			if _, err := os.Stat(partial); err != nil {
				return skipError{fmt.Errorf("the benchmark wrote no profile at run %d: %w", i+1, err)}
			}
			if r.store != nil {
				if err := r.storeRun(c, i, partial); err != nil {
					return err
				}
			}
			if err := os.Rename(partial, file); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkout is the built work tree of commit c, checked out in the private
// clone and built there the first time.
func (r *bisectRun) checkout(c string) (string, error) {
	if dir, ok := r.built[c]; ok {
		return dir, nil
	}
	dir := filepath.Join(r.clone, "..", "tree-"+short(c))
	if _, err := r.git(r.clone, "worktree", "add", "--force", "--detach", dir, c); err != nil {
		return "", err
	}
	fmt.Fprintf(r.log, "bisect: building %s %s\n", short(c), r.subject(c))
	cmd := exec.CommandContext(r.ctx, "sh", "-c", r.build) // #nosec G204 -- the user's own build command
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		if r.ctx.Err() != nil {
			return "", r.ctx.Err()
		}
		r.drop(c, dir)
		return "", skipError{fmt.Errorf("the build failed: %v: %s", err, tail(log))}
	}
	// Keep at most good's, bad's and the commit under test's trees.
	for old, oldDir := range r.built {
		if old != r.state.Good && old != r.state.Bad {
			r.drop(old, oldDir)
		}
	}
	r.built[c] = dir
	return dir, nil
}

func (r *bisectRun) drop(c, dir string) {
	delete(r.built, c)
	_, _ = r.git(r.clone, "worktree", "remove", "--force", dir)
}

// open makes the private clone and loads (or starts) the state in --out.
func (r *bisectRun) open(good, bad string) error {
	tmp, err := os.MkdirTemp("", "flamediff-bisect-")
	if err != nil {
		return err
	}
	if r.out == "" {
		r.out = filepath.Join(tmp, "out")
	}
	r.clone, r.built = filepath.Join(tmp, "clone"), map[string]string{}
	if _, err := r.git(r.repo, "clone", "--quiet", "--shared", "--no-checkout", ".", r.clone); err != nil {
		return err
	}
	if err := os.MkdirAll(r.out, 0o750); err != nil {
		return err
	}
	r.state = bisectState{Good: good, Bad: bad, Skipped: map[string]string{}}
	raw, err := os.ReadFile(filepath.Join(r.out, "state.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return r.save()
	case err != nil:
		return err
	}
	var old bisectState
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(r.out, "state.json"), err)
	}
	if old.Good != good || old.Bad != bad {
		return usageError{fmt.Errorf("--out %s holds the search of %s..%s, not of %s..%s", r.out, short(old.Good), short(old.Bad), short(good), short(bad))}
	}
	if old.Skipped != nil {
		r.state.Skipped = old.Skipped
	}
	fmt.Fprintf(r.log, "bisect: resuming the search in %s\n", r.out)
	return nil
}

func (r *bisectRun) save() error {
	raw, err := json.MarshalIndent(r.state, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.out, "state.json"), raw, 0o600)
}

// close removes the clone (the runs stay in --out).
func (r *bisectRun) close() {
	if r.clone != "" {
		_ = os.RemoveAll(filepath.Dir(r.clone))
	}
}

// files are the first n run files of commit c.
func (r *bisectRun) files(c string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(r.out, c, fmt.Sprintf("run-%03d.%s", i+1, r.ext))
	}
	return out
}

// have is the number of runs of c kept (the first missing file ends them).
func (r *bisectRun) have(c string) int {
	n := 0
	for {
		if _, err := os.Stat(r.files(c, n+1)[n]); err != nil {
			return n
		}
		n++
	}
}

func (r *bisectRun) git(dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(r.ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *bisectRun) subject(c string) string {
	s, _ := r.git(r.clone, "log", "-1", "--format=%s", c)
	return s
}

func (r *bisectRun) info(c string) (*bisectCommit, error) {
	s, err := r.git(r.clone, "log", "-1", "--format=%H%x00%s%x00%an <%ae>%x00%aI", c)
	if err != nil {
		return nil, err
	}
	f := strings.Split(s, "\x00")
	if len(f) != 4 {
		return nil, fmt.Errorf("git log of %s: %q", c, s)
	}
	return &bisectCommit{Hash: f[0], Subject: f[1], Author: f[2], Date: f[3]}, nil
}

func short(c string) string { return c[:min(12, len(c))] }

func shorts(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = short(c)
	}
	return out
}

// tail is the last lines of a command's output, for an error.
func tail(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " | ")
}

// finish prints the answer and returns the exit code's error.
func (r *bisectRun) finish(out io.Writer, a *bisectAnswer) error {
	var err error
	switch r.output {
	case "json":
		err = json.NewEncoder(out).Encode(a)
	default:
		err = writeBisect(out, a, r.output == "markdown")
	}
	if err != nil {
		return err
	}
	switch {
	case a.Result == "none":
		return lookError{exitNoRegression, errors.New("no change between good and bad")}
	case a.Result == "undecided" && a.Why != "":
		return lookError{exitInconclusive, fmt.Errorf("could not decide: %s", a.Why)}
	case a.Result == "undecided":
		return lookError{exitInconclusive, errors.New("could not decide where every regression was made")}
	}
	return nil
}

// writeBisect prints the answer as a table or as a pull-request comment.
func writeBisect(out io.Writer, a *bisectAnswer, markdown bool) error {
	var sb strings.Builder
	switch {
	case a.First != "" && a.Improvement:
		fmt.Fprintf(&sb, "first improved commit: %s\n", a.First)
	case a.First != "":
		fmt.Fprintf(&sb, "first bad commit: %s\n", a.First)
	case a.Result == "none" && a.Improvement:
		sb.WriteString("no improvement between good and bad\n")
	case a.Result == "none":
		sb.WriteString("no regression between good and bad\n")
	default:
		sb.WriteString("could not decide which commit made the regression\n")
	}
	if markdown {
		sb.WriteString("\n### Flamediff bisect\n")
	}
	row := func(cells ...string) {
		if markdown {
			fmt.Fprintf(&sb, "| %s |\n", strings.Join(cells, " | "))
		} else {
			fmt.Fprintf(&sb, "  %s\n", strings.Join(cells, "  "))
		}
	}
	head := func(cols ...string) {
		if markdown {
			sb.WriteString("\n")
			row(cols...)
			fmt.Fprintf(&sb, "|%s\n", strings.Repeat("---|", len(cols)))
		}
	}
	if v := a.Regression; v != nil {
		sides := "Bad against good"
		if a.Improvement {
			sides = "Good against bad"
		}
		fmt.Fprintf(&sb, "\n%s: %s: %s\n", sides, v.Result, v.Why)
	}
	for _, f := range a.Found {
		name, delta := "the run totals", ""
		if c := f.Culprit; c != nil {
			name = c.Function
			delta = fmt.Sprintf(" (%s, %s of the base total, 95%% interval %s)", c.Kind, verdict.Percent(float64(c.Delta)),
				verdict.Interval(float64(c.DeltaLow), float64(c.DeltaHigh)))
		}
		fmt.Fprintf(&sb, "\n%s%s: ", bold(name, markdown), delta)
		switch f.Kind {
		case bisect.One:
			sb.WriteString("made by one commit.\n")
		case bisect.Split:
			sb.WriteString("made by two commits between them, each carrying part of it.\n")
		default:
			fmt.Fprintf(&sb, "could not decide: %s; it was made by one of %d commits:\n", f.Why, len(f.Range))
			for _, c := range f.Range {
				fmt.Fprintf(&sb, "  %s\n", c)
			}
		}
		for _, c := range f.Commits {
			fmt.Fprintf(&sb, "\n  commit %s\n  %s\n  Author: %s\n  Date:   %s\n", c.Hash, c.Subject, c.Author, c.Date)
			if s := c.Share; s != nil {
				fmt.Fprintf(&sb, "  It stands at %.0f%% of the regression (%.0f%% .. %.0f%%) at %d runs.\n", 100*s.Share, 100*s.Low, 100*s.High, s.Runs)
			}
			if ch := c.Changed; ch != nil {
				fmt.Fprintf(&sb, "  It changed %d functions, %d added, %d removed", len(ch.Modified), len(ch.Added), len(ch.Removed))
				if c.Matched {
					fmt.Fprintf(&sb, ", %s among them", name)
				}
				sb.WriteString(".\n")
			}
		}
		if len(f.Beyond) > 0 {
			fmt.Fprintf(&sb, "\n  Warning: %d tested commits stand clearly past bad or before good (%s): this cost also changed and came back between good and bad (a change undone later); the search assumes one rise, so check the commits named against the steps.\n",
				len(f.Beyond), strings.Join(shorts(f.Beyond), ", "))
		}
		head("commit", "subject", "tested at", "decision", "runs", "share of the regression")
		if !markdown {
			sb.WriteString("\n  Steps:\n")
		}
		for _, s := range f.Steps {
			share := fmt.Sprintf("%.0f%% (%.0f%% .. %.0f%%)", 100*s.Step.Share, 100*s.Step.Low, 100*s.Step.High)
			if s.Outcome == bisect.Skipped {
				share = s.Skipped
			}
			row(short(s.Commit), s.Subject, fmt.Sprintf("%.0f%%", 100*s.At), s.Outcome, fmt.Sprint(s.Step.Runs), share)
		}
	}
	fmt.Fprintf(&sb, "\n%d runs in all; a wrong commit under %v over the search.\n", a.Runs, a.Budget["alpha"])
	_, err := io.WriteString(out, sb.String())
	return err
}

func bold(s string, markdown bool) string {
	if markdown {
		return "**" + s + "**"
	}
	return s
}
