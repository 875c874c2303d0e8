package query

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/pkg/tree"
)

// Around holds the options that look around a culprit (docs/QUERIES.md):
// the callers and callees of a function, pprof's filters applied before
// the statistics, and the stacks new in head or gone from it. Model embeds
// it, so its fields are the model's.
type Around struct {
	// Sandwich names a function: flamegraph and diff queries answer its
	// callers tree and its callees tree instead of the whole tree.
	Sandwich string `json:"sandwich"`
	// Keep, Drop, Hide and ShowFrom are Go regular expressions on frame
	// names: pprof's -focus, -ignore, -hide and -show_from (tree.FilterSpec).
	Keep     string `json:"keep"`
	Drop     string `json:"drop"`
	Hide     string `json:"hide"`
	ShowFrom string `json:"showFrom"`
	// Only is "new" (the stacks new in head) or "removed" (the stacks gone
	// from it); "" keeps every stack.
	Only string `json:"only"`

	filter *tree.Filter // Keep..ShowFrom compiled by validate
}

// The values of Only.
const (
	OnlyNew     = "new"
	OnlyRemoved = "removed"
)

// The parts a sandwich answer has, in the order of its frames.
const (
	SandwichCallers = "callers"
	SandwichCallees = "callees"
)

// ErrNoFunction means a sandwich function is in no stack of the answer.
var ErrNoFunction = tree.ErrNoFunction

// validate compiles the filters (a bad one is an error naming its field
// and the reason) and checks the rest against the query type.
func (a *Around) validate(m *Model) error {
	f, err := tree.NewFilter(tree.FilterSpec{Keep: a.Keep, Drop: a.Drop, Hide: a.Hide, ShowFrom: a.ShowFrom})
	if err != nil {
		return err
	}
	a.filter = f
	if len(a.Sandwich) > maxNameBytes {
		return fmt.Errorf("sandwich: name longer than %d bytes", maxNameBytes)
	}
	switch a.Only {
	case "", OnlyNew, OnlyRemoved:
	default:
		return fmt.Errorf("only must be %s or %s, not %q", OnlyNew, OnlyRemoved, a.Only)
	}
	switch {
	case a.Only != "" && !m.IsDiff():
		return errors.New("only needs a comparison (base builds)")
	case a.Sandwich != "" && m.QueryType != FlameGraph && m.QueryType != Diff:
		return fmt.Errorf("sandwich is an option of flamegraph and diff queries, not %s", m.QueryType)
	}
	return nil
}

// options sets the engine options of a.
func (a *Around) options(o *tree.Options) {
	o.Filter = a.filter
	switch a.Only {
	case OnlyNew:
		o.Only = tree.OnlyNew
	case OnlyRemoved:
		o.Only = tree.OnlyRemoved
	}
}

// sandwichParts lists the trees a flame graph answer has: the whole one,
// or the sandwich's callers and callees.
func (a *Around) sandwichParts() []tree.Sandwich {
	if a.Sandwich == "" {
		return []tree.Sandwich{{}}
	}
	return []tree.Sandwich{{Function: a.Sandwich, Callers: true}, {Function: a.Sandwich}}
}

// sandwichPart names a tree of sandwichParts ("" for the whole tree).
func sandwichPart(s tree.Sandwich) string {
	switch {
	case s.Function == "":
		return ""
	case s.Callers:
		return SandwichCallers
	}
	return SandwichCallees
}
