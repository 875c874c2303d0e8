package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Exit codes of a sequential look (--max-runs), besides 0 for PASS and 3
// for FAIL (docs/CLI.md).
const (
	exitContinue     = 4
	exitInconclusive = 5
)

// lookError ends a sequential look that is neither PASS nor FAIL with its
// exit code.
type lookError struct {
	code int
	error
}

// planFlags are the flags of a sequential CI loop.
type planFlags struct {
	maxRuns, batch *int
	beta           *float64
	deterministic  *bool
}

func addPlanFlags(fs *flag.FlagSet) *planFlags {
	return &planFlags{
		maxRuns: fs.Int("max-runs", 0, "sequential mode for a CI loop that adds runs in batches: the most runs a side it adds; each call is a look that exits 0 (PASS), 3 (FAIL), 4 (CONTINUE: add runs) or 5 (INCONCLUSIVE at the maximum)"),
		batch:   fs.Int("batch", 5, "sequential mode: the runs a side the loop adds between looks"),
		beta:    fs.Float64("beta", 0.05, "sequential mode: the false-PASS rate at a regression of --min-base-share or more, over every look"),
		deterministic: fs.Bool("deterministic", false,
			"sequential mode: costs do not vary between runs (instruction counts), so one run a side decides"),
	}
}

// plan is the sequential plan the flags ask for (nil without --max-runs).
func (f *planFlags) plan(alpha, minBaseShare float64, normalize string) (*stats.Plan, error) {
	if *f.maxRuns == 0 {
		return nil, nil
	}
	if normalize == "relative" {
		return nil, usageError{errors.New("--max-runs tests the run totals: it needs --normalize absolute")}
	}
	p := &stats.Plan{Batch: *f.batch, MaxRuns: *f.maxRuns, Alpha: alpha, Beta: *f.beta, MinBaseShare: minBaseShare, Deterministic: *f.deterministic}
	if err := p.Check(); err != nil {
		return nil, usageError{err}
	}
	return p, nil
}

// lookGate is the error a sequential look ends with: nil for PASS, a
// regressionError for FAIL (3), a lookError for CONTINUE (4) and
// INCONCLUSIVE (5).
func lookGate(v *verdict.Verdict) error {
	why := strings.TrimSuffix(v.Why, ".")
	switch v.Result {
	case verdict.Pass:
		return nil
	case verdict.Fail:
		return gate(v)
	case verdict.Continue:
		return lookError{exitContinue, fmt.Errorf("CONTINUE: %s", why)}
	}
	return lookError{exitInconclusive, fmt.Errorf("INCONCLUSIVE: %s", why)}
}

// lookLine says where a sequential look stands ("" outside one).
func lookLine(v *verdict.Verdict) string {
	s := v.Sequential
	if s == nil {
		return ""
	}
	out := fmt.Sprintf("Sequential look %d of %d at %d runs a side (batches of %d up to %d; false FAIL under %g, false PASS under %g over all looks)",
		s.Look, s.Looks, s.Runs, s.Batch, s.MaxRuns, float64(s.PlanAlpha), float64(s.PlanBeta))
	if s.More > 0 {
		out += fmt.Sprintf(": add %d runs a side", s.More)
	}
	return out + "."
}
