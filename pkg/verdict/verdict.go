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
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Results of a verdict.
const (
	Pass         = "PASS"
	Fail         = "FAIL"
	Inconclusive = "INCONCLUSIVE"
	// Continue is a sequential look's (Input.Plan): add runs.
	Continue = "CONTINUE"
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
	// Kind is new, removed, self, spread or replaced.
	Kind string `json:"kind"`
	// Path is the call path of the first site, root first (leaf first in
	// an inverted tree), ending with the function; empty for the root.
	Path []string `json:"path"`
	// OtherSites are the call paths of its other sites.
	OtherSites [][]string `json:"otherSites,omitempty"`
	// Callee is the call inside a new, removed or spread culprit that
	// holds most of its change, or the new callee of a replaced one (""
	// when none does).
	Callee string `json:"callee,omitempty"`
	// Replaced is the callee a replaced or removed culprit no longer
	// calls.
	Replaced string `json:"replaced,omitempty"`
	// NewCallees and GoneCallees are a replaced culprit's swap: the
	// callees it now calls instead of those it no longer calls, largest
	// first.
	NewCallees  []string `json:"newCallees,omitempty"`
	GoneCallees []string `json:"goneCallees,omitempty"`
	// Moved says that the culprit was found in work that moved (Moved):
	// its delta is the cost change inside the moved work, not the moved
	// work's total.
	Moved      bool   `json:"moved,omitempty"`
	Delta      Number `json:"delta"`
	DeltaLow   Number `json:"deltaLow"`
	DeltaHigh  Number `json:"deltaHigh"`
	PValue     Number `json:"pValue"`
	QValue     Number `json:"qValue"`
	Share      Number `json:"share"`
	Regression bool   `json:"regression"`
	// Exact says that the costs are exact (Verdict.Exact): Delta is the
	// change itself, its interval of width 0.
	Exact bool `json:"exact,omitempty"`
	// File and Line locate the function's source ("" and 0: unknown).
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
	// Modified says whether the head build's changes name the function.
	Modified bool `json:"modified"`
	// MDC is the smallest change of this culprit its runs detect
	// (power.go).
	MDC Number `json:"mdc"`
	// RunsToDecide is how many runs a side would decide whether the
	// culprit changed by MinBaseShare or more, when its interval straddles
	// that (power.go; 0 otherwise).
	RunsToDecide int `json:"runsToDecide,omitempty"`
}

// Move is a tree.Move in names: work that moved under one caller.
type Move struct {
	// Function is the part that took the work over (the largest of To),
	// Path its call path, root first; Caller the node it moved under
	// ("" at the root).
	Function string   `json:"function"`
	Path     []string `json:"path"`
	Caller   string   `json:"caller"`
	// To and From are the parts that gained and lost work, largest first:
	// callees, or the caller itself for its own (self) time.
	To   []MovePart `json:"to"`
	From []MovePart `json:"from"`
	// Moved is the work that moved, a share of the base total; Net the
	// change of the caller's self time and every callee taking part, with
	// its 95% interval and Welch's p-value.
	Moved   Number `json:"moved"`
	Net     Number `json:"net"`
	NetLow  Number `json:"netLow"`
	NetHigh Number `json:"netHigh"`
	PValue  Number `json:"pValue"`
}

// MovePart is one part of a move: a callee (new in head, gone from it, or
// on both sides) or the caller's own time (Self).
type MovePart struct {
	Function string `json:"function"`
	// Status is "new", "removed" or "" (on both sides).
	Status string `json:"status,omitempty"`
	// Self says that the part is the caller's own (self) time.
	Self  bool   `json:"self,omitempty"`
	Delta Number `json:"delta"`
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
	// MinBaseShare is the threshold: the smallest regression that fails,
	// a share of the base total. Its JSON name stays minChange for the
	// scripts and frames that read it.
	MinBaseShare float64 `json:"minChange"`
	// Notice says why the diff has no statistics ("" when it has them).
	Notice string `json:"notice,omitempty"`
	// Exact says that the costs do not vary between runs (tree.Tree.Exact:
	// instruction counts): the changes are measured, not estimated.
	Exact bool `json:"exact,omitempty"`
	// Regressions and Improvements are the culprits, largest change first.
	Regressions  []Culprit `json:"regressions"`
	Improvements []Culprit `json:"improvements"`
	// Moved is the work that moved between functions (split off, wrapped,
	// inlined, renamed, replaced) without being a culprit by itself,
	// largest first: never a regression.
	Moved []Move `json:"moved"`
	// Runs, Totals and Change compare the run totals (base and head).
	Runs   Sides[int]       `json:"runs"`
	Totals Sides[[]float64] `json:"totals"`
	Change Change           `json:"change"`
	// Power says what the runs can see (power.go).
	Power *Power `json:"power,omitempty"`
	// Sequential is the look of a CI loop (Input.Plan; nil outside one).
	Sequential *Look `json:"sequential,omitempty"`
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
	Options tree.Options
	// MinBaseShare is the threshold (Verdict.MinBaseShare); every output
	// takes it from query.Judge.
	MinBaseShare float64
	// Modified is the head build's modified functions (pkg/changes).
	Modified map[string]bool
	// Plan makes the verdict a look of a sequential CI loop (power.go).
	Plan *stats.Plan
}

// Of computes the verdict of a diff filled in b.
func Of(b *tree.Builder, in Input) (*Verdict, error) {
	o := in.Options
	o.Focus, o.Inverted = nil, false
	if err := in.lookAlpha(b, &o); err != nil {
		return nil, err
	}
	t, err := b.Build(o)
	if err != nil {
		return nil, err
	}
	return FromTree(t, in), nil
}

// FromTree computes the verdict of a diff tree t (built without Focus, so
// that its root holds the run totals).
func FromTree(t *tree.Tree, in Input) *Verdict {
	v := &Verdict{Normalize: t.Normalize.String(), Alpha: t.Alpha, MinBaseShare: in.MinBaseShare, Notice: t.StatsNotice,
		Runs: Sides[int]{t.Runs[tree.Base], t.Runs[tree.Head]}, Regressions: []Culprit{}, Improvements: []Culprit{}, Exact: t.Exact}
	if v.Alpha == 0 {
		v.Alpha = stats.DefaultAlpha
	}
	if t.Stats != nil {
		v.Totals = Sides[[]float64]{t.Stats[0].BaseRuns, t.Stats[0].HeadRuns}
		s := stats.Compare(v.Totals.Base, v.Totals.Head)
		v.Change = Change{Number(s.Change), Number(s.ChangeLow), Number(s.ChangeHigh), Number(s.PValue)}
		if t.Exact { // the change itself, even from one run a side
			v.Change = Change{Number(s.Change), Number(s.Change), Number(s.Change), Number(t.Stats[0].PValue)}
		}
	}
	cs, moves := t.Changes()
	v.Moved = make([]Move, len(moves))
	for i, m := range moves {
		v.Moved[i] = nameMove(t, m)
	}
	for _, named := range prefer(nameAll(t, cs, in.Modified)) {
		if v.negligible(named) {
			continue
		}
		if named.Regression {
			v.Regressions = append(v.Regressions, named)
		} else {
			v.Improvements = append(v.Improvements, named)
		}
	}
	v.decide(t)
	v.see(t, in)
	return v
}

// Culprits names the culprits of tree t (tree.Tree.Culprits), largest
// change first; modified is the head build's modified functions.
func Culprits(t *tree.Tree, modified map[string]bool) []Culprit {
	return prefer(nameAll(t, t.Culprits(), modified))
}

// explains says whether culprit a explains culprit c, which lies below
// it (docs/CULPRITS.md): a caller that swapped callees explains a change
// of own time found in the moved work under it, in its direction (the
// swapped callees may call the function more or less often); a function
// the head build modified explains one it did not.
func explains(a, c *Culprit) bool {
	if len(a.Path) >= len(c.Path) || !slices.Equal(a.Path, c.Path[:len(a.Path)]) {
		return false
	}
	swap := a.Kind == "replaced" && c.Kind == "self" && c.Moved && a.Regression == c.Regression
	return swap || a.Modified && !c.Modified
}

// explained says, for each of cs, whether another of them explains it.
func explained(cs []Culprit) []bool {
	out := make([]bool, len(cs))
	for i := range cs {
		for j := range cs {
			out[i] = out[i] || explains(&cs[j], &cs[i])
		}
	}
	return out
}

// prefer puts the culprits another explains after the others, each part
// in its order: a culprit explained by another is never the first.
func prefer(cs []Culprit) []Culprit {
	ex := explained(cs)
	out := make([]Culprit, 0, len(cs))
	for _, last := range []bool{false, true} {
		for i, c := range cs {
			if ex[i] == last {
				out = append(out, c)
			}
		}
	}
	return out
}

func nameAll(t *tree.Tree, cs []tree.Culprit, modified map[string]bool) []Culprit {
	out := make([]Culprit, len(cs))
	for i, c := range cs {
		out[i] = name(t, c, modified)
	}
	return out
}

// pathOf is the names of node's call path, root first.
func pathOf(t *tree.Tree, node int) []string {
	var out []string
	for _, f := range t.Path(node) {
		out = append(out, t.Frames.Name(f))
	}
	return out
}

// nameMove turns an engine move into names.
func nameMove(t *tree.Tree, m tree.Move) Move {
	part := func(node int) MovePart {
		nd := t.Nodes[node]
		if node == m.Parent {
			return MovePart{Function: t.Title(node), Self: true, Delta: Number(t.SelfDelta(node))}
		}
		p := MovePart{Function: t.Title(node), Delta: Number(t.Delta(node))}
		switch {
		case nd.BaseTotal == 0:
			p.Status = "new"
		case nd.HeadTotal == 0:
			p.Status = "removed"
		}
		return p
	}
	out := Move{Path: pathOf(t, m.To[0]), Function: t.Title(m.To[0]), Moved: Number(m.Moved), Net: Number(m.Net),
		NetLow: Number(m.NetLow), NetHigh: Number(m.NetHigh), PValue: Number(m.PValue)}
	if m.Parent > 0 {
		out.Caller = t.Title(m.Parent)
	}
	for _, n := range m.To {
		out.To = append(out.To, part(n))
	}
	for _, n := range m.From {
		out.From = append(out.From, part(n))
	}
	return out
}

// name turns an engine culprit into names.
func name(t *tree.Tree, c tree.Culprit, modified map[string]bool) Culprit {
	path := func(node int) []string { return pathOf(t, node) }
	out := Culprit{Kind: c.Kind.String(), Path: path(c.Sites[0]), Delta: Number(c.Delta), DeltaLow: Number(c.DeltaLow),
		DeltaHigh: Number(c.DeltaHigh), PValue: Number(c.PValue), QValue: Number(c.QValue), Share: Number(c.Share),
		Regression: c.Regression(), Moved: c.Moved, Exact: t.Exact}
	if c.Sites[0] == 0 {
		out.Function = "total"
	} else {
		out.Function, out.Module = t.Frames.Title(c.Frame), t.Frames.Module(c.Frame)
		src := t.Frames.Source(c.Frame)
		out.File, out.Line, out.Modified = src.File, src.Line, modified[t.Frames.Name(c.Frame)]
	}
	for _, s := range c.Sites[1:] {
		out.OtherSites = append(out.OtherSites, path(s))
	}
	if c.Callee >= 0 {
		out.Callee = t.Title(c.Callee)
	}
	if c.Replaced >= 0 {
		out.Replaced = t.Title(c.Replaced)
	}
	for _, n := range c.NewCallees {
		out.NewCallees = append(out.NewCallees, t.Title(n))
	}
	for _, n := range c.GoneCallees {
		out.GoneCallees = append(out.GoneCallees, t.Title(n))
	}
	return out
}

// negligible says that a culprit's interval rules out a change of a tenth
// of the threshold (MinBaseShare/10, 0.1% of the base total by default):
// significant, and too small to act on, as the import machinery's few
// microseconds more for a longer path of a virtual environment.
func (v *Verdict) negligible(c Culprit) bool {
	floor := v.MinBaseShare / 10
	return !c.Root() && math.Abs(float64(c.DeltaLow)) < floor && math.Abs(float64(c.DeltaHigh)) < floor
}

// decide sets the result, the headline and why.
func (v *Verdict) decide(t *tree.Tree) {
	failing := 0
	for _, c := range v.Regressions {
		if !c.Root() && float64(c.Delta) >= v.MinBaseShare {
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
			plural(failing, "culprit", "culprits"), Percent(v.MinBaseShare))
	case v.Exact && t.Normalize == tree.Absolute && float64(v.Change.Change) >= v.MinBaseShare:
		// Exact costs leave nothing to rule out: the total grew that much.
		v.Result = Fail
		v.Why = fmt.Sprintf("no culprit regressed by %s or more, but the total grew by %s.", Percent(v.MinBaseShare), Percent(float64(v.Change.Change)))
	case t.Normalize == tree.Absolute && float64(v.Change.ChangeHigh) >= v.MinBaseShare:
		v.Result = Inconclusive
		v.Why = fmt.Sprintf("no culprit regressed significantly by %s or more, but the 95%% confidence interval of the run totals' change "+
			"reaches %s: a regression of that size cannot be ruled out with %d and %d runs (add runs or reduce noise).",
			Percent(v.MinBaseShare), Percent(float64(v.Change.ChangeHigh)), v.Runs.Base, v.Runs.Head)
	default:
		v.Result = Pass
		v.Why = fmt.Sprintf("no culprit regressed significantly by %s of the base total or more.", Percent(v.MinBaseShare))
	}
	if v.Exact && v.Notice == "" {
		v.Why += " The costs are exact (counts that do not vary between runs of a build, as callgrind's): each change is measured, not estimated."
	}
	if n := len(v.Moved); n > 0 {
		v.Why = strings.TrimSuffix(v.Why, ".") + fmt.Sprintf("; work moved between functions in %d %s (%s), a move is no change of cost: the cost changes inside it are culprits.",
			n, plural(n, "place", "places"), strings.TrimSuffix(v.Moved[0].Sentence(), "."))
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

// top is the culprit with the largest change that no other explains
// (nil: none).
func (v *Verdict) top() *Culprit {
	all := append(slices.Clone(v.Regressions), v.Improvements...)
	ex := explained(all)
	var best *Culprit
	for i := range all {
		if !ex[i] && (best == nil || math.Abs(float64(all[i].Delta)) > math.Abs(float64(best.Delta))) {
			best = &all[i]
		}
	}
	return best
}
