package query

import (
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Judge is how a diff is judged, the same for every output that says a
// verdict: the CLI's gate and its verdict, table, markdown and GitHub
// outputs, the culprits frame that the panel, the report and serve
// draw, the alert's culprit label and MCP's compare_builds. They all call
// Verdict (or verdictOf here), so they cannot disagree on one diff.
type Judge struct {
	// MinBaseShare is the threshold: the smallest regression that fails
	// the verdict, a share of the base total (of the share, with relative
	// normalisation). It is not changepoints' minChange, a relative change
	// of a build's mean.
	MinBaseShare float64
	// Modified is the head build's modified functions (Executor.Modified).
	Modified map[string]bool
	// Plan makes the verdict a look of a sequential CI loop (nil: none).
	Plan *stats.Plan
}

// NewJudge is the judge at the default threshold
// (verdict.DefaultMinBaseShare): every output but the CLI's
// --min-base-share uses it.
func NewJudge(modified map[string]bool) Judge {
	return Judge{MinBaseShare: verdict.DefaultMinBaseShare, Modified: modified}
}

// Verdict is the verdict of a diff filled in b, viewed with options o
// (Focus and Inverted are ignored: see verdict.Input).
func (j Judge) Verdict(b *tree.Builder, o tree.Options) (*verdict.Verdict, error) {
	return verdict.Of(b, j.input(o))
}

// verdictOf is Verdict from a diff tree already built as Verdict would
// build it (no focus, not inverted): one build less.
func (j Judge) verdictOf(t *tree.Tree) *verdict.Verdict {
	return verdict.FromTree(t, j.input(tree.Options{}))
}

func (j Judge) input(o tree.Options) verdict.Input {
	return verdict.Input{Options: o, MinBaseShare: j.MinBaseShare, Modified: j.Modified, Plan: j.Plan}
}
