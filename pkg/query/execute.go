package query

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// Stacks caches stack texts across queries (nil: none).
	Stacks *StackCache
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

// sides reads the head runs and, for a comparison, the base runs, with
// the unit they share.
func (e *Executor) sides(ctx context.Context, m Model) (head, base []storage.Run, unit string, err error) {
	if head, err = e.selectRuns(ctx, m, m.Head); err != nil {
		return nil, nil, "", fmt.Errorf("head: %w", err)
	}
	if m.IsDiff() {
		if base, err = e.selectRuns(ctx, m, m.Base); err != nil {
			return nil, nil, "", fmt.Errorf("base: %w", err)
		}
	}
	unit, err = unitOf(head, base)
	return head, base, unit, err
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
	head, base, unit, err := e.sides(ctx, m)
	if err != nil {
		return nil, err
	}
	b, err := e.load(ctx, head, base)
	if err != nil {
		return nil, err
	}
	return Render(b, m, e.Rules, unit), nil
}

// valueRow is one (side, stack) sum read from ClickHouse.
type valueRow struct {
	group     int
	hash      uint64
	value     int64
	firstSeen uint64
}

// load fills an engine with the head and base runs. Two things happen
// while ClickHouse aggregates the per-side sums: for a selection seen
// before, every stack it has is interned in the engine from the cache;
// otherwise the stack texts the cache lacks are read on a second
// connection.
func (e *Executor) load(ctx context.Context, head, base []storage.Run) (*tree.Builder, error) {
	all := append(head[:len(head):len(head)], base...)
	groups := [][]storage.Run{head}
	if len(base) > 0 {
		groups = append(groups, base)
	}
	cache := e.cache()
	b := tree.NewBuilder(tree.NewFrames())
	known := cache.selection(all)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ids map[uint64]tree.StackID
	sideline := make(chan error, 1)
	go func() {
		if known != nil {
			var err error
			ids, err = e.stackIDs(ctx, cache, b, all, known)
			sideline <- err
			return
		}
		sideline <- cache.fetch(ctx, e.Store, all)
	}()
	var rows []valueRow
	err := e.Store.StackValues(ctx, groups, func(g int, hash uint64, value int64, firstSeen uint64) error {
		rows = append(rows, valueRow{g, hash, value, firstSeen})
		return nil
	})
	if err != nil {
		cancel()
	}
	if sideErr := <-sideline; err == nil {
		err = sideErr
	}
	if err != nil {
		return nil, err
	}
	if known == nil {
		hashes := distinctHashes(rows)
		if ids, err = e.stackIDs(ctx, cache, b, all, hashes); err != nil {
			return nil, err
		}
		cache.remember(all, hashes)
	}

	sides := [...]tree.Side{tree.Head, tree.Base}
	for _, r := range rows {
		id, ok := ids[r.hash]
		if !ok { // samples without a stack row: tables edited by hand
			return nil, fmt.Errorf("%w: stack %x has samples but no text", storage.ErrMissingFrame, r.hash)
		}
		b.Add(sides[r.group], id, r.value, r.firstSeen)
	}
	b.SetRuns(tree.Head, len(head))
	b.SetRuns(tree.Base, len(base))
	return b, nil
}

func distinctHashes(rows []valueRow) []uint64 {
	seen := make(map[uint64]bool, len(rows))
	var out []uint64
	for _, r := range rows {
		if !seen[r.hash] {
			seen[r.hash] = true
			out = append(out, r.hash)
		}
	}
	return out
}

// cache returns the executor's stack cache, or a fresh one for this
// query when it has none.
func (e *Executor) cache() *StackCache {
	if e.Stacks == nil {
		return NewStackCache(math.MaxInt)
	}
	return e.Stacks
}

// stackIDs interns the given stacks in the engine, from the cache; the
// frames are interned once per distinct frame hash. Stacks the cache lost
// meanwhile (it starts over when full) are read again into a cache of this
// query's own.
func (e *Executor) stackIDs(ctx context.Context, cache *StackCache, b *tree.Builder, runs []storage.Run, hashes []uint64) (map[uint64]tree.StackID, error) {
	ids := make(map[uint64]tree.StackID, len(hashes))
	b.Reserve(len(hashes), 16*len(hashes))
	frameIDs := map[uint64]uint32{}
	var stack []uint32
	intern := func(i int, frames []uint64, text map[uint64]storage.Frame) {
		stack = stack[:0]
		for _, h := range frames {
			id, ok := frameIDs[h]
			if !ok {
				f := text[h]
				id = b.Frames().Intern(f.Name, f.Module)
				frameIDs[h] = id
			}
			stack = append(stack, id)
		}
		ids[hashes[i]] = b.Stack(stack)
	}
	lacking := cache.resolve(hashes, intern)
	if len(lacking) == 0 {
		return ids, nil
	}
	own := NewStackCache(math.MaxInt)
	if err := own.fetch(ctx, e.Store, runs); err != nil {
		return nil, err
	}
	hashes = lacking
	if still := own.resolve(hashes, intern); len(still) > 0 {
		return nil, fmt.Errorf("%w: stack %x has samples but no text", storage.ErrMissingFrame, still[0])
	}
	return ids, nil
}
