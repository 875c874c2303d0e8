package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultPower is the power a minimum detectable change is stated at.
const DefaultPower = 0.8

// MDC is the minimum detectable change of the mean, as a share of the
// base mean: the smallest change a two-sided Welch test at alpha finds
// with the given power, at the observed spread of each side and its run
// count, (t(1-alpha/2) + t(power)) SE / base mean. 0 when neither side
// spreads (deterministic costs); NaN when a side has fewer than 2 runs or
// the base mean is 0.
func MDC(base, head Side, alpha, power float64) float64 {
	if base.N < 2 || head.N < 2 || base.Mean == 0 || math.IsNaN(base.Mean) {
		return math.NaN()
	}
	vb, vh := base.StdDev*base.StdDev/float64(base.N), head.StdDev*head.StdDev/float64(head.N)
	if vb+vh == 0 {
		return 0
	}
	df := (vb + vh) * (vb + vh) / (vb*vb/float64(base.N-1) + vh*vh/float64(head.N-1))
	return detectable(df, alpha, power) * math.Sqrt(vb+vh) / math.Abs(base.Mean)
}

// detectable is t(1-alpha/2) + t(power) at df degrees of freedom: how many
// standard errors a change must be to be found with that power.
func detectable(df, alpha, power float64) float64 {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return t.Quantile(1-alpha/2) + t.Quantile(power)
}

// TQuantile is Student's t quantile at p with df degrees of freedom.
func TQuantile(df, p float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// ScaleMDC turns a 95% interval's half-width, from a Welch test at df
// degrees of freedom, into the minimum detectable change of the same test
// at alpha and power.
func ScaleMDC(halfWidth, df, alpha, power float64) float64 {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return halfWidth * detectable(df, alpha, power) / t.Quantile(0.975)
}

// RunsFor is how many runs a side make change (a share of the base mean)
// detectable by a two-sided Welch test at alpha with the given power, at the
// observed per-run spread of each side: the smallest n with MDC <= change.
// 1 when neither side spreads; 0 when the spread is unknown (a side has
// fewer than 2 runs) or change is not positive.
func RunsFor(base, head Side, change, alpha, power float64) int {
	if base.N < 2 || head.N < 2 || base.Mean == 0 || !(change > 0) {
		return 0
	}
	return runsAt((base.StdDev*base.StdDev+head.StdDev*head.StdDev)/(base.Mean*base.Mean), change, alpha, power)
}

// ScaleRuns is RunsFor for a test known by its 95% interval's half-width
// (a share, from a Welch test of nBase and nHead runs): the per-run
// variance it implies, SE^2 x 2/(1/nBase + 1/nHead) (exact when both sides
// spread alike), at n runs a side. 0 when the interval or the change is
// unknown or a side has fewer than 2 runs.
func ScaleRuns(halfWidth float64, nBase, nHead int, change, alpha, power float64) int {
	if nBase < 2 || nHead < 2 || !(change > 0) || !(halfWidth >= 0) || math.IsInf(halfWidth, 0) {
		return 0
	}
	se := halfWidth / TQuantile(float64(nBase+nHead-2), 0.975)
	return runsAt(se*se*2/(1/float64(nBase)+1/float64(nHead)), change, alpha, power)
}

// runsAt is the smallest n a side whose MDC at per-run relative variance
// rel (base's plus head's, over the squared base mean) reaches change.
func runsAt(rel, change, alpha, power float64) int {
	if rel == 0 {
		return 1
	}
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(power)
	// The normal quantiles give a lower bound; the t quantiles at 2n-2
	// degrees of freedom ask a little more.
	est := z * z * rel / (change * change)
	if est > 1<<20 {
		return 1 << 20
	}
	n := max(2, int(math.Ceil(est-1e-9)))
	for n < 1<<20 && detectable(float64(2*n-2), alpha, power)*math.Sqrt(rel/float64(n)) > change*(1+1e-9) {
		n++
	}
	return n
}

// Decisions of a sequential look.
const (
	Pass         = "PASS"
	Fail         = "FAIL"
	Continue     = "CONTINUE"
	Inconclusive = "INCONCLUSIVE"
)

// Plan is a sequential test of the run totals: a CI loop adds Batch runs a
// side between looks, up to MaxRuns a side, and asks after each batch
// whether head regressed by MinBaseShare (a share of the base mean) or more.
//
// It is a group-sequential design with linear alpha spending bounded by
// Bonferroni: look k of K (at min(k Batch, MaxRuns) runs a side) spends
// Alpha (t_k - t_k-1) on FAIL and Beta (t_k - t_k-1) on PASS, t_k the
// share of MaxRuns reached. FAIL needs the one-sided lower bound of the
// change at its look's alpha above 0, PASS the one-sided upper bound at its
// look's beta below MinBaseShare; the union bound over the looks keeps the
// chance of any false FAIL (no change) under Alpha and of any false PASS
// (a regression of MinBaseShare or more) under Beta, whatever the dependence
// between looks (docs/STATISTICS.md).
type Plan struct {
	Batch, MaxRuns int
	// Alpha bounds the false-FAIL rate, Beta the false-PASS rate, over
	// every look.
	Alpha, Beta float64
	// MinBaseShare is the smallest regression that fails: a share of the
	// base mean (the verdict's threshold).
	MinBaseShare float64
	// Deterministic says the costs do not vary between runs (instruction
	// counts): one run a side decides.
	Deterministic bool
}

// Check rejects plans no loop can follow.
func (p Plan) Check() error {
	switch {
	case p.Batch < 1 || p.MaxRuns < p.Batch:
		return fmt.Errorf("a sequential plan needs a batch of 1 run or more and max runs (%d) at least the batch (%d)", p.MaxRuns, p.Batch)
	case !(p.Alpha > 0 && p.Alpha < 1) || !(p.Beta > 0 && p.Beta < 1):
		return fmt.Errorf("alpha (%v) and beta (%v) must be between 0 and 1", p.Alpha, p.Beta)
	case !(p.MinBaseShare > 0):
		return fmt.Errorf("a sequential plan needs a positive minimum change, not %v", p.MinBaseShare)
	}
	return nil
}

// Looks is the number of looks of the plan.
func (p Plan) Looks() int { return (p.MaxRuns + p.Batch - 1) / p.Batch }

// Look is the index (1-based) of the look at n runs a side, or an error
// when n is not where the plan looks.
func (p Plan) Look(n int) (int, error) {
	if n > p.MaxRuns || n < 1 || (n%p.Batch != 0 && n != p.MaxRuns) {
		return 0, fmt.Errorf("%d runs a side is not a look of the plan (every %d runs up to %d): add runs in batches of %d",
			n, p.Batch, p.MaxRuns, p.Batch)
	}
	return (n + p.Batch - 1) / p.Batch, nil
}

// Spent is the alpha and beta look k spends.
func (p Plan) Spent(k int) (alpha, beta float64) {
	t := func(k int) float64 { return float64(min(k*p.Batch, p.MaxRuns)) / float64(p.MaxRuns) }
	w := t(k) - t(k-1)
	return p.Alpha * w, p.Beta * w
}

// Step is the answer of one look.
type Step struct {
	// Decision is Pass, Fail, Continue or Inconclusive (the last look
	// decided nothing).
	Decision string `json:"decision"`
	// Runs is the runs a side looked at (the smaller side's count), Look
	// its look of Looks.
	Runs  int `json:"runs"`
	Look  int `json:"look"`
	Looks int `json:"looks"`
	// Alpha and Beta are what this look spends.
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	// Change is the run totals' relative change of the mean; Low is its
	// one-sided lower bound at 1-Alpha, High its upper bound at 1-Beta
	// (NaN when unknown: JSON goes through pkg/verdict's Number).
	Change, Low, High float64 `json:"-"`
	// More is the suggested number of further runs a side (Continue).
	More int `json:"more,omitempty"`
	// Deterministic says that neither side's totals spread (or the plan
	// says so): the change is exact.
	Deterministic bool `json:"deterministic,omitempty"`
	// Why says why, in a sentence.
	Why string `json:"why"`
}

// Decide is look at the run totals of base and head. An error says the
// look is not one of the plan.
func (p Plan) Decide(base, head []float64) (Step, error) {
	b, h := Describe(base), Describe(head)
	n := min(b.N, h.N)
	k, err := p.Look(n)
	if err != nil {
		return Step{}, err
	}
	s := Step{Runs: n, Look: k, Looks: p.Looks(), Change: h.Mean/b.Mean - 1}
	s.Alpha, s.Beta = p.Spent(k)
	nan := math.NaN()
	s.Low, s.High = nan, nan
	last := n >= p.MaxRuns
	s.Deterministic = p.Deterministic || (n >= 2 && b.StdDev == 0 && h.StdDev == 0)
	switch {
	case b.Mean == 0 || math.IsNaN(s.Change):
		s.Decision, s.Why = Inconclusive, "the base runs' total is 0: there is nothing to compare against."
		return s, nil
	case s.Deterministic:
		s.Low, s.High = s.Change, s.Change
		s.Decision = Pass
		if s.Change >= p.MinBaseShare {
			s.Decision = Fail
		}
		s.Why = fmt.Sprintf("costs are deterministic (every run of a side has the same total), so %d %s: the change is exactly %s.",
			n, map[bool]string{true: "run a side decides", false: "runs a side decide"}[n == 1], percent(s.Change))
		return s, nil
	case n < 2:
		s.Decision, s.More = Continue, p.Batch
		s.Why = "a side's spread needs at least 2 runs."
		if last {
			s.Decision = Inconclusive
		}
		return s, nil
	}
	lo, _ := RatioCI(h, b, 1-2*s.Alpha)
	_, hi := RatioCI(h, b, 1-2*s.Beta)
	s.Low, s.High = lo-1, hi-1
	switch {
	case s.High < p.MinBaseShare:
		s.Decision = Pass
		s.Why = fmt.Sprintf("no regression of %s or more (upper bound %s at look %d of %d, false-PASS rate under %g over all looks).",
			percent(p.MinBaseShare), percent(s.High), k, s.Looks, p.Beta)
	case s.Low > 0:
		s.Decision = Fail
		s.Why = fmt.Sprintf("the run totals regressed by %s (lower bound %s at look %d of %d, false-FAIL rate under %g over all looks), and a regression of %s cannot be ruled out.",
			percent(s.Change), percent(s.Low), k, s.Looks, p.Alpha, percent(p.MinBaseShare))
	case last:
		s.Decision = Inconclusive
		s.Why = fmt.Sprintf("%d runs a side, the plan's maximum, neither show a regression nor rule out one of %s (bounds %s .. %s).",
			n, percent(p.MinBaseShare), percent(s.Low), percent(s.High))
	default:
		s.Decision = Continue
		s.More = p.more(b, h, s)
		s.Why = fmt.Sprintf("%d runs a side neither show a regression nor rule out one of %s (bounds %s .. %s): add about %d runs a side.",
			n, percent(p.MinBaseShare), percent(s.Low), percent(s.High), s.More)
	}
	return s, nil
}

// more is how many further runs a side would likely decide: the runs that
// make the bound nearer a decision cross it at the observed change and
// spread, at this look's levels, in whole batches up to the plan's maximum.
func (p Plan) more(b, h Side, s Step) int {
	rel := (b.StdDev*b.StdDev + h.StdDev*h.StdDev) / (b.Mean * b.Mean)
	// FAIL needs the change clear of 0, PASS clear of MinBaseShare: the
	// easier of the two is the farther.
	need := max(s.Change, p.MinBaseShare-s.Change)
	z := distuv.UnitNormal.Quantile(1 - min(s.Alpha, s.Beta))
	n := int(math.Ceil(z * z * rel / (need * need)))
	more := max(p.Batch, n-s.Runs)
	more = (more + p.Batch - 1) / p.Batch * p.Batch
	return min(more, p.MaxRuns-s.Runs)
}

// percent prints a change with its sign.
func percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100*v)
}
