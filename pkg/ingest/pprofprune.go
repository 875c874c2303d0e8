package ingest

import (
	"regexp"
	"strings"

	pprof "github.com/google/pprof/profile"
)

// pprofPruner applies a profile's drop_frames and keep_frames as pprof's
// RemoveUninteresting and Prune do (github.com/google/pprof/profile's
// prune.go), a sample at a time: a location whose innermost matching line
// is its last (outermost) is dropped with what it called, one matching
// in an inner line keeps the lines past it; the frames nearest the root
// are kept until the first one no rule touches.
type pprofPruner struct {
	drop, beneath map[*pprof.Location]bool
}

// newPprofPruner decides each location of src; nil when src drops nothing.
func newPprofPruner(src *pprof.Profile) (*pprofPruner, error) {
	if src.DropFrames == "" {
		return nil, nil
	}
	drop, err := regexp.Compile("^(" + src.DropFrames + ")$")
	if err != nil {
		return nil, err
	}
	var keep *regexp.Regexp
	if src.KeepFrames != "" {
		if keep, err = regexp.Compile("^(" + src.KeepFrames + ")$"); err != nil {
			return nil, err
		}
	}
	decided := map[string]bool{}
	dropped := func(name string) bool {
		d, ok := decided[name]
		if !ok {
			short := pprofShortName(name)
			d = drop.MatchString(short) && (keep == nil || !keep.MatchString(short))
			decided[name] = d
		}
		return d
	}
	pr := &pprofPruner{drop: map[*pprof.Location]bool{}, beneath: map[*pprof.Location]bool{}}
	for _, loc := range src.Location {
		i := len(loc.Line) - 1
		for ; i >= 0; i-- {
			if fn := loc.Line[i].Function; fn != nil && fn.Name != "" && dropped(fn.Name) {
				break
			}
		}
		if i < 0 {
			continue
		}
		pr.beneath[loc] = true
		if i == len(loc.Line)-1 {
			pr.drop[loc] = true
		} else {
			loc.Line = loc.Line[i+1:]
		}
	}
	return pr, nil
}

// stack is a sample's locations (leaf first) once pruned.
func (pr *pprofPruner) stack(locs []*pprof.Location) []*pprof.Location {
	if pr == nil {
		return locs
	}
	user := false
	for i := len(locs) - 1; i >= 0; i-- {
		l := locs[i]
		switch {
		case !pr.drop[l] && !pr.beneath[l]:
			user = true
		case !user:
		case pr.drop[l]:
			return locs[i+1:]
		default:
			return locs[i:]
		}
	}
	return locs
}

// pprofShortName is a function name as pprof's rules match it: without
// a leading '.' (PPC's ELF v1) and from its first '(' on, except in
// "(anonymous namespace)" and "operator()".
func pprofShortName(name string) string {
	name = strings.TrimPrefix(name, ".")
	for i := 0; i < len(name); i++ {
		switch rest := name[i:]; {
		case strings.HasPrefix(rest, "(anonymous namespace)"):
			i += len("(anonymous namespace)") - 1
		case strings.HasPrefix(rest, "operator()"):
			i += len("operator()") - 1
		case name[i] == '(':
			return name[:i]
		}
	}
	return name
}
