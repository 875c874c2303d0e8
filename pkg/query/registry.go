package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
)

// Need says whether a query type reads a selection of runs (head, base)
// or a list of builds.
type Need uint8

// The needs.
const (
	Unused Need = iota
	Optional
	Required
)

// Spec is a query type's row of the registry: what its model holds,
// how it is checked and answered. Parse, Execute, the memory limits,
// Render and the CLI's query and report commands read it; adding a query
// type is adding a row (docs/ARCHITECTURE.md).
type Spec struct {
	Type Type
	// Help says what the answer is, in a line.
	Help string
	// Head and Base are the run selections it reads (a Required one
	// needs builds); Builds whether it reads a list of builds.
	Head, Base, Builds Need
	// Fields are the model's options it reads besides app, profileType
	// and its selections (JSON names, as docs/QUERIES.md lists them).
	Fields []string
	// Tree: answered by the tree engine from the head (and base) runs.
	Tree bool
	// Flame: a tree answered with flame graphs (variants, focus, a
	// memory budget per node); a tree without is a functions table.
	Flame bool
	// ListsChangePoints: the answer carries change points
	// (Answer.ChangePoints), which the CLI prints and gates on.
	ListsChangePoints bool
	execute           func(e *Executor, ctx context.Context, m Model, r Range) (Answer, error)
}

// Answer is what an executor returns: the frames, and for types that
// list change points the rows themselves (newest first), the builds
// looked at (oldest first) and the Grafana unit of before and after.
type Answer struct {
	Frames       data.Frames
	ChangePoints []evolution.ChangePoint
	Builds       []string
	Unit         string
}

// treeFields are the options of every tree query: its variant, its size
// and the filters applied before the statistics (around.go).
var treeFields = []string{"inverted", "collapseSystem", "maxNodes", "keep", "drop", "hideFrames", "showFrom"}

// registry lists the query types in the order docs and errors name them.
// It is filled by init: its executors reach it through Lookup.
var registry []Spec

func init() {
	registry = []Spec{
		{Type: FlameGraph, Help: "the averaged flame graph of the head runs",
			Head: Required, Tree: true, Flame: true,
			Fields:  append(treeFields[:len(treeFields):len(treeFields)], "focus", "variants", "sandwich"),
			execute: (*Executor).tree},
		{Type: Diff, Help: "the differential flame graph of head against base, with per-node statistics",
			Head: Required, Base: Required, Tree: true, Flame: true,
			Fields:  append(treeFields[:len(treeFields):len(treeFields)], "normalize", "alpha", "focus", "variants", "sandwich", "only"),
			execute: (*Executor).tree},
		{Type: Functions, Help: "the functions table (self and total per function), compared when base runs are given",
			Head: Required, Base: Optional, Tree: true,
			Fields:  append(treeFields[:len(treeFields):len(treeFields)], "normalize", "alpha", "only"),
			execute: (*Executor).tree},
		{Type: Runs, Help: "one row per run and a summary comparing the runs' totals",
			Head: Required, Base: Optional,
			execute: (*Executor).runs},
		{Type: Evolution, Help: "the Performance Evolution Matrix over builds, with call edges, timelines and change points",
			Builds: Optional, Fields: []string{"threshold", "minShare", "minChange", "alpha"},
			execute: (*Executor).evolution},
		{Type: TimeSeries, Help: "a value per build (the total or a function's), against a baseline, for alerting",
			Builds: Optional, Fields: []string{"function", "baseline", "field", "minChange", "alpha"},
			execute: (*Executor).timeseries},
		{Type: ChangePoints, Help: "the change points of the total and of every function over builds",
			Builds: Optional, Fields: []string{"minShare", "minChange", "alpha"}, ListsChangePoints: true,
			execute: (*Executor).changepoints},
	}
}

// Types returns the registry, in order.
func Types() []Spec { return registry }

// Lookup returns the row of a query type.
func Lookup(t Type) (Spec, bool) {
	for _, s := range registry {
		if s.Type == t {
			return s, true
		}
	}
	return Spec{}, false
}

// Spec returns the row of m's type (the zero Spec for an unknown type,
// which Parse rejects).
func (m Model) Spec() Spec {
	s, _ := Lookup(m.QueryType)
	return s
}

// typeList names the types, "a, b or c" (sep ", " and last " or ") or
// "a, b, c".
func typeList(last string) string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = string(s.Type)
	}
	if last == "" {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}
