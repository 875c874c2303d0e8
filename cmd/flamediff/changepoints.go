package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/query"
)

// regressionError fails a gate: a significant regression was found (exit
// code 3, apart from usage errors' 2 and failures' 1).
type regressionError struct{ error }

// changePointsOutput prints a changepoints answer (a table, or JSON) and,
// with gate, fails on a regression starting at the newest build.
func changePointsOutput(out io.Writer, a query.Answer, output string, gate bool) error {
	var err error
	switch output {
	case "json":
		err = writeJSON(out, a.Frames)
	case "table":
		err = writeChangePoints(out, a.ChangePoints, a.Unit)
	default:
		return usageError{fmt.Errorf("--output must be json or table for changepoints, not %q", output)}
	}
	if err == nil && gate {
		err = changePointGate(a.ChangePoints, a.Builds)
	}
	return err
}

// writeChangePoints prints a changepoints answer as a table, newest first.
// unit is the Grafana unit of before and after.
func writeChangePoints(out io.Writer, cps []evolution.ChangePoint, unit string) error {
	if len(cps) == 0 {
		_, err := fmt.Fprintln(out, "no change points")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FUNCTION\tBUILD\tSINCE\tCOMMIT\tBEFORE\tAFTER\tCHANGE\tP\tSIGNIFICANT")
	for _, c := range cps {
		verdict := "no (under minChange)"
		switch {
		case c.Significant:
			verdict = "yes"
		case c.Moved:
			verdict = "no (work that moved)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t%s\t%s\t%s\t%.2g\t%s\n", c.Function, c.Build, c.Previous, c.Commit,
			frames.FormatValue(c.Before, unit), frames.FormatValue(c.After, unit), changeText(c.Change), c.PValue, verdict)
	}
	return tw.Flush()
}

// changePointGate fails when a significant regression starts at the newest
// build of the answer (builds, oldest first): CI runs it after ingesting
// that build, and older changes were judged when their builds were new.
func changePointGate(cps []evolution.ChangePoint, builds []string) error {
	if len(builds) == 0 {
		return nil
	}
	newest := builds[len(builds)-1]
	var found []string
	for _, c := range cps {
		if c.Significant && c.Build == newest && c.After > c.Before {
			found = append(found, c.Function+" "+changeText(c.Change))
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.Sort(found)
	return regressionError{fmt.Errorf("build %s starts %d significant regression(s): %s", newest, len(found), strings.Join(found, ", "))}
}

// changeText is a relative change in percent, or "new" for a rise from 0
// (the function appears: no finite change).
func changeText(change float64) string {
	if math.IsInf(change, 0) || math.IsNaN(change) {
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", 100*change)
}
