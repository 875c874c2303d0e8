// Package evolution computes the Performance Evolution Matrix (Alcocer,
// Bergel, Valente: "Performance Evolution Matrix: Visualizing Performance
// Variations Along Software Versions", VISSOFT 2019) from profiles of
// successive builds: a package / class / method hierarchy derived from frame
// names (Split), each component's time per build and its change against the
// previous build, the count of modified methods from the build's source
// changes, call edges added and removed, and the execution timeline.
//
// It works on plain Go values; frames.go turns its rows into Grafana data
// frames. See docs/EVOLUTION_PANEL.md.
package evolution

import (
	"fmt"
	"math"
	"time"

	"github.com/flamediff/flamediff/pkg/changes"
)

// Build is one build's input. Values are per run (the sum over the build's
// selected runs divided by the number of runs), in the profile's unit.
// AddStack and AddTimed fill Total, Functions, Edges and Timeline from
// stacks; they may also be filled directly.
type Build struct {
	Name string
	// Time orders builds; builds passed to Analyze must be in time order
	// (a zero Time is not checked).
	Time time.Time
	// Total is the build's total time per run (the root of its flame graph).
	Total float64
	// Functions maps a frame name to its inclusive time per run: the value
	// of every stack that contains it, counted once per stack even when the
	// function recurses.
	Functions map[string]float64
	// Changes are the source changes that produced this build.
	Changes changes.Changes
	// Edges holds the caller→callee pairs seen in the build's stacks.
	Edges map[Edge]struct{}
	// Timeline splits each run into time buckets (index = bucket, earliest
	// first); optional.
	Timeline []TimeBucket
	// Runs maps a frame name to its inclusive time in each of the build's
	// runs (every slice as long as the build has runs); optional. A cell
	// whose build and previous build both have two runs or more is tested
	// (Row.PValue) on these values.
	Runs map[string][]float64
}

// Edge is a call from Caller to Callee (adjacent frames of a stack).
type Edge struct{ Caller, Callee string }

// TimeBucket is one slice of a run's execution: its total and the inclusive
// time per function within it, per run.
type TimeBucket struct {
	Total     float64
	Functions map[string]float64
}

// AddStack adds one stack (root first) with its per-run value to Total,
// Functions and Edges.
func (b *Build) AddStack(stack []string, value float64) {
	b.Total += value
	if b.Functions == nil {
		b.Functions = map[string]float64{}
	}
	addInclusive(b.Functions, stack, value)
	if b.Edges == nil {
		b.Edges = map[Edge]struct{}{}
	}
	for i := 1; i < len(stack); i++ {
		b.Edges[Edge{stack[i-1], stack[i]}] = struct{}{}
	}
}

// AddTimed adds the part of a stack's per-run value that fell into time
// bucket bucket (0-based) to the Timeline, growing it as needed. A negative
// bucket is ignored.
func (b *Build) AddTimed(bucket int, stack []string, value float64) {
	if bucket < 0 {
		return
	}
	for len(b.Timeline) <= bucket {
		b.Timeline = append(b.Timeline, TimeBucket{Functions: map[string]float64{}})
	}
	tf := &b.Timeline[bucket]
	tf.Total += value
	addInclusive(tf.Functions, stack, value)
}

// addInclusive adds value once to every distinct function of stack.
func addInclusive(m map[string]float64, stack []string, value float64) {
	for i, f := range stack {
		if !containsBefore(stack, i, f) {
			m[f] += value
		}
	}
}

// containsBefore reports whether f occurs in stack[:i]; stacks are short,
// so a scan beats allocating a set per stack.
func containsBefore(stack []string, i int, f string) bool {
	for _, g := range stack[:i] {
		if g == f {
			return true
		}
	}
	return false
}

// validate checks one build; Analyze checks names and order across builds.
func (b *Build) validate() error {
	if b.Name == "" {
		return fmt.Errorf("evolution: build with an empty name")
	}
	if !validValue(b.Total) {
		return fmt.Errorf("evolution: build %q: total %v is not a finite non-negative number", b.Name, b.Total)
	}
	for f, v := range b.Functions {
		if !validValue(v) {
			return fmt.Errorf("evolution: build %q: function %q has time %v", b.Name, f, v)
		}
	}
	runs := -1
	for f, vs := range b.Runs {
		if runs >= 0 && len(vs) != runs {
			return fmt.Errorf("evolution: build %q: function %q has %d run values, another %d", b.Name, f, len(vs), runs)
		}
		runs = len(vs)
		for _, v := range vs {
			if !validValue(v) {
				return fmt.Errorf("evolution: build %q: function %q has run time %v", b.Name, f, v)
			}
		}
	}
	for i, tf := range b.Timeline {
		if !validValue(tf.Total) {
			return fmt.Errorf("evolution: build %q: time frame %d has total %v", b.Name, i, tf.Total)
		}
		for f, v := range tf.Functions {
			if !validValue(v) {
				return fmt.Errorf("evolution: build %q: time frame %d: function %q has time %v", b.Name, i, f, v)
			}
		}
	}
	return b.Changes.Validate()
}

func validValue(v float64) bool {
	return v >= 0 && !math.IsInf(v, 1) // NaN fails v >= 0
}
