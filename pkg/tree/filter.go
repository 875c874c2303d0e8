package tree

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxFilterBytes bounds the length of a filter's regular expression: RE2
// matches in linear time, but a long expression still compiles into a
// large program run on every frame name.
const MaxFilterBytes = 1024

// FilterSpec holds the regular expressions (Go RE2, matched anywhere in a
// frame's name unless anchored) of a Filter; an empty one is not applied.
// They are pprof's flags under names that cannot be taken for Options'
// Focus (a drill-down path); a query names Hide hideFrames:
//
//	Keep     -focus      keep only the stacks through a matching frame
//	Drop     -ignore     drop the stacks through a matching frame
//	Hide     -hide       remove the matching frames from every stack
//	ShowFrom -show_from  cut every stack above its first (root-most) matching
//	                     frame; drop the stacks without one
//
// Unlike pprof, which also tries source file and mapping names, they match
// the frame name only.
type FilterSpec struct {
	Keep, Drop, Hide, ShowFrom string
}

// Filter is a compiled FilterSpec. It selects and edits the stacks before
// any tree, function table or statistic is computed from them, as pprof
// does before it reports: Keep and Drop judge a stack by its frames as
// stored, then Hide removes frames, then ShowFrom cuts what is left. A
// stack left with no frame is dropped.
type Filter struct {
	spec                       FilterSpec
	keep, drop, hide, showFrom *regexp.Regexp
}

// FilterError is a FilterSpec expression that does not compile; Field is
// the spec's field as a query names it (keep, drop, hideFrames, showFrom:
// a query's "hide" is Grafana's own, which hides a query).
type FilterError struct {
	Field, Reason string
}

func (e *FilterError) Error() string { return e.Field + ": " + e.Reason }

// NewFilter compiles spec; it returns nil (no filter) when every
// expression is empty, and a *FilterError for the first bad one.
func NewFilter(spec FilterSpec) (*Filter, error) {
	f := &Filter{spec: spec}
	any := false
	for _, e := range []struct {
		field, expr string
		re          **regexp.Regexp
	}{{"keep", spec.Keep, &f.keep}, {"drop", spec.Drop, &f.drop}, {"hideFrames", spec.Hide, &f.hide}, {"showFrom", spec.ShowFrom, &f.showFrom}} {
		if e.expr == "" {
			continue
		}
		if len(e.expr) > MaxFilterBytes {
			return nil, &FilterError{e.field, fmt.Sprintf("regular expression of %d bytes, more than %d", len(e.expr), MaxFilterBytes)}
		}
		re, err := regexp.Compile(e.expr)
		if err != nil {
			return nil, &FilterError{e.field, strings.TrimPrefix(err.Error(), "error parsing regexp: ")}
		}
		*e.re, any = re, true
	}
	if !any {
		return nil, nil
	}
	return f, nil
}

// Spec is the expressions f was compiled from.
func (f *Filter) Spec() FilterSpec { return f.spec }

// String lists the expressions set, as pprof-like flags of the spec's
// field names: `keep="^net/http\." hideFrames="^runtime\."`.
func (f *Filter) String() string {
	var parts []string
	for _, e := range [][2]string{{"keep", f.spec.Keep}, {"drop", f.spec.Drop}, {"hideFrames", f.spec.Hide}, {"showFrom", f.spec.ShowFrom}} {
		if e[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", e[0], e[1]))
		}
	}
	return strings.Join(parts, " ")
}

// frameMatches says, for each frame id of fr, whether re matches its name
// (nil when re is nil); count is the number of frames it matches.
func frameMatches(fr *Frames, re *regexp.Regexp) (match []bool, count int) {
	if re == nil {
		return nil, 0
	}
	match = make([]bool, fr.Len())
	for id := range match {
		name := fr.Name(uint32(id)) // #nosec G115 -- frame ids are uint32 by design
		if re.MatchString(name) {
			match[id] = true
			count++
		}
	}
	return match, count
}

// matchesAt says whether frame f is marked in match (nil: none is).
func matchesAt(match []bool, f uint32) bool { return int(f) < len(match) && match[f] }

// compiledFilter is a Filter applied to the frames of one view: what each
// frame id matches, and how many frames each expression matched (for the
// notice of an empty answer).
type compiledFilter struct {
	f                          *Filter
	keep, drop, hide, showFrom []bool
	counts                     [4]int
}

func (f *Filter) forFrames(fr *Frames) *compiledFilter {
	c := &compiledFilter{f: f}
	c.keep, c.counts[0] = frameMatches(fr, f.keep)
	c.drop, c.counts[1] = frameMatches(fr, f.drop)
	c.hide, c.counts[2] = frameMatches(fr, f.hide)
	c.showFrom, c.counts[3] = frameMatches(fr, f.showFrom)
	return c
}

// edits says whether the filter changes the frames of stacks (not only
// which stacks are kept).
func (c *compiledFilter) edits() bool { return c.hide != nil || c.showFrom != nil }

// keeps says whether Keep and Drop keep a stack.
func (c *compiledFilter) keeps(stack []uint32) bool {
	kept := c.keep == nil
	for _, f := range stack {
		if matchesAt(c.drop, f) {
			return false
		}
		kept = kept || matchesAt(c.keep, f)
	}
	return kept
}

// appendEdited appends stack's frames as Hide and ShowFrom leave them.
func (c *compiledFilter) appendEdited(dst, stack []uint32) []uint32 {
	start := len(dst)
	for _, f := range stack {
		if !matchesAt(c.hide, f) {
			dst = append(dst, f)
		}
	}
	if c.showFrom == nil {
		return dst
	}
	for i, f := range dst[start:] {
		if matchesAt(c.showFrom, f) {
			return append(dst[:start], dst[start+i:]...)
		}
	}
	return dst[:start]
}

// emptyNotice says why the filter left no stack of a view that had some.
func (c *compiledFilter) emptyNotice() string {
	switch {
	case c.keep != nil && c.counts[0] == 0:
		return fmt.Sprintf("no stack is left after the filters: keep %q matches no frame", c.f.spec.Keep)
	case c.showFrom != nil && c.counts[3] == 0:
		return fmt.Sprintf("no stack is left after the filters: showFrom %q matches no frame", c.f.spec.ShowFrom)
	}
	return "no stack is left after the filters " + c.f.String()
}
