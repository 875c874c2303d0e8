package bisect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/flamediff/flamediff/pkg/stats"
)

// world is one simulated range: commits 0..n, the cost of commit i's runs
// normal with mean 1 (+ change from first on; a part of it from first and
// the rest from second when second is set: a split regression) and
// coefficient of variation noise; broken commits are skipped.
type world struct {
	n, first, second    int
	change, part, noise float64
	// undone: the change lasts from first to second-1 (a later commit
	// undid it) and bad is like good, or, with again set, carries the
	// same change made again by commit again.
	undone bool
	again  int
	broken map[int]bool
}

func (w world) runs(rng *rand.Rand, i, n int) []float64 {
	xs := make([]float64, n)
	mean := 1.0
	switch {
	case w.first == 0:
	case w.undone:
		if i >= w.first && i < w.second || w.again > 0 && i >= w.again {
			mean += w.change
		}
	case w.second > 0 && i >= w.second:
		mean += w.change
	case w.second > 0 && i >= w.first:
		mean += w.change * w.part
	case i >= w.first:
		mean += w.change
	}
	for k := range xs {
		xs[k] = mean * (1 + w.noise*rng.NormFloat64())
	}
	return xs
}

// truth is the commits that made bad's regression (and undid it, for
// one bad does not carry).
func (w world) truth() []int {
	switch {
	case w.first == 0:
		return nil
	case w.again > 0:
		return []int{w.again}
	case w.second > 0:
		return []int{w.first, w.second}
	}
	return []int{w.first}
}

// probed says whether a probe that builds falls in lo .. hi-1.
func (w world) probed(lo, hi int) bool {
	return slices.ContainsFunc(Probes(w.n, 8), func(i int) bool { return i >= lo && i < hi && !w.broken[i] })
}

// episode is the commits that made and undid a regression before bad's
// was made again in the same function (nil: none).
func (w world) episode() []int {
	if w.again > 0 {
		return []int{w.first, w.second}
	}
	return nil
}

// outcome is what one simulated bisection did.
type outcome struct {
	named []int // the commits named (none: no regression, or undecided)
	// episode is the commits named as making and undoing an earlier rise
	// of the culprit's cost (Undone).
	episode []int
	runs    int
}

// simulate runs the whole search as the CLI does: bad against good with
// the sequential test of query --max-runs (stats.Plan) at the budget's
// alpha, the probes (8, two batches each) read on the culprit's cost
// (Undone), then a Hunt whose tests Classify the commits it asks for,
// after the probe that saw the cost fall back if one did, and then that
// earlier rise's and fall's hunts (the probes' own verdicts, the judge's,
// are not simulated).
func simulate(t testing.TB, w world, alpha float64, batch, maxRuns int, rng *rand.Rand) outcome {
	b := Budget{Alpha: alpha, Commits: w.n, Extra: 2, Probes: 8}
	p := stats.Plan{Batch: batch, MaxRuns: maxRuns, Alpha: b.Regression(), Beta: 0.05, MinBaseShare: max(w.change, 0.05) / 2}
	var good, bad []float64
	var o outcome
	for {
		good = append(good, w.runs(rng, 0, min(batch, maxRuns-len(good)))...)
		bad = append(bad, w.runs(rng, w.n, min(batch, maxRuns-len(bad)))...)
		s, err := p.Decide(good, bad)
		if err != nil {
			t.Fatal(err)
		}
		if s.Decision == stats.Continue {
			continue
		}
		if s.Decision != stats.Fail {
			o.runs = 2 * s.Runs
			return o
		}
		break
	}
	// The steps' reference: good and bad topped up to the maximum.
	good = append(good, w.runs(rng, 0, maxRuns-len(good))...)
	bad = append(bad, w.runs(rng, w.n, maxRuns-len(bad))...)
	o.runs = len(good) + len(bad)
	runs := map[int][]float64{} // a commit's runs serve every search
	var steps []Step
	var at []int
	probe := w.tester(rng, runs, batch, maxRuns, func(float64) float64 { return b.ProbeStep() }, good, bad, func(i int) int { return i })
	for _, i := range Probes(w.n, b.Probes) {
		if w.broken[i] {
			continue
		}
		runs[i] = w.runs(rng, i, 2*batch)
		_, s, err := probe(i, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		steps, at = append(steps, s), append(at, i)
	}
	lo := 0
	var episode []int
	if peak, clean := Undone(steps); clean >= 0 {
		p, c := at[peak], at[clean]
		lo = c
		for _, i := range []int{p, c} {
			runs[i] = append(runs[i], w.runs(rng, i, maxRuns-len(runs[i]))...)
		}
		rise, err := Hunt(p, b.PerSearch(), w.tester(rng, runs, batch, maxRuns, perTest(b, b.Undone()), good, runs[p], func(i int) int { return i }))
		if err != nil {
			t.Fatal(err)
		}
		fall, err := HuntFall(c-p, b.PerSearch(), w.tester(rng, runs, batch, maxRuns, perTest(b, b.Undone()), runs[c], runs[p], func(i int) int { return p + i }))
		if err != nil {
			t.Fatal(err)
		}
		if rise.Kind != Unplaced && fall.Kind != Unplaced {
			episode = slices.Clone(rise.Commits)
			for _, i := range fall.Commits {
				episode = append(episode, p+i)
			}
			if len(rise.Commits) != 1 || len(fall.Commits) != 1 {
				episode = append(episode, -1) // not one rise and one fall: wrong
			}
		}
	}
	f, err := Hunt(w.n-lo, b.PerSearch(), w.tester(rng, runs, batch, maxRuns, perTest(b, b.Culprit(0)), good, bad, func(i int) int { return lo + i }))
	if err != nil {
		t.Fatal(err)
	}
	for k := range f.Commits {
		f.Commits[k] += lo
	}
	for _, r := range runs {
		o.runs += len(r)
	}
	o.episode = episode
	if f.Kind != Unplaced {
		o.named = f.Commits
	}
	return o
}

// tester Classifies commit at(i) at alpha(share) between the runs low
// and high, adding its runs a batch at a time to runs (a
// commit's runs serve every search); broken commits are skipped.
func (w world) tester(rng *rand.Rand, runs map[int][]float64, batch, maxRuns int, alpha func(share float64) float64, low, high []float64, at func(int) int) Tester {
	return func(i int, share float64) (string, Step, error) {
		c := at(i)
		if w.broken[c] {
			return Skipped, Step{}, nil
		}
		step := stats.Plan{Batch: batch, MaxRuns: maxRuns, Alpha: alpha(share)}
		for n := batch; ; n = min(n+batch, maxRuns) {
			if len(runs[c]) < n {
				runs[c] = append(runs[c], w.runs(rng, c, n-len(runs[c]))...)
			}
			s, err := Classify(step, share, low, high, runs[c][:n])
			if err != nil || s.Decision != Continue {
				return s.Decision, s, err
			}
		}
	}
}

// simulateUndone hunts a regression undone before bad as the CLI does:
// from the first probe (Probes, 8) inside it, its runs and good's and
// bad's at the maximum, the rise between good and the probe (Hunt) and
// the fall between the probe and bad (HuntFall), at the budget's alphas.
// A regression no probe falls in is not seen (no commit named); the
// probe's own verdict is the judge's, not simulated here.
func simulateUndone(t testing.TB, w world, alpha float64, batch, maxRuns int, rng *rand.Rand) outcome {
	b := Budget{Alpha: alpha, Commits: w.n, Extra: 2, Probes: 8}
	peak := 0
	for _, i := range Probes(w.n, b.Probes) {
		if i >= w.first && i < w.second && !w.broken[i] && peak == 0 {
			peak = i
		}
	}
	if peak == 0 {
		return outcome{}
	}
	good, high, bad := w.runs(rng, 0, maxRuns), w.runs(rng, peak, maxRuns), w.runs(rng, w.n, maxRuns)
	o := outcome{runs: 3 * maxRuns}
	runs := map[int][]float64{}
	rise, err := Hunt(peak, b.PerSearch(), w.tester(rng, runs, batch, maxRuns, perTest(b, b.Undone()), good, high, func(i int) int { return i }))
	if err != nil {
		t.Fatal(err)
	}
	fall, err := HuntFall(w.n-peak, b.PerSearch(), w.tester(rng, runs, batch, maxRuns, perTest(b, b.Undone()), bad, high, func(i int) int { return peak + i }))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		o.runs += len(r)
	}
	if len(rise.Commits) == 0 || len(fall.Commits) == 0 {
		return o
	}
	o.named = append(slices.Clone(rise.Commits), peak+fall.Commits[0])
	if len(fall.Commits) > 1 || len(rise.Commits) > 1 {
		o.named = append(o.named, -1) // a split named where there is none: wrong
	}
	return o
}

// perTest is a hunt's alpha of a test at a share (Budget.PerTest).
func perTest(b Budget, hunt float64) func(float64) float64 {
	return func(share float64) float64 { return b.PerTest(hunt, share) }
}

// fixed is `git bisect run` with n runs of every commit it tests (good
// and bad included): a commit is bad when its mean is past the midpoint of
// good's and bad's, whatever the noise.
func fixed(w world, n int, rng *rand.Rand) outcome {
	g, b := stats.Describe(w.runs(rng, 0, n)).Mean, stats.Describe(w.runs(rng, w.n, n)).Mean
	lo, hi, runs := 0, w.n, 2*n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		for d := 0; w.broken[mid]; d++ { // git bisect skip: try a neighbour
			mid = lo + (hi-lo)/2 + (d/2+1)*(1-2*(d%2))
			if mid <= lo || mid >= hi {
				return outcome{runs: runs}
			}
		}
		runs += n
		if stats.Describe(w.runs(rng, mid, n)).Mean > (g+b)/2 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return outcome{named: []int{hi}, runs: runs}
}

// fixedRuns is the runs a commit of `git bisect run` needs for the same
// error rate over its steps (at most ceil(log2 64) = 6): each step wrong
// under alpha/6 at the midpoint, the mean of n runs against those of good's
// and bad's n (standard error noise sqrt(1.5/n)).
func fixedRuns(alpha, change, noise float64) int {
	z := distuv.UnitNormal.Quantile(1 - alpha/6)
	return int(math.Ceil(1.5 * z * z * noise * noise / (change * change / 4)))
}

type setting struct {
	change, noise float64
	// part is a split regression's share made by its first commit (0: one
	// commit makes it all).
	part float64
	// undone: the regression is undone before bad, after 2 to 16 commits;
	// again: and made again 2 to 16 commits later, in the same function,
	// which bad carries; seen: a probe that builds falls in the rise and
	// one in the dip.
	undone, again, seen bool
}

type tally struct {
	wrong, right, none int
	runs               []int
}

func (s *tally) add(w world, o outcome) {
	// Wrong: a commit named that is not the truth's (bad's regression's,
	// or an earlier rise's and fall's); right: all of the truth named.
	switch {
	case len(o.named) > 0 && !slices.Equal(o.named, w.truth()),
		len(o.episode) > 0 && !slices.Equal(o.episode, w.episode()):
		s.wrong++
	case len(o.named) == 0, !slices.Equal(o.episode, w.episode()):
		s.none++
	default:
		s.right++
	}
	s.runs = append(s.runs, o.runs)
}

func (s *tally) mean() float64 {
	sum := 0
	for _, r := range s.runs {
		sum += r
	}
	return float64(sum) / float64(len(s.runs))
}

func (s *tally) p90() int {
	slices.Sort(s.runs)
	return s.runs[(9*len(s.runs)-1)/10]
}

// run bisects seeds random ranges of a setting: 8 to 64 commits, the first
// bad one anywhere in them (none when change is 0), one commit in ten
// broken (seen: ranges drawn until one is as it says); the sequential
// search, and git bisect run with fixed runs at the same error rate.
func (c setting) run(t testing.TB, alpha float64, seeds int) (seq, fix tally, n int) {
	n = fixedRuns(alpha, max(c.change, 0.05), c.noise)
	for seed := 0; len(seq.runs) < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 50))
		w := world{n: 8 + rng.IntN(57), change: c.change, part: c.part, noise: c.noise, broken: map[int]bool{}}
		if c.change > 0 {
			w.first = 1 + rng.IntN(w.n)
		}
		switch {
		case c.part > 0:
			w.first = 1 + rng.IntN(w.n-1)
			w.second = w.first + 1 + rng.IntN(w.n-w.first)
		case c.again:
			w.undone = true
			w.first = 1 + rng.IntN(w.n-4)
			w.second = min(w.first+2+rng.IntN(15), w.n-2)
			w.again = min(w.second+2+rng.IntN(15), w.n)
		case c.undone:
			w.undone = true
			w.first = 1 + rng.IntN(w.n-2)
			w.second = min(w.first+2+rng.IntN(15), w.n)
		}
		for i := 1; i < w.n; i++ {
			if rng.Float64() < 0.1 && i != w.first && i != w.second && i != w.again {
				w.broken[i] = true
			}
		}
		if c.seen && !w.probed(w.first, w.second) || c.seen && !w.probed(w.second, w.again) {
			continue
		}
		if c.undone && !c.again {
			seq.add(w, simulateUndone(t, w, alpha, 5, 30, rng))
			continue
		}
		seq.add(w, simulate(t, w, alpha, 5, 30, rng))
		if c.part == 0 && !c.undone { // git bisect run names one commit
			fix.add(w, fixed(w, n, rng))
		}
	}
	return seq, fix, n
}

// The splits: two halves, and a first part of 60% (a half that costs a
// little more than half in a real build decides the midpoint's test).
var settings = []setting{{0, 0.02, 0, false, false, false}, {0.05, 0.01, 0, false, false, false}, {0.05, 0.02, 0, false, false, false},
	{0.05, 0.03, 0, false, false, false}, {0.10, 0.03, 0, false, false, false}, {0.10, 0.05, 0, false, false, false},
	{0.10, 0.01, 0.5, false, false, false}, {0.10, 0.02, 0.5, false, false, false}, {0.10, 0.01, 0.6, false, false, false},
	{0.10, 0.01, 0, true, false, false}, {0.10, 0.02, 0, true, false, false},
	{0.10, 0.01, 0, true, true, false}, {0.10, 0.01, 0, true, true, true}, {0.10, 0.02, 0, true, true, true}}

// The chance of naming a wrong commit stays under alpha over the whole
// search (binomial slack: 3 standard errors), in every setting, without a
// regression too (any commit named is wrong then).
func TestSearchErrorRate(t *testing.T) {
	const alpha, seeds = 0.05, 300
	slack := alpha + 3*math.Sqrt(alpha*(1-alpha)/seeds)
	for _, c := range settings {
		if c.again && !c.seen {
			// No probe in the dip, and the answer can be the first rise
			// (docs/BISECT.md, "Limits"): the table shows how often.
			continue
		}
		seq, _, _ := c.run(t, alpha, seeds)
		if rate := float64(seq.wrong) / seeds; rate > slack {
			t.Errorf("change %g, noise %g: wrong commit in %.3f of the searches, over alpha %g", c.change, c.noise, rate, alpha)
		}
		// Where the regression stands clear of the noise (3 times it, 10
		// times for a split's halves), most searches name its commits.
		// An undone one is named when a probe falls inside it: about three
		// in four of these ranges.
		split := c.part > 0
		clear := c.change >= 3*c.noise && (!split || c.change >= 10*c.noise)
		want := map[bool]float64{false: 0.8, true: 0.7}[split]
		if c.undone {
			want = 0.6
		}
		if clear && float64(seq.right) < want*seeds {
			t.Errorf("change %g, noise %g: only %d of %d searches name the commit", c.change, c.noise, seq.right, seeds)
		}
	}
}

// The table of docs/STATISTICS.md ("Bisection"): FLAMEDIFF_BISECT_TABLE=1
// go test ./pkg/bisect -run TestSearchTable -v.
func TestSearchTable(t *testing.T) {
	if os.Getenv("FLAMEDIFF_BISECT_TABLE") == "" {
		t.Skip("set FLAMEDIFF_BISECT_TABLE=1 to print the table of docs/STATISTICS.md")
	}
	const alpha, seeds = 0.05, 2000
	fmt.Println("| regression | noise | right | wrong | no commit named | mean runs | p90 runs | fixed: runs a commit | right | wrong | mean runs | p90 runs |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range settings {
		seq, fix, n := c.run(t, alpha, seeds)
		pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/seeds) }
		kind := fmt.Sprintf("%.0f%%", 100*c.change)
		if c.undone {
			kind += ", undone after 2-16 commits"
		}
		if c.again {
			kind += ", made again 2-16 later"
		}
		if c.seen {
			kind += ", a probe in the rise and in the dip"
		}
		if c.part > 0 || c.undone {
			if c.part > 0 {
				kind += fmt.Sprintf(", split %.0f/%.0f", 100*c.part, 100*(1-c.part))
			}
			fmt.Printf("| %s | %.0f%% | %s | %s | %s | %.1f | %d | - | - | - | - | - |\n", kind, 100*c.noise,
				pct(seq.right), pct(seq.wrong), pct(seq.none), seq.mean(), seq.p90())
			continue
		}
		fmt.Printf("| %s | %.0f%% | %s | %s | %s | %.1f | %d | %d | %s | %s | %.1f | %d |\n", kind, 100*c.noise,
			pct(seq.right), pct(seq.wrong), pct(seq.none), seq.mean(), seq.p90(), n, pct(fix.right), pct(fix.wrong), fix.mean(), fix.p90())
	}
}
