// Package verdict says what a diff means, once, for every output: the CLI
// gate, its table, markdown and GitHub outputs, and the query layer's
// culprits frame. Its first line names the top culprit (docs/CULPRITS.md);
// regressions and improvements are apart; the run totals' comparison
// decides when no culprit does.
package verdict

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Results of a verdict.
const (
	Pass         = "PASS"
	Fail         = "FAIL"
	Inconclusive = "INCONCLUSIVE"
)

// DefaultMinBaseShare is the smallest regression a verdict fails on: 1% of
// the base total (of the share, with relative normalisation).
const DefaultMinBaseShare = 0.01

// Number is a float64 that is null in JSON when it is not finite.
type Number float64

// MarshalJSON writes NaN and infinities as null.
func (n Number) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// Culprit is a tree.Culprit in names: where a change enters the tree.
type Culprit struct {
	Function string `json:"function"`
	Module   string `json:"module,omitempty"`
	// Kind is new, removed, self or spread.
	Kind string `json:"kind"`
	// Path is the call path of the first site, root first (leaf first in
	// an inverted tree), ending with the function; empty for the root.
	Path []string `json:"path"`
	// OtherSites are the call paths of its other sites.
	OtherSites [][]string `json:"otherSites,omitempty"`
	// Callee is the call inside a new, removed or spread culprit that
	// holds most of its change ("" when none does).
	Callee     string `json:"callee,omitempty"`
	Delta      Number `json:"delta"`
	DeltaLow   Number `json:"deltaLow"`
	DeltaHigh  Number `json:"deltaHigh"`
	PValue     Number `json:"pValue"`
	QValue     Number `json:"qValue"`
	Share      Number `json:"share"`
	Regression bool   `json:"regression"`
	// File and Line locate the function's source ("" and 0: unknown).
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
	// Modified says whether the head build's changes name the function.
	Modified bool `json:"modified"`
}

// Root says whether the culprit is the whole profile (a spread at the
// root).
func (c *Culprit) Root() bool { return len(c.Path) == 0 }

// Verdict is what a diff says.
type Verdict struct {
	// Result is Pass, Fail or Inconclusive.
	Result string `json:"result"`
	// Headline is the first line: the top culprit's sentence, or why
	// there is none.
	Headline string `json:"headline"`
	// Why says why the result is what it is.
	Why       string  `json:"why"`
	Normalize string  `json:"normalize"`
	Alpha     float64 `json:"alpha"`
	MinChange float64 `json:"minChange"`
	// Notice says why the diff has no statistics ("" when it has them).
	Notice string `json:"notice,omitempty"`
	// Regressions and Improvements are the culprits, largest change first.
	Regressions  []Culprit `json:"regressions"`
	Improvements []Culprit `json:"improvements"`
	// Runs, Totals and Change compare the run totals (base and head).
	Runs   Sides[int]       `json:"runs"`
	Totals Sides[[]float64] `json:"totals"`
	Change Change           `json:"change"`
}

// Sides holds a value of each side.
type Sides[T any] struct {
	Base T `json:"base"`
	Head T `json:"head"`
}

// Change is the run totals' relative change of the mean with its 95%
// interval and Mann-Whitney U p-value (stats.Summary).
type Change struct {
	Change     Number `json:"change"`
	ChangeLow  Number `json:"changeLow"`
	ChangeHigh Number `json:"changeHigh"`
	PValue     Number `json:"pValue"`
}

// Input is what a verdict is computed from.
type Input struct {
	// Options are the diff's (a query's tree options); culprits are found
	// in the call tree they give without Focus, not inverted.
	Options   tree.Options
	MinChange float64
	// Modified is the head build's modified functions (pkg/changes).
	Modified map[string]bool
}

// Of computes the verdict of a diff filled in b.
func Of(b *tree.Builder, in Input) (*Verdict, error) {
	o := in.Options
	o.Focus, o.Inverted = nil, false
	t, err := b.Build(o)
	if err != nil {
		return nil, err
	}
	return FromTree(t, in), nil
}

// FromTree computes the verdict of a diff tree t (built without Focus, so
// that its root holds the run totals).
func FromTree(t *tree.Tree, in Input) *Verdict {
	v := &Verdict{Normalize: t.Normalize.String(), Alpha: t.Alpha, MinChange: in.MinChange, Notice: t.StatsNotice,
		Runs: Sides[int]{t.Runs[tree.Base], t.Runs[tree.Head]}, Regressions: []Culprit{}, Improvements: []Culprit{}}
	if v.Alpha == 0 {
		v.Alpha = stats.DefaultAlpha
	}
	if t.Stats != nil {
		v.Totals = Sides[[]float64]{t.Stats[0].BaseRuns, t.Stats[0].HeadRuns}
		s := stats.Compare(v.Totals.Base, v.Totals.Head)
		v.Change = Change{Number(s.Change), Number(s.ChangeLow), Number(s.ChangeHigh), Number(s.PValue)}
	}
	for _, named := range Culprits(t, in.Modified) {
		if named.Regression {
			v.Regressions = append(v.Regressions, named)
		} else {
			v.Improvements = append(v.Improvements, named)
		}
	}
	v.decide(t)
	return v
}

// Culprits names the culprits of tree t (tree.Tree.Culprits), largest
// change first; modified is the head build's modified functions.
func Culprits(t *tree.Tree, modified map[string]bool) []Culprit {
	cs := t.Culprits()
	out := make([]Culprit, len(cs))
	for i, c := range cs {
		out[i] = name(t, c, modified)
	}
	return out
}

// name turns an engine culprit into names.
func name(t *tree.Tree, c tree.Culprit, modified map[string]bool) Culprit {
	path := func(node int) []string {
		var out []string
		for _, f := range t.Path(node) {
			out = append(out, t.Frames.Name(f))
		}
		return out
	}
	out := Culprit{Kind: c.Kind.String(), Path: path(c.Sites[0]), Delta: Number(c.Delta), DeltaLow: Number(c.DeltaLow),
		DeltaHigh: Number(c.DeltaHigh), PValue: Number(c.PValue), QValue: Number(c.QValue), Share: Number(c.Share),
		Regression: c.Regression()}
	if c.Sites[0] == 0 {
		out.Function = "total"
	} else {
		out.Function, out.Module = t.Frames.Name(c.Frame), t.Frames.Module(c.Frame)
		src := t.Frames.Source(c.Frame)
		out.File, out.Line, out.Modified = src.File, src.Line, modified[out.Function]
	}
	for _, s := range c.Sites[1:] {
		out.OtherSites = append(out.OtherSites, path(s))
	}
	if c.Callee >= 0 {
		out.Callee = t.Label(c.Callee)
	}
	return out
}

// decide sets the result, the headline and why.
func (v *Verdict) decide(t *tree.Tree) {
	failing := 0
	for _, c := range v.Regressions {
		if !c.Root() && float64(c.Delta) >= v.MinChange {
			failing++
		}
	}
	switch {
	case v.Notice != "":
		v.Result, v.Why = Inconclusive, v.Notice+"."
	case v.uniform():
		v.Result = Inconclusive
		v.Why = "every function changed in proportion, which a slower or busier machine, more load or longer runs " +
			"cause as well as the code: compare with normalize=relative (--normalize relative) to see what changed in proportion, " +
			"or run both builds on the same quiet machine."
	case failing > 0:
		v.Result = Fail
		v.Why = fmt.Sprintf("%d %s regressed significantly by at least %s of the base total.", failing,
			plural(failing, "culprit", "culprits"), Percent(v.MinChange))
	case t.Normalize == tree.Absolute && float64(v.Change.ChangeHigh) >= v.MinChange:
		v.Result = Inconclusive
		v.Why = fmt.Sprintf("no culprit regressed significantly by %s or more, but the 95%% confidence interval of the run totals' change "+
			"reaches %s: a regression of that size cannot be ruled out with %d and %d runs (add runs or reduce noise).",
			Percent(v.MinChange), Percent(float64(v.Change.ChangeHigh)), v.Runs.Base, v.Runs.Head)
	default:
		v.Result = Pass
		v.Why = fmt.Sprintf("no culprit regressed significantly by %s of the base total or more.", Percent(v.MinChange))
	}
	v.Headline = v.Why
	if top := v.top(); top != nil {
		v.Headline = top.Sentence()
	}
}

// uniform says whether the only culprit is a change of the whole profile.
func (v *Verdict) uniform() bool {
	all := append(append([]Culprit(nil), v.Regressions...), v.Improvements...)
	return len(all) == 1 && all[0].Root()
}

// top is the culprit with the largest change (nil: none).
func (v *Verdict) top() *Culprit {
	var best *Culprit
	for _, list := range [][]Culprit{v.Regressions, v.Improvements} {
		for i := range list {
			if best == nil || math.Abs(float64(list[i].Delta)) > math.Abs(float64(best.Delta)) {
				best = &list[i]
			}
		}
	}
	return best
}

// Sentence says what the culprit is, in one line.
func (c *Culprit) Sentence() string {
	change := fmt.Sprintf("%s of the base total (95%% CI %s, q %s)", Percent(float64(c.Delta)),
		Interval(float64(c.DeltaLow), float64(c.DeltaHigh)), PValue(float64(c.QValue)))
	if c.Root() {
		dir := "grew"
		if !c.Regression {
			dir = "shrank"
		}
		return fmt.Sprintf("Everything %s in proportion, %s: one change spread over the whole profile, not separate regressions; "+
			"compare with normalize=relative.", dir, change)
	}
	fn := "`" + c.Function + "`"
	var what string
	switch c.Kind {
	case "new":
		what = fn + " is new in head"
	case "removed":
		what = fn + " is gone from head"
	case "self":
		what = fn + "'s own code " + map[bool]string{true: "grew", false: "shrank"}[c.Regression]
	default:
		what = fn + " " + map[bool]string{true: "grew", false: "shrank"}[c.Regression] + " as a whole (called more or less often, or doing more or less of everything)"
	}
	var sb strings.Builder
	sb.WriteString(what)
	if caller := c.caller(); caller != "" {
		fmt.Fprintf(&sb, ", called from `%s`", caller)
	}
	if n := len(c.OtherSites); n > 0 {
		fmt.Fprintf(&sb, " and %d other call %s", n, plural(n, "site", "sites"))
	}
	fmt.Fprintf(&sb, ": %s", change)
	if s := float64(c.Share); !math.IsNaN(s) && s > 0 {
		fmt.Fprintf(&sb, ", %.0f%% of the total's change", 100*s)
	}
	if c.Callee != "" {
		fmt.Fprintf(&sb, ", mostly in `%s`", c.Callee)
	}
	if c.Modified {
		sb.WriteString("; the head build modified it")
	}
	sb.WriteString(".")
	return sb.String()
}

// caller is the frame above the function on its path ("" at the top).
func (c *Culprit) caller() string {
	if len(c.Path) < 2 {
		return ""
	}
	return c.Path[len(c.Path)-2]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Percent prints a share or change with its sign ("-" when not finite, a
// plain "0" for none).
func Percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%+.2f%%", 100*v)
}

// Interval prints a confidence interval of a change.
func Interval(low, high float64) string {
	if math.IsNaN(low) || math.IsNaN(high) {
		return "-"
	}
	return Percent(low) + " .. " + Percent(high)
}

// PValue prints a p- or q-value.
func PValue(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.2g", p)
}
