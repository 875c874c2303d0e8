package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/tree"
)

// ownShare is the largest share of the run that a culprit may hold and
// still be measured against the rest of it (below).
const ownShare = 0.5

// costs is the per-run cost of the target functions (summed; the run
// totals without a target) in the first baseN runs of base and headN of
// head. A target is measured against the rest of each run, the run's total
// less every culprit of bad against good (r.changed): the commits of a
// search run minutes apart, and a machine that gets slower or faster
// meanwhile (a loaded CI runner: a commit carrying all of a regression
// measured 50-72% of it in absolute time) changes that rest as much,
// while another culprit's change is not in it. A target holding half of
// the run or more (a uniform slowdown), or culprits whose totals overlap
// so that no rest is left, are measured in time.
func (r *bisectRun) costs(base string, baseN int, head string, headN int, target []string) (baseCost, headCost []float64, err error) {
	b, m, err := r.load(base, baseN, head, headN, r.alpha)
	if err != nil {
		return nil, nil, err
	}
	o := query.TreeOptions(b, m, r.rules)
	if len(target) == 0 {
		v, err := query.Judge{MinBaseShare: *r.minBaseShare}.Verdict(b, o)
		if err != nil {
			return nil, nil, err
		}
		return v.Totals.Base, v.Totals.Head, nil
	}
	baseCost, headCost = make([]float64, baseN), make([]float64, headN)
	changedBase, changedHead := make([]float64, baseN), make([]float64, headN)
	seen := 0
	for _, row := range b.Functions(o) {
		in, changed := slices.Contains(target, row.Name), slices.Contains(r.changed, row.Name)
		if !in && !changed {
			continue
		}
		if len(row.BaseRuns) != baseN || len(row.HeadRuns) != headN {
			return nil, nil, fmt.Errorf("bisect: %s has no per-run costs (too few runs?)", row.Name)
		}
		if in {
			seen++
			add(baseCost, row.BaseRuns)
			add(headCost, row.HeadRuns)
		}
		if changed || in {
			add(changedBase, row.BaseRuns)
			add(changedHead, row.HeadRuns)
		}
	}
	if seen == 0 {
		return nil, nil, fmt.Errorf("bisect: no function of the runs is named %s", strings.Join(target, ", "))
	}
	t, err := b.Build(o)
	if err != nil {
		return nil, nil, err
	}
	restBase, okBase := rest(t.Stats[0].BaseRuns, changedBase)
	restHead, okHead := rest(t.Stats[0].HeadRuns, changedHead)
	if !okBase || !okHead || stats.Describe(baseCost).Mean >= ownShare*stats.Describe(t.Stats[0].BaseRuns).Mean {
		return baseCost, headCost, nil
	}
	for i := range baseCost {
		baseCost[i] /= restBase[i]
	}
	for i := range headCost {
		headCost[i] /= restHead[i]
	}
	return baseCost, headCost, nil
}

// add adds xs to sum, element by element.
func add(sum, xs []float64) {
	for i, v := range xs {
		sum[i] += v
	}
}

// rest is each run's total less its culprits' (changed); false when a run
// has no total or no rest.
func rest(totals, changed []float64) ([]float64, bool) {
	if len(totals) != len(changed) {
		return nil, false
	}
	out := make([]float64, len(totals))
	for i := range totals {
		if out[i] = totals[i] - changed[i]; !(out[i] > 0) {
			return nil, false
		}
	}
	return out, true
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

// skipped records commit c as skipped, with why, when err is a skipError
// (saving the search's state); any other error is returned as it is.
func (r *bisectRun) skipped(c string, err error) (string, error) {
	var skip skipError
	if !errors.As(err, &skip) {
		return "", err
	}
	r.state.Skipped[c] = skip.Error()
	return skip.Error(), r.save()
}

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

// negate turns costs around: --improvement measures a fall as a rise.
func negate(xs []float64) {
	for i := range xs {
		xs[i] = -xs[i]
	}
}
