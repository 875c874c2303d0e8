package storage

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// Export reads back what is stored for one run of a build, or for the whole
// build when run is "" (its runs' values summed), as a profile with one
// sample per distinct stack: the summed value and Time -1. Samples are
// ordered by when their stack was first seen (then by stack hash), which
// for a single run is the order of the ingested input. The runs must share
// sample type and unit. Start is the earliest run start; Duration is the
// run's (for a build, the sum of its runs').
func (s *Store) Export(ctx context.Context, app, build, run string) (*profile.Profile, error) {
	var names []string
	if run != "" {
		names = []string{run}
	}
	runs, err := s.Runs(ctx, app, []string{build}, names)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	p := &profile.Profile{SampleType: runs[0].SampleType, Unit: runs[0].Unit, Start: runs[0].Start}
	for _, r := range runs {
		if r.SampleType != p.SampleType || r.Unit != p.Unit {
			return nil, fmt.Errorf("export %s/%s: runs mix sample types %s/%s and %s/%s",
				app, build, p.SampleType, p.Unit, r.SampleType, r.Unit)
		}
		p.Start = minTime(p.Start, r.Start)
		p.Duration += r.Duration
	}

	type stackValue struct {
		value int64
		seen  uint64
	}
	values := map[uint64]stackValue{}
	err = s.StackValues(ctx, [][]Run{runs}, func(_ int, h uint64, v int64, seen uint64) error {
		values[h] = stackValue{v, seen}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	type sample struct {
		hash  uint64
		seen  uint64
		stack []uint32
		value int64
	}
	samples := make([]sample, 0, len(values))
	err = s.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		v, ok := values[h]
		if !ok {
			return nil
		}
		stack := make([]uint32, len(frames))
		for i, f := range frames {
			stack[i] = p.Intern(profile.Frame{Name: f.Name, Module: f.Module, File: f.File, Line: f.Line, Inlined: f.Inlined})
		}
		samples = append(samples, sample{h, v.seen, stack, v.value})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(samples) != len(values) {
		return nil, fmt.Errorf("export %s/%s: %d of %d stacks have no text in the stacks table",
			app, build, len(values)-len(samples), len(values))
	}
	sort.Slice(samples, func(i, j int) bool {
		if samples[i].seen != samples[j].seen {
			return samples[i].seen < samples[j].seen
		}
		return samples[i].hash < samples[j].hash
	})
	p.Samples = make([]profile.Sample, len(samples))
	for i, s := range samples {
		p.Samples[i] = profile.Sample{Stack: s.stack, Value: s.value, Time: -1}
	}
	return p, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
