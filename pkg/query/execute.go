package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// ErrMismatch means the selected runs cannot be combined (different sample
// types or units).
var ErrMismatch = errors.New("runs cannot be combined")

// Executor answers queries from the runs stored in ClickHouse. Aggregation
// happens in the database (one GROUP BY per side, stack texts fetched once
// per distinct stack); the engine then builds the tree. It is safe for
// concurrent use.
type Executor struct {
	Store *storage.Store
	// Rules classify system frames for collapseSystem (nil: nothing is
	// system code).
	Rules *sysframes.Rules
}

// Range is the dashboard's time range; builds outside it are left out of
// evolution and timeseries queries that do not name their builds. An
// empty range (To not after From, as the zero Range) keeps every build:
// callers without a time picker, such as the CLI, send none.
type Range struct{ From, To time.Time }

func (r Range) contains(t time.Time) bool {
	if !r.To.After(r.From) {
		return true
	}
	return !t.Before(r.From) && !t.After(r.To)
}

// Execute runs a parsed query.
func (e *Executor) Execute(ctx context.Context, m Model, r Range) (data.Frames, error) {
	switch m.QueryType {
	case FlameGraph, Diff, Functions:
		return e.tree(ctx, m)
	case Runs:
		return e.runs(ctx, m)
	case Evolution:
		return e.evolution(ctx, m, r)
	case TimeSeries:
		return e.timeseries(ctx, m, r)
	}
	return nil, fmt.Errorf("unknown queryType %q", m.QueryType)
}

// sides reads the head runs and, for a comparison, the base runs.
func (e *Executor) sides(ctx context.Context, m Model) (head, base []storage.Run, err error) {
	if head, err = e.selectRuns(ctx, m, m.Head); err != nil {
		return nil, nil, fmt.Errorf("head: %w", err)
	}
	if m.IsDiff() {
		if base, err = e.selectRuns(ctx, m, m.Base); err != nil {
			return nil, nil, fmt.Errorf("base: %w", err)
		}
	}
	return head, base, nil
}

// selectRuns lists the runs of a selection of the query's profile type.
func (e *Executor) selectRuns(ctx context.Context, m Model, s Selection) ([]storage.Run, error) {
	runs, err := e.Store.Runs(ctx, m.App, s.Builds, s.Runs)
	if err != nil || m.ProfileType == "" {
		return runs, err
	}
	kept := runs[:0]
	for _, r := range runs {
		if r.SampleType == m.ProfileType {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%w: none has profile type %q", storage.ErrNoRuns, m.ProfileType)
	}
	return kept, nil
}

// unitOf returns the unit shared by every run.
func unitOf(groups ...[]storage.Run) (string, error) {
	var first *storage.Run
	for _, g := range groups {
		for i := range g {
			r := &g[i]
			if first == nil {
				first = r
				continue
			}
			if r.SampleType != first.SampleType || r.Unit != first.Unit {
				return "", fmt.Errorf("%w: %s/%s is %s in %s but %s/%s is %s in %s (pick one profileType)", ErrMismatch,
					first.Build, first.Run, first.SampleType, first.Unit, r.Build, r.Run, r.SampleType, r.Unit)
			}
		}
	}
	if first == nil {
		return "", storage.ErrNoRuns
	}
	return first.Unit, nil
}

// tree answers flamegraph, diff and functions queries.
func (e *Executor) tree(ctx context.Context, m Model) (data.Frames, error) {
	head, base, err := e.sides(ctx, m)
	if err != nil {
		return nil, err
	}
	unit, err := unitOf(head, base)
	if err != nil {
		return nil, err
	}
	b, err := e.load(ctx, head, base)
	if err != nil {
		return nil, err
	}
	return Render(b, m, e.Rules, unit), nil
}

// load fills an engine with the head and base runs.
func (e *Executor) load(ctx context.Context, head, base []storage.Run) (*tree.Builder, error) {
	b := tree.NewBuilder(tree.NewFrames())
	stacks, err := e.stackIDs(ctx, b, append(head[:len(head):len(head)], base...))
	if err != nil {
		return nil, err
	}
	groups := [][]storage.Run{head}
	if len(base) > 0 {
		groups = append(groups, base)
	}
	sides := [...]tree.Side{tree.Head, tree.Base}
	err = e.Store.StackValues(ctx, groups, func(g int, hash uint64, value int64, firstSeen uint64) error {
		id, ok := stacks[hash]
		if !ok {
			return fmt.Errorf("%w: stack %x has samples but no text", storage.ErrMissingFrame, hash)
		}
		b.Add(sides[g], id, value, firstSeen)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.SetRuns(tree.Head, len(head))
	b.SetRuns(tree.Base, len(base))
	return b, nil
}

// stackIDs interns every distinct stack of runs in the engine and maps
// the storage's stack hashes to engine stacks. Frames are interned once
// per distinct frame hash, not once per stack position.
func (e *Executor) stackIDs(ctx context.Context, b *tree.Builder, runs []storage.Run) (map[uint64]tree.StackID, error) {
	frameIDs := map[uint64]uint32{}
	stacks := map[uint64]tree.StackID{}
	var ids []uint32
	err := e.Store.Stacks(ctx, runs, func(hash uint64, frames []storage.Frame) error {
		ids = ids[:0]
		for _, f := range frames {
			id, ok := frameIDs[f.Hash]
			if !ok {
				id = b.Frames().Intern(f.Name, f.Module)
				frameIDs[f.Hash] = id
			}
			ids = append(ids, id)
		}
		stacks[hash] = b.Stack(ids)
		return nil
	})
	return stacks, err
}
