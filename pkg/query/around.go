package query

import (
	"errors"
	"fmt"
	"slices"

	"github.com/flamediff/flamediff/pkg/tree"
)

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

// validateAround compiles the filters (a bad one is an error naming its
// field and the reason) and checks the options around a culprit
// (sandwich, keep, drop, hideFrames, showFrom, only) against the query
// type.
func (m *Model) validateAround() error {
	f, err := tree.NewFilter(tree.FilterSpec{Keep: m.Keep, Drop: m.Drop, Hide: m.Hide, ShowFrom: m.ShowFrom})
	if err != nil {
		return err
	}
	m.filter = f
	if len(m.Sandwich) > maxNameBytes {
		return fmt.Errorf("sandwich: name longer than %d bytes", maxNameBytes)
	}
	switch m.Only {
	case "", OnlyNew, OnlyRemoved:
	default:
		return fmt.Errorf("only must be %s or %s, not %q", OnlyNew, OnlyRemoved, m.Only)
	}
	fields := m.Spec().Fields
	for _, f := range []struct{ name, value string }{{"sandwich", m.Sandwich}, {"only", m.Only}} {
		if f.value != "" && !slices.Contains(fields, f.name) {
			return fmt.Errorf("%s is not an option of %s queries", f.name, m.QueryType)
		}
	}
	if m.Only != "" && !m.IsDiff() {
		return errors.New("only needs a comparison (base builds)")
	}
	return nil
}

// aroundOptions sets the engine options of the filters and only.
func (m Model) aroundOptions(o *tree.Options) {
	o.Filter = m.filter
	switch m.Only {
	case OnlyNew:
		o.Only = tree.OnlyNew
	case OnlyRemoved:
		o.Only = tree.OnlyRemoved
	}
}

// sandwichParts lists the trees a flame graph answer has: the whole one,
// or the sandwich's callers and callees.
func (m Model) sandwichParts() []tree.Sandwich {
	if m.Sandwich == "" {
		return []tree.Sandwich{{}}
	}
	return []tree.Sandwich{{Function: m.Sandwich, Callers: true}, {Function: m.Sandwich}}
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
