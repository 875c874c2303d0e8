package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// DefaultMinBaseShare is the smallest regression the gate fails on, as a
// share of the base total: 1% (of the share, with relative
// normalisation). The flag is --min-change; not stats.DefaultMinBaseShare,
// a relative change of a change point's mean.
const DefaultMinBaseShare = 0.01

// The verdicts of a diff.
const (
	pass         = "PASS"
	fail         = "FAIL"
	inconclusive = "INCONCLUSIVE"
)

// regressionFound is the gate's failure (exit code 3).
type regressionFound struct {
	n            int
	minBaseShare float64
}

func (r regressionFound) Error() string {
	return fmt.Sprintf("%d functions regressed significantly by at least %s of the base total", r.n, percent(r.minBaseShare))
}

// verdict is what a diff says about a change: per function (each stack
// counted once in a function's total) and per run total.
type verdict struct {
	m            query.Model
	unit         string
	minBaseShare float64
	// notice says why the diff has no statistics ("" when it has them).
	notice string
	// regressions and improvements are the significant changes of at
	// least minBaseShare, largest first.
	regressions, improvements []tree.Function
	// runs counts the runs of each side (tree.Side); totals holds each
	// side's per-run totals and summary compares them (with statistics).
	runs    [2]int
	totals  [2][]float64
	summary stats.Summary
	// result is pass, fail or inconclusive; why says why.
	result, why string
}

// judge reads the verdict of a diff query m from its engine.
func judge(b *tree.Builder, m query.Model, rules *sysframes.Rules, unit string, minBaseShare float64) (*verdict, error) {
	o := query.TreeOptions(b, m, rules)
	o.Focus = nil
	v := &verdict{m: m, unit: unit, minBaseShare: minBaseShare, notice: b.StatsNotice()}
	for _, r := range b.Functions(o) {
		switch {
		case !r.Significant:
		case r.Delta >= minBaseShare:
			v.regressions = append(v.regressions, r)
		case r.Delta <= -minBaseShare:
			v.improvements = append(v.improvements, r)
		}
	}
	// The root of any view holds the run totals.
	o.MaxNodes, o.Inverted, o.CollapseSystem = 2, false, false
	t, err := b.Build(o)
	if err != nil {
		return nil, err
	}
	v.runs = t.Runs
	if t.Stats != nil {
		v.totals = [2][]float64{tree.Base: t.Stats[0].BaseRuns, tree.Head: t.Stats[0].HeadRuns}
		v.summary = stats.Compare(v.totals[tree.Base], v.totals[tree.Head])
	}
	switch {
	case v.notice != "":
		v.result, v.why = inconclusive, v.notice+"."
	case len(v.regressions) > 0:
		v.result, v.why = fail, regressionFound{len(v.regressions), minBaseShare}.Error()+"."
	case m.Normalization() == tree.Absolute && v.summary.ChangeHigh >= minBaseShare:
		v.result = inconclusive
		v.why = fmt.Sprintf("no function changed significantly by %s or more, but the 95%% confidence interval of the run totals' change "+
			"reaches %s: a regression of that size cannot be ruled out with %d and %d runs (add runs or reduce noise).",
			percent(minBaseShare), percent(v.summary.ChangeHigh), v.runs[tree.Base], v.runs[tree.Head])
	default:
		v.result = pass
		v.why = fmt.Sprintf("no function regressed significantly by %s of the base total or more.", percent(minBaseShare))
	}
	return v, nil
}

// gate is the error --fail-on-regression returns for a verdict.
func (v *verdict) gate() error {
	if v.result == fail {
		return regressionError{regressionFound{len(v.regressions), v.minBaseShare}}
	}
	return nil
}

// writeMarkdown prints the verdict as a pull request comment, at most top
// changes per list (0: all).
func (v *verdict) writeMarkdown(out io.Writer, top int) error {
	u := frames.GrafanaUnit(v.unit)
	var sb strings.Builder
	fmt.Fprintf(&sb, "### Flamediff: %s\n\n**%s**: %s\n\n", v.result, v.result, v.why)
	sb.WriteString("| side | runs | mean total | std. dev. | spread (CV) | min .. max |\n|---|---:|---:|---:|---:|---|\n")
	for _, s := range []struct {
		name string
		side tree.Side
	}{{"base", tree.Base}, {"head", tree.Head}} {
		xs := v.totals[s.side]
		if len(xs) == 0 {
			fmt.Fprintf(&sb, "| %s | %d | - | - | - | - |\n", s.name, v.runs[s.side])
			continue
		}
		d := stats.Describe(xs)
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %.1f%% | %s .. %s |\n", s.name, v.runs[s.side], human(d.Mean, u), human(d.StdDev, u),
			100*d.StdDev/d.Mean, human(slices.Min(xs), u), human(slices.Max(xs), u))
	}
	if v.totals[tree.Base] != nil {
		sig := "not significant"
		if v.summary.PValue < stats.DefaultAlpha {
			sig = "significant"
		}
		fmt.Fprintf(&sb, "\nRun totals: head vs base **%s** (95%% CI %s), Mann-Whitney U p = %s (%s at %g).\n",
			percent(v.summary.Change), interval(v.summary.ChangeLow, v.summary.ChangeHigh), pval(v.summary.PValue), sig, stats.DefaultAlpha)
	}
	fmt.Fprintf(&sb, "\nPer function: Welch's t-test of its per-run totals (each stack counted once), Benjamini-Hochberg q < %g, "+
		"%s normalisation; changes of at least %s of the base total.\n", *v.m.Alpha, v.m.Normalize, percent(v.minBaseShare))
	for _, list := range []struct {
		title string
		rows  []tree.Function
	}{{"Significant regressions", v.regressions}, {"Significant improvements", v.improvements}} {
		fmt.Fprintf(&sb, "\n#### %s (%d)\n\n", list.title, len(list.rows))
		if len(list.rows) == 0 {
			sb.WriteString("None.\n")
			continue
		}
		sb.WriteString("| function | base | head | delta | 95% CI | q |\n|---|---:|---:|---:|---|---:|\n")
		rows := list.rows
		if top > 0 && len(rows) > top {
			rows = rows[:top]
		}
		for _, r := range rows {
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", codeSpan(r.Name), human(r.BaseTotal, u), human(r.HeadTotal, u),
				percent(r.Delta), interval(r.DeltaLow, r.DeltaHigh), pval(r.QValue))
		}
		if len(rows) < len(list.rows) {
			fmt.Fprintf(&sb, "\n… and %d more.\n", len(list.rows)-len(rows))
		}
	}
	_, err := io.WriteString(out, sb.String())
	return err
}

// codeSpan quotes a function name for a Markdown table cell.
func codeSpan(name string) string {
	name = strings.ReplaceAll(name, "|", `\|`)
	if strings.Contains(name, "`") {
		return name
	}
	return "`" + name + "`"
}
