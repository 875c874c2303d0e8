package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flamediff/flamediff/pkg/bisect"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
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
	fs.IntVar(&r.probes, "probes", 8, "commits spread between good and bad probed for regressions a later commit undid (0: none)")
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
	maxRuns, batch, extra, probes                   int
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
	// changed is every culprit of bad against good, regressions and
	// improvements: what a culprit's cost leaves out of the rest of the
	// run it is measured against (costs); regressed is its regressions.
	changed, regressed []string
	// probed are the probes, in commit order (probe).
	probed []bisectProbe
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
	// Kind is one, split or undecided (bisect.Finding), or undone: a
	// regression bad does not carry, seen at a probe (Peak).
	Kind string `json:"kind"`
	// Commits are the commit that made the regression, or the two that
	// made it between them (split).
	Commits []bisectCommit `json:"commits,omitempty"`
	// Range holds the commits among which it was made (undecided).
	Range []string `json:"range,omitempty"`
	// Peak is the probe an undone regression was hunted from; Undone the
	// commit (or two) that undid it, UndoneRange the commits among which
	// it was undone when that search ended undecided.
	Peak        string         `json:"peak,omitempty"`
	Undone      []bisectCommit `json:"undone,omitempty"`
	UndoneRange []string       `json:"undoneRange,omitempty"`
	Why         string         `json:"why,omitempty"`
	Steps       []bisectStep   `json:"steps"`
	// Beyond are the commits tested clearly past bad or before good
	// (bisect.Finding.Beyond): the cost went further and came back.
	Beyond []string `json:"beyond,omitempty"`
	// After is the probe the hunt searched after: there the culprit's
	// cost had fallen back from an earlier rise (reported as undone).
	After string `json:"after,omitempty"`
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
	Probes     []bisectProbe     `json:"probes,omitempty"`
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
	budget := bisect.Budget{Alpha: r.alpha, Commits: len(commits), Extra: r.extra, Probes: r.probes}
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
		"firstTest": budget.PerTest(budget.Culprit(0), 0.5), "probe": budget.Probe(), "commits": len(commits), "maxRuns": r.maxRuns, "batch": r.batch}}
	fmt.Fprintf(r.log, "bisect: %d commits after %s up to %s; a wrong commit under %g over the search (%s under %.2g, each test of the largest culprit under %.2g)\n",
		len(commits), short(good), short(bad), r.alpha, r.sides(), budget.Regression(), budget.PerTest(budget.Culprit(0), 0.5))
	reg, badRuns, err := r.regression(good, bad, budget.Regression())
	if err != nil {
		return err
	}
	a.Regression = reg
	switch {
	case reg.Result == verdict.Fail:
		err = r.hunts(a, good, bad, commits, budget)
	case reg.Result == verdict.Pass:
		// Bad carries no regression; one made and undone in between is
		// still found by the probes.
		a.Result, a.Why = "none", reg.Why
		r.culprits(reg)
		err = r.undoneOnly(a, good, bad, commits, budget)
	default:
		a.Result, a.Why, a.Runs = "undecided", reg.Why, 2*badRuns
		return r.finish(out, a)
	}
	if err != nil {
		return err
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
		var changed *changes.Changes
		for _, f := range a.Found {
			for _, fc := range f.Commits {
				if fc.Hash == a.First && fc.Changed != nil {
					changed = fc.Changed
				}
			}
		}
		if err := r.writeReport(before, a.First, changed); err != nil {
			return err
		}
	}
	return r.finish(out, a)
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
			why, err := r.skipped(c, err)
			return bisect.Step{}, why, err
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
