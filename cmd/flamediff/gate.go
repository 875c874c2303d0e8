package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// gate is the error --fail-on-regression returns for a verdict (exit code
// 3 when it fails).
func gate(v *verdict.Verdict) error {
	if v.Result == verdict.Fail {
		return regressionError{fmt.Errorf("%s %s", strings.TrimSuffix(v.Why, "."), v.Headline)}
	}
	return nil
}

// writeVerdict prints the verdict's first lines, above a diff's table.
func writeVerdict(out io.Writer, v *verdict.Verdict) error {
	_, err := fmt.Fprintf(out, "%s: %s\n%s\n%s\n\n", v.Result, v.Headline, v.Why, seeing(v))
	return err
}

// writeMarkdown prints the verdict as a pull request comment, at most top
// culprits per list (0: all); unit is the profile's sample unit.
func writeMarkdown(out io.Writer, v *verdict.Verdict, unit string, top int) error {
	u := frames.GrafanaUnit(unit)
	var sb strings.Builder
	fmt.Fprintf(&sb, "### Flamediff: %s\n\n**%s**: %s\n\n%s\n\n%s\n\n", v.Result, v.Result, v.Headline, v.Why, seeing(v))
	sb.WriteString("| side | runs | mean total | std. dev. | spread (CV) | min .. max |\n|---|---:|---:|---:|---:|---|\n")
	for _, s := range []struct {
		name string
		runs int
		xs   []float64
	}{{"base", v.Runs.Base, v.Totals.Base}, {"head", v.Runs.Head, v.Totals.Head}} {
		if len(s.xs) == 0 {
			fmt.Fprintf(&sb, "| %s | %d | - | - | - | - |\n", s.name, s.runs)
			continue
		}
		d := stats.Describe(s.xs)
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %.1f%% | %s .. %s |\n", s.name, s.runs, frames.FormatValue(d.Mean, u), frames.FormatValue(d.StdDev, u),
			100*d.StdDev/d.Mean, frames.FormatValue(slices.Min(s.xs), u), frames.FormatValue(slices.Max(s.xs), u))
	}
	if v.Totals.Base != nil {
		sig := "not significant"
		if float64(v.Change.PValue) < stats.DefaultAlpha {
			sig = "significant"
		}
		fmt.Fprintf(&sb, "\nRun totals: head vs base **%s** (95%% CI %s), Mann-Whitney U p = %s (%s at %g).\n",
			verdict.Percent(float64(v.Change.Change)), verdict.Interval(float64(v.Change.ChangeLow), float64(v.Change.ChangeHigh)),
			verdict.PValue(float64(v.Change.PValue)), sig, stats.DefaultAlpha)
	}
	fmt.Fprintf(&sb, "\nCulprits: the places where a change enters the call tree (docs/CULPRITS.md), found at a "+
		"false-positive rate of %g, %s normalisation; the gate counts regressions of at least %s of the base total.\n",
		v.Alpha, v.Normalize, verdict.Percent(v.MinBaseShare))
	for _, list := range []struct {
		title string
		rows  []verdict.Culprit
	}{{"Regressions", v.Regressions}, {"Improvements", v.Improvements}} {
		fmt.Fprintf(&sb, "\n#### %s (%d)\n\n", list.title, len(list.rows))
		if len(list.rows) == 0 {
			sb.WriteString("None.\n")
			continue
		}
		sb.WriteString("| function | kind | called from | delta | 95% CI | q | detects | share | source |\n|---|---|---|---:|---|---:|---:|---:|---|\n")
		rows := list.rows
		if top > 0 && len(rows) > top {
			rows = rows[:top]
		}
		for _, c := range rows {
			caller := "-"
			if len(c.Path) > 1 {
				caller = codeSpan(c.Path[len(c.Path)-2])
			}
			if n := len(c.OtherSites); n > 0 {
				caller += fmt.Sprintf(" (+%d)", n)
			}
			kind := c.Kind
			switch {
			case c.Kind == "replaced" && len(c.NewCallees) > 0:
				kind += fmt.Sprintf(" (calls %s instead of %s)", codeSpans(c.NewCallees), codeSpans(c.GoneCallees))
			case c.Kind == "removed" && c.Replaced != "":
				// The callee gone, and no other function.
				kind += fmt.Sprintf(" (no longer calls %s)", codeSpan(c.Replaced))
			}
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", codeSpan(c.Function), kind, caller,
				verdict.Percent(float64(c.Delta)), verdict.Interval(float64(c.DeltaLow), float64(c.DeltaHigh)),
				verdict.PValue(float64(c.QValue)), detects(c), share(float64(c.Share)), source(c))
		}
		if len(rows) < len(list.rows) {
			fmt.Fprintf(&sb, "\n… and %d more.\n", len(list.rows)-len(rows))
		}
	}
	writeMoves(&sb, v.Moved)
	_, err := io.WriteString(out, sb.String())
	return err
}

// writeMoves lists the work that moved between functions: no change of
// cost by itself (docs/CULPRITS.md).
func writeMoves(sb *strings.Builder, moves []verdict.Move) {
	if len(moves) == 0 {
		return
	}
	fmt.Fprintf(sb, "\n#### Moved work (%d): no change of cost by itself\n\n", len(moves))
	for _, m := range moves {
		fmt.Fprintf(sb, "- %s\n", m.Sentence())
	}
}

// share prints a culprit's share of the change.
func share(s float64) string {
	if s != s {
		return "-"
	}
	if s == 0 {
		return "0"
	}
	return fmt.Sprintf("%.0f%%", 100*s)
}

// detects prints a culprit's minimum detectable change and, when it is
// undecided, the runs a side that would decide it.
func detects(c verdict.Culprit) string {
	mdc := float64(c.MDC)
	if mdc != mdc {
		return "-"
	}
	out := fmt.Sprintf("%.2f%%", 100*mdc)
	if c.RunsToDecide > 0 {
		out += fmt.Sprintf(" (%d runs to decide)", c.RunsToDecide)
	}
	return out
}

// seeing says what the verdict's runs can see, and where a sequential
// look stands.
func seeing(v *verdict.Verdict) string {
	out := v.Power.Sentence
	if l := lookLine(v); l != "" {
		out += " " + l
	}
	return out
}

// source prints where a culprit's code is, and whether head modified it.
func source(c verdict.Culprit) string {
	out := "-"
	if c.File != "" {
		out = codeSpan(fmt.Sprintf("%s:%d", baseName(c.File), c.Line))
	}
	if c.Modified {
		out += " (modified)"
	}
	return out
}

// baseName is a file's last path element (a build machine's absolute path
// says nothing to a reader).
func baseName(file string) string {
	return file[strings.LastIndexAny(file, `/\`)+1:]
}

// codeSpans prints names as code spans, comma-separated.
func codeSpans(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = codeSpan(n)
	}
	return strings.Join(out, ", ")
}

// codeSpan quotes a function name for a Markdown table cell.
func codeSpan(name string) string {
	name = strings.ReplaceAll(name, "|", `\|`)
	if strings.Contains(name, "`") {
		return name
	}
	return "`" + name + "`"
}
