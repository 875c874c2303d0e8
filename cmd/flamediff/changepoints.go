package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
)

// regressionError fails a gate: a significant regression was found (exit
// code 3, apart from usage errors' 2 and failures' 1).
type regressionError struct{ error }

// changePoint is a row of a changepoints frame.
type changePoint struct {
	function, build, previous, commit string
	before, after                     float64
	change                            *float64
	pValue                            float64
	significant                       bool
}

// changePoints reads a changepoints frame's rows.
func changePoints(f *data.Frame) []changePoint {
	col := func(name string) *data.Field {
		fl, _ := f.FieldByName(name)
		return fl
	}
	function, build, previous, commit := col("function"), col("build"), col("previous"), col("commit")
	before, after, change, p, sig := col("before"), col("after"), col("change"), col("pValue"), col("significant")
	out := make([]changePoint, f.Rows())
	for i := range out {
		out[i] = changePoint{
			function: function.At(i).(string), build: build.At(i).(string), previous: previous.At(i).(string),
			commit: commit.At(i).(string), before: before.At(i).(float64), after: after.At(i).(float64),
			change: change.At(i).(*float64), pValue: p.At(i).(float64), significant: sig.At(i).(bool),
		}
	}
	return out
}

// changePointsOutput prints a changepoints answer (a table, or JSON) and,
// with gate, fails on a regression starting at the newest build.
func changePointsOutput(out io.Writer, frames data.Frames, output string, gate bool) error {
	var err error
	switch output {
	case "json":
		err = writeJSON(out, frames)
	case "table":
		err = writeChangePoints(out, frames[0])
	default:
		return usageError{fmt.Errorf("--output must be json or table for changepoints, not %q", output)}
	}
	if err == nil && gate {
		err = changePointGate(frames[0])
	}
	return err
}

// writeChangePoints prints a changepoints answer as a table, newest first.
func writeChangePoints(out io.Writer, f *data.Frame) error {
	unit := ""
	if fl, _ := f.FieldByName("before"); fl != nil && fl.Config != nil {
		unit = fl.Config.Unit
	}
	cps := changePoints(f)
	if len(cps) == 0 {
		_, err := fmt.Fprintln(out, "no change points")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FUNCTION\tBUILD\tSINCE\tCOMMIT\tBEFORE\tAFTER\tCHANGE\tP\tSIGNIFICANT")
	for _, c := range cps {
		change := "new" // from 0: the function appears
		if c.change != nil {
			change = fmt.Sprintf("%+.1f%%", 100**c.change)
		}
		verdict := "no (under minChange)"
		if c.significant {
			verdict = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t%s\t%s\t%s\t%.2g\t%s\n", c.function, c.build, c.previous, c.commit,
			frames.FormatValue(c.before, unit), frames.FormatValue(c.after, unit), change, c.pValue, verdict)
	}
	return tw.Flush()
}

// changePointGate fails when a significant regression starts at the newest
// build of the answer: CI runs it after ingesting that build, and older
// changes were judged when their builds were new.
func changePointGate(f *data.Frame) error {
	var builds []string
	if f.Meta != nil {
		if b, ok := f.Meta.Custom.(map[string]any)["builds"].([]string); ok {
			builds = b
		}
	}
	if len(builds) == 0 {
		return nil
	}
	newest := builds[len(builds)-1]
	var found []string
	for _, c := range changePoints(f) {
		if !c.significant || c.build != newest || c.after <= c.before {
			continue
		}
		if c.change == nil {
			found = append(found, c.function+" new")
		} else {
			found = append(found, fmt.Sprintf("%s %+.1f%%", c.function, 100**c.change))
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.Sort(found)
	return regressionError{fmt.Errorf("build %s starts %d significant regression(s): %s", newest, len(found), strings.Join(found, ", "))}
}
