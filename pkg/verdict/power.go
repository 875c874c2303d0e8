package verdict

import (
	"fmt"
	"math"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Power says what a verdict's runs can see (docs/STATISTICS.md).
type Power struct {
	// Power is the chance at which a change of MDC is found.
	Power float64 `json:"power"`
	// MDC is the minimum detectable change of the run totals, a share of
	// the base mean: the smallest change a test at the verdict's alpha
	// finds with Power at the observed run-to-run spread. 0 when the totals
	// do not spread, and with exact costs (Verdict.Exact); null when a side
	// has fewer than 2 runs.
	MDC Number `json:"mdc"`
	// RunsToDecide is how many runs a side make a change of MinBaseShare
	// detectable with Power at the observed spread, when the verdict is
	// undecided (0 otherwise or unknown).
	RunsToDecide int `json:"runsToDecide,omitempty"`
	// RulesOut is, when the verdict passes, the smallest regression of the
	// run totals the runs exclude at Confidence (the upper bound of its
	// interval); null otherwise.
	RulesOut   Number  `json:"rulesOut"`
	Confidence float64 `json:"confidence"`
	// PathsRuleOut is the smallest regression of any tested call path's
	// total (a share of the base total) that the runs exclude for all of
	// them at once at PathsConfidence (Bonferroni over the tested nodes,
	// and in a sequential look over the looks), when the verdict passes
	// with absolute normalisation; null otherwise.
	PathsRuleOut    Number  `json:"pathsRuleOut"`
	PathsConfidence float64 `json:"pathsConfidence,omitempty"`
	// Paths is the number of tested call paths PathsRuleOut covers.
	Paths int `json:"paths,omitempty"`
	// Deterministic says that the costs are exact (Verdict.Exact).
	Deterministic bool `json:"deterministic,omitempty"`
	// Sentence says it in words.
	Sentence string `json:"sentence"`
}

// Look is a verdict's look of a sequential CI loop (stats.Plan).
type Look struct {
	stats.Step
	Change    Number `json:"change"`
	Low       Number `json:"low"`
	High      Number `json:"high"`
	Batch     int    `json:"batch"`
	MaxRuns   int    `json:"maxRuns"`
	PlanAlpha Number `json:"planAlpha"`
	PlanBeta  Number `json:"planBeta"`
}

// totalPlan is the plan of the run totals' test: half the plan's alpha
// (the culprits' tests spend the other half, lookAlpha), all its beta.
func (in Input) totalPlan() stats.Plan {
	p := *in.Plan
	p.Alpha /= 2
	return p
}

// lookAlpha sets the culprits' false-discovery rate of a sequential look:
// the half of the look's spent alpha the totals do not use, so that a false
// FAIL by either stays under the plan's alpha over every look.
func (in Input) lookAlpha(b *tree.Builder, o *tree.Options) error {
	if in.Plan == nil {
		return nil
	}
	if err := in.Plan.Check(); err != nil {
		return err
	}
	p := in.totalPlan()
	k, err := p.Look(min(b.Runs(tree.Base), b.Runs(tree.Head)))
	if err != nil {
		return err
	}
	o.Alpha, _ = p.Spent(k)
	return nil
}

// see fills what the runs can see, and with a plan, the look's decision.
func (v *Verdict) see(t *tree.Tree, in Input) {
	nan := Number(math.NaN())
	p := &Power{Power: stats.DefaultPower, MDC: nan, RulesOut: nan, PathsRuleOut: nan, Confidence: 0.95}
	v.Power = p
	base, head := stats.Describe(v.Totals.Base), stats.Describe(v.Totals.Head)
	p.MDC = Number(stats.MDC(base, head, v.Alpha, p.Power))
	if v.Exact {
		p.MDC = 0
	}
	p.Deterministic = v.Exact
	df := float64(v.Runs.Base + v.Runs.Head - 2)
	for _, list := range [][]Culprit{v.Regressions, v.Improvements} {
		for i := range list {
			c := &list[i]
			half := (float64(c.DeltaHigh) - float64(c.DeltaLow)) / 2
			if v.Exact { // any change is seen, even at one run a side (df 0)
				continue
			}
			c.MDC = Number(stats.ScaleMDC(half, df, v.Alpha, p.Power))
			if thr, ok := c.straddles(v.MinBaseShare); ok {
				c.RunsToDecide = runsToDecide(half, float64(c.Delta)-thr, v, p.Power)
			}
		}
	}
	if in.Plan != nil {
		v.look(t, in)
	}
	switch {
	case v.Result == Pass && t.Normalize == tree.Absolute && !(float64(v.Change.ChangeHigh) < v.MinBaseShare) && v.Sequential == nil && !v.Exact:
		// A total whose interval is unknown rules nothing out.
		v.Result = Inconclusive
		v.Why = "the run totals' change has no confidence interval: nothing is ruled out (add runs)."
		v.Headline = v.Why
	case v.Result == Pass && v.Sequential != nil:
		p.RulesOut, p.Confidence = v.Sequential.High, 1-in.Plan.Beta
		// The culprits' half of the look's alpha (lookAlpha): summed over
		// the looks, half the plan's alpha.
		p.PathsRuleOut, p.Paths = pathsRuleOut(t, v.Sequential.Alpha)
		p.PathsConfidence = 1 - in.Plan.Alpha/2
	case v.Result == Pass && t.Normalize == tree.Absolute:
		p.RulesOut = v.Change.ChangeHigh
		p.PathsRuleOut, p.Paths = pathsRuleOut(t, 0.05)
		p.PathsConfidence = 0.95
	case v.Result != Fail && v.Notice == "":
		p.RunsToDecide = stats.RunsFor(base, head, v.MinBaseShare, v.Alpha, p.Power)
	}
	p.Sentence = p.sentence(v)
}

// straddles says whether the culprit's 95% interval holds both a change of
// minBaseShare (its direction's, the threshold thr) and less: undecided.
func (c *Culprit) straddles(minBaseShare float64) (thr float64, ok bool) {
	thr = minBaseShare
	if !c.Regression {
		thr = -minBaseShare
	}
	return thr, float64(c.DeltaLow) < thr && thr < float64(c.DeltaHigh)
}

// runsToDecide is how many runs a side would decide an undecided culprit
// whose 95% interval has half-width half and whose delta is off the
// threshold by off: the more of the runs that make a change of MinBaseShare
// detectable with power, and the runs whose interval at the verdict's
// alpha would leave the threshold out were the delta to stay where it is
// (power 0.5: the interval's half-width is t(1 - alpha/2) SE).
func runsToDecide(half, off float64, v *Verdict, power float64) int {
	n := stats.ScaleRuns(half, v.Runs.Base, v.Runs.Head, v.MinBaseShare, v.Alpha, power)
	if there := stats.ScaleRuns(half, v.Runs.Base, v.Runs.Head, math.Abs(off), v.Alpha, 0.5); there > n {
		n = there
	}
	return n
}

// pathsRuleOut is the largest upper bound of a tested call path's delta
// with the 95% intervals widened to two-sided intervals at alpha that hold
// for all the m tested nodes at once (Bonferroni: t(1 - alpha/2m) instead
// of t(0.975)), and m. The degrees of freedom are the smaller side's runs -
// 1, the least Welch's can be, which widens the ratio of the quantiles
// most: the bound errs on the safe side.
func pathsRuleOut(t *tree.Tree, alpha float64) (Number, int) {
	var tested []int
	for i := 1; i < len(t.Stats); i++ {
		if !math.IsNaN(t.Stats[i].QValue) && !math.IsNaN(t.Stats[i].DeltaHigh) {
			tested = append(tested, i)
		}
	}
	if len(tested) == 0 {
		return Number(math.NaN()), 0
	}
	scale := 0.0 // exact costs: intervals of width 0, and maybe one run a side
	if !t.Exact {
		df := float64(min(t.Runs[tree.Base], t.Runs[tree.Head]) - 1)
		scale = stats.TQuantile(df, 1-alpha/float64(2*len(tested))) / stats.TQuantile(df, 0.975)
	}
	worst := math.Inf(-1)
	for _, i := range tested {
		s := t.Stats[i]
		worst = math.Max(worst, t.Delta(i)+scale*(s.DeltaHigh-s.DeltaLow)/2)
	}
	return Number(worst), len(tested)
}

// look decides a sequential look: a culprit's regression (at the look's
// alpha, lookAlpha) fails as in one look; otherwise the run totals' test
// of the plan decides.
func (v *Verdict) look(t *tree.Tree, in Input) {
	base, head := v.Totals.Base, v.Totals.Head
	if t.Stats == nil && t.Diff && t.Runs == [2]int{1, 1} { // one run a side, deterministic costs
		base, head = []float64{t.Nodes[0].BaseTotal}, []float64{t.Nodes[0].HeadTotal}
	}
	plan := in.totalPlan()
	plan.Deterministic = plan.Deterministic || t.Exact
	s, err := plan.Decide(base, head)
	if err != nil { // FromTree on runs off the plan: no look
		return
	}
	v.Sequential = &Look{Step: s, Change: Number(s.Change), Low: Number(s.Low), High: Number(s.High),
		Batch: in.Plan.Batch, MaxRuns: in.Plan.MaxRuns, PlanAlpha: Number(in.Plan.Alpha), PlanBeta: Number(in.Plan.Beta)}
	if v.Result == Fail && !v.uniform() {
		return // a culprit regressed by MinBaseShare or more
	}
	v.Result, v.Why = s.Decision, s.Why
	if top := v.top(); top == nil || s.Decision == Pass {
		v.Headline = v.Why
	}
}

// sentence says what the runs can see.
func (p *Power) sentence(v *Verdict) string {
	mdc := float64(p.MDC)
	switch {
	case math.IsNaN(mdc):
		return "The runs' spread is unknown (a side has fewer than 2 runs): nothing can be said about what they detect."
	case p.Deterministic:
		return "The costs are exact (counts that do not vary between runs of a build): one run a side measures any change exactly."
	}
	out := fmt.Sprintf("These runs detect a change of the total of %s or more with %.0f%% power at alpha %g.",
		unsigned(mdc), 100*p.Power, v.Alpha)
	if r := float64(p.RulesOut); !math.IsNaN(r) {
		out += fmt.Sprintf(" They rule out a regression of %s or more at %g%% confidence.", unsigned(math.Max(r, 0)), 100*p.Confidence)
	}
	if r := float64(p.PathsRuleOut); r < v.MinBaseShare {
		over := ""
		if v.Sequential != nil {
			over = " over all looks"
		}
		out += fmt.Sprintf(" No call path's total grew by %s or more (all %d tested at once, %g%% confidence%s).",
			unsigned(math.Max(r, 0)), p.Paths, 100*p.PathsConfidence, over)
	} else if !math.IsNaN(r) {
		out += fmt.Sprintf(" The per-function tests cannot rule out a regression of %s in a single call path.", unsigned(v.MinBaseShare))
	}
	if p.RunsToDecide > 0 {
		out += fmt.Sprintf(" About %d runs a side would detect or rule out %s.", p.RunsToDecide, unsigned(v.MinBaseShare))
	}
	return out
}

// unsigned prints a share without its sign.
func unsigned(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
