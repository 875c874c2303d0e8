package export

import (
	"fmt"
	"io"
	"math"

	pprof "github.com/google/pprof/profile"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Pprof writes p as a gzipped pprof protobuf: one sample per distinct
// stack, one function per frame (with its file and first line), one
// location per frame and the frames
// inlined into it (profile.Frame.Inlined: pprof's -top marks them
// "(inline)"), one mapping per module,
// and p's sample type, unit, start and duration. A build's runs summed
// (storage's Export) give what `go tool pprof -proto` makes of the runs'
// files.
func Pprof(w io.Writer, p *profile.Profile) error {
	return fromProfile(p).pprof().Write(w)
}

// PprofTree writes the stacks of t, a query's answer, as a gzipped pprof
// protobuf of sampleType and unit. pprof's values are integers: each
// node's self value per run times the head's run count, rounded, which
// is the sum over the head's runs. A diff is one profile in the form `go
// tool pprof -proto -diff_base=BASE HEAD` writes: the base's samples
// negated and labelled pprof::base=true, base values scaled to the
// head's run count too (the builds' sums when they have as many runs),
// so that pprof shows the change of the per-run average that Flamediff
// shows.
func PprofTree(w io.Writer, t *tree.Tree, sampleType, unit string) error {
	return fromTree(t, sampleType, unit, float64(t.Runs[tree.Head])).pprof().Write(w)
}

func (s *stacks) pprof() *pprof.Profile {
	p := &pprof.Profile{SampleType: []*pprof.ValueType{{Type: s.sampleType, Unit: s.unit}}, DefaultSampleType: s.sampleType}
	if s.profile != nil {
		if !s.profile.Start.IsZero() {
			p.TimeNanos = s.profile.Start.UnixNano()
		}
		p.DurationNanos = s.profile.Duration.Nanoseconds()
	}
	mappings := map[string]*pprof.Mapping{}
	functions, files := make([]*pprof.Function, len(s.frames)), s.files()
	for i, f := range s.frames {
		functions[i] = &pprof.Function{ID: uint64(i + 1), Name: f.Name, SystemName: f.Name, Filename: files[i], StartLine: f.Line} // #nosec G115 -- an index plus one
		p.Function = append(p.Function, functions[i])
	}
	// A location per frame and the frames inlined into it (Inlined: its
	// lines, innermost first, as pprof marks inlining), by those frames.
	single, locations := make([]*pprof.Location, len(s.frames)), map[string]*pprof.Location{}
	location := func(frames []uint32) *pprof.Location {
		var key string
		if len(frames) == 1 && single[frames[0]] != nil {
			return single[frames[0]]
		} else if len(frames) > 1 {
			key = fmt.Sprint(frames)
			if loc, ok := locations[key]; ok {
				return loc
			}
		}
		loc := &pprof.Location{ID: uint64(len(p.Location) + 1)} // #nosec G115 -- a count plus one
		for i := len(frames) - 1; i >= 0; i-- {
			loc.Line = append(loc.Line, pprof.Line{Function: functions[frames[i]], Line: s.frames[frames[i]].Line})
		}
		if module := s.frames[frames[0]].Module; module != "" {
			m, ok := mappings[module]
			if !ok {
				m = &pprof.Mapping{ID: uint64(len(p.Mapping) + 1), File: module} // #nosec G115 -- a count plus one
				mappings[module] = m
				p.Mapping = append(p.Mapping, m)
			}
			loc.Mapping = m
		}
		if len(frames) == 1 {
			single[frames[0]] = loc
		} else {
			locations[key] = loc
		}
		p.Location = append(p.Location, loc)
		return loc
	}
	add := func(stack []uint32, v float64, base bool) {
		n := int64(math.Round(v))
		if n == 0 {
			return
		}
		smp := &pprof.Sample{Value: []int64{n}}
		for end := len(stack); end > 0; { // pprof lists the leaf first
			start := end - 1
			for start > 0 && s.frames[stack[start]].Inlined {
				start--
			}
			smp.Location = append(smp.Location, location(stack[start:end]))
			end = start
		}
		if base {
			smp.Value[0] = -n
			smp.Label = map[string][]string{"pprof::base": {"true"}}
		}
		p.Sample = append(p.Sample, smp)
	}
	for _, r := range s.rows {
		add(r.stack, r.head, false)
		if s.diff {
			add(r.stack, r.base, true)
		}
	}
	return p
}
