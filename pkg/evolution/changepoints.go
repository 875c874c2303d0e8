package evolution

import "github.com/flamediff/flamediff/pkg/stats"

// TotalFunction names the whole profile's series among change points.
const TotalFunction = "total"

// ChangePoint is a change point of the total or of a function over
// builds (docs/CHANGEPOINTS.md): the matrix's cues, and the rows of a
// changepoints answer.
type ChangePoint struct {
	// Function is a frame name, or TotalFunction.
	Function string
	// Build is the first build after the change, Previous the one before
	// it; Commit is Build's commit.
	Build, Previous, Commit string
	stats.ChangePoint
	// Moved says that the function appeared (or vanished) with work that
	// moved: the total did not change by its step (a function split off,
	// a wrapper, a change of inlining, a rename). Such a change is not
	// Significant: the cost changes are the total's and other functions'.
	Moved bool
}
