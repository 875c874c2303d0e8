package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flamediff/flamediff/pkg/bisect"
	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/verdict"
	"github.com/flamediff/flamediff/pkg/web"
)

// writeReport writes --report: the diff of commit c's runs against those
// of the commit before it, each topped up to --max-runs (a step may have
// decided on one batch), as flamediff report draws one, with its culprits
// judged as bad's against good's were (--min-base-share) and the
// functions c modified marked (nil: unknown).
func (r *bisectRun) writeReport(before, c string, changed *changes.Changes) error {
	if err := r.runs(r.maxRuns, before, c); err != nil {
		return err
	}
	b, m, err := r.load(before, r.have(before), c, r.have(c), r.alpha)
	if err != nil {
		return err
	}
	modified := map[string]bool{}
	if changed != nil {
		for _, name := range changed.Modified {
			modified[name] = true
		}
	}
	v, err := query.Judge{MinBaseShare: *r.minBaseShare, Modified: modified}.Verdict(b, query.TreeOptions(b, m, r.rules))
	if err != nil {
		return err
	}
	runs := frames.Runs(commitRuns(c, v.Totals.Head), commitRuns(before, v.Totals.Base), r.unit)
	page, err := reportPage(&query.Tree{Builder: b, Model: m, Rules: r.rules, Unit: r.unit, Modified: modified}, v, runs)
	if err != nil {
		return err
	}
	page.Title = fmt.Sprintf("%s %s against %s", short(c), r.subject(c), short(before))
	f, err := os.Create(r.report) // #nosec G304 -- the user names the file to write
	if err != nil {
		return err
	}
	if err := web.WriteReport(f, page); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commitRuns are a commit's runs with their totals, for the run details.
func commitRuns(c string, totals []float64) []frames.Run {
	names := runNames(len(totals))
	runs := make([]frames.Run, len(totals))
	for i, t := range totals {
		runs[i] = frames.Run{Build: short(c), Run: names[i], Total: int64(t)}
	}
	return runs
}

// finish prints the answer and returns the exit code's error.
func (r *bisectRun) finish(out io.Writer, a *bisectAnswer) error {
	var err error
	switch r.output {
	case "json":
		err = json.NewEncoder(out).Encode(a)
	default:
		err = writeBisect(out, a, r.output == "markdown")
	}
	if err != nil {
		return err
	}
	switch {
	case a.Result == "none":
		return lookError{exitNoRegression, errors.New("no change between good and bad")}
	case a.Result == "undecided" && a.Why != "":
		return lookError{exitInconclusive, fmt.Errorf("could not decide: %s", a.Why)}
	case a.Result == "undecided":
		return lookError{exitInconclusive, errors.New("could not decide where every regression was made")}
	}
	return nil
}

// writeBisect prints the answer as a table or as a pull-request comment.
func writeBisect(out io.Writer, a *bisectAnswer, markdown bool) error {
	var sb strings.Builder
	switch {
	case a.First != "" && a.Improvement:
		fmt.Fprintf(&sb, "first improved commit: %s\n", a.First)
	case a.First != "":
		fmt.Fprintf(&sb, "first bad commit: %s\n", a.First)
	case a.Result == "none" && a.Improvement:
		sb.WriteString("no improvement between good and bad\n")
	case a.Result == "none":
		sb.WriteString("no regression between good and bad\n")
	default:
		sb.WriteString("could not decide which commit made the regression\n")
	}
	if markdown {
		sb.WriteString("\n### Flamediff bisect\n")
	}
	row := func(cells ...string) {
		if markdown {
			fmt.Fprintf(&sb, "| %s |\n", strings.Join(cells, " | "))
		} else {
			fmt.Fprintf(&sb, "  %s\n", strings.Join(cells, "  "))
		}
	}
	head := func(cols ...string) {
		if markdown {
			sb.WriteString("\n")
			row(cols...)
			fmt.Fprintf(&sb, "|%s\n", strings.Repeat("---|", len(cols)))
		}
	}
	if v := a.Regression; v != nil {
		sides := "Bad against good"
		if a.Improvement {
			sides = "Good against bad"
		}
		fmt.Fprintf(&sb, "\n%s: %s: %s\n", sides, v.Result, v.Why)
	}
	for _, f := range a.Found {
		name, delta := "the run totals", ""
		if c := f.Culprit; c != nil {
			name = c.Function
			delta = fmt.Sprintf(" (%s, %s of the base total, 95%% interval %s)", c.Kind, verdict.Percent(float64(c.Delta)),
				verdict.Interval(float64(c.DeltaLow), float64(c.DeltaHigh)))
		}
		fmt.Fprintf(&sb, "\n%s%s: ", bold(name, markdown), delta)
		switch f.Kind {
		case bisect.One:
			sb.WriteString("made by one commit.\n")
		case bisect.Split:
			sb.WriteString("made by two commits between them, each carrying part of it.\n")
		case Undone:
			fmt.Fprintf(&sb, "a regression bad does not carry: seen at %s against good, and undone by a later commit before bad.\n", short(f.Peak))
			if f.Why != "" {
				fmt.Fprintf(&sb, "  Could not decide %s.\n", f.Why)
			}
		default:
			fmt.Fprintf(&sb, "could not decide: %s; it was made by one of %d commits:\n", f.Why, len(f.Range))
			for _, c := range f.Range {
				fmt.Fprintf(&sb, "  %s\n", c)
			}
		}
		if f.After != "" {
			fmt.Fprintf(&sb, "  Searched after %s: its cost had risen and fallen back there before (undone, below).\n", short(f.After))
		}
		if f.Kind == Undone {
			writeRange(&sb, "Made by one of", f.Range)
			writeCommits(&sb, "Made by", name, f.Commits)
			writeRange(&sb, "Undone by one of", f.UndoneRange)
			writeCommits(&sb, "Undone by", name, f.Undone)
		} else {
			writeCommits(&sb, "", name, f.Commits)
		}
		if len(f.Beyond) > 0 {
			fmt.Fprintf(&sb, "\n  Warning: %d tested commits stand clearly past bad or before good (%s): this cost also changed and came back between good and bad (a change undone later); the search assumes one rise, so check the commits named against the steps.\n",
				len(f.Beyond), strings.Join(shorts(f.Beyond), ", "))
		}
		head("commit", "subject", "tested at", "decision", "runs", "share of the regression")
		if !markdown {
			sb.WriteString("\n  Steps:\n")
		}
		for _, s := range f.Steps {
			share := fmt.Sprintf("%.0f%% (%.0f%% .. %.0f%%)", 100*s.Step.Share, 100*s.Step.Low, 100*s.Step.High)
			if s.Outcome == bisect.Skipped {
				share = s.Skipped
			}
			row(short(s.Commit), s.Subject, fmt.Sprintf("%.0f%%", 100*s.At), s.Outcome, fmt.Sprint(s.Step.Runs), share)
		}
	}
	if len(a.Probes) > 0 {
		seen := 0
		for _, p := range a.Probes {
			seen += len(p.Regressions)
		}
		fmt.Fprintf(&sb, "\n%d commits probed for regressions undone before bad: %d seen.\n", len(a.Probes), seen)
	}
	fmt.Fprintf(&sb, "\n%d runs in all; a wrong commit under %v over the search.\n", a.Runs, a.Budget["alpha"])
	_, err := io.WriteString(out, sb.String())
	return err
}

func bold(s string, markdown bool) string {
	if markdown {
		return "**" + s + "**"
	}
	return s
}

// writeCommits lists commits found, each under its label (none: the
// commit alone), with its share of the regression and the functions it
// changed, the culprit's among them or not.
func writeCommits(sb *strings.Builder, label, name string, commits []bisectCommit) {
	for _, c := range commits {
		if label != "" {
			fmt.Fprintf(sb, "\n  %s:", label)
		}
		fmt.Fprintf(sb, "\n  commit %s\n  %s\n  Author: %s\n  Date:   %s\n", c.Hash, c.Subject, c.Author, c.Date)
		if s := c.Share; s != nil {
			fmt.Fprintf(sb, "  It stands at %.0f%% of the regression (%.0f%% .. %.0f%%) at %d runs.\n", 100*s.Share, 100*s.Low, 100*s.High, s.Runs)
		}
		if ch := c.Changed; ch != nil {
			fmt.Fprintf(sb, "  It changed %d functions, %d added, %d removed", len(ch.Modified), len(ch.Added), len(ch.Removed))
			if c.Matched {
				fmt.Fprintf(sb, ", %s among them", name)
			}
			sb.WriteString(".\n")
		}
	}
}

// writeRange lists the commits an undecided search left, under label.
func writeRange(sb *strings.Builder, label string, commits []string) {
	if len(commits) == 0 {
		return
	}
	fmt.Fprintf(sb, "\n  %s %d commits:\n", label, len(commits))
	for _, c := range commits {
		fmt.Fprintf(sb, "  %s\n", c)
	}
}
