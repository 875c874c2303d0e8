package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/internal/aside"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// ErrMismatch means the selected runs cannot be combined (different sample
// types or units).
var ErrMismatch = errors.New("runs cannot be combined")

// Executor answers queries from the runs stored in ClickHouse. A tree
// query reads each run's per-stack sums (kept at ingest) and the texts of
// the stacks it has not cached; the engine then builds the tree and its
// per-node statistics. It is safe for concurrent use.
type Executor struct {
	Store *storage.Store
	// Rules classify system frames for collapseSystem (nil: nothing is
	// system code).
	Rules *sysframes.Rules
	// Stacks caches stack texts across queries (nil: none).
	Stacks *loader.Cache
	// MaxMemory bounds the trees one query builds, in bytes (0: none).
	MaxMemory int64
	// Timeout bounds one query (0: none but its context's).
	Timeout time.Duration
	// Admitted, when set, is told of each tree query's engine once it is
	// admitted and bound to the query's context, before any tree is
	// built: where a test follows a query through the pipeline.
	Admitted func(context.Context, *tree.Builder)
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

// Execute runs a parsed query and returns its frames.
func (e *Executor) Execute(ctx context.Context, m Model, r Range) (data.Frames, error) {
	a, err := e.Answer(ctx, m, r)
	return a.Frames, err
}

// Answer runs a parsed query with its type's executor, within the
// executor's deadline and with a panic as its error (pipeline.go).
func (e *Executor) Answer(ctx context.Context, m Model, r Range) (Answer, error) {
	spec, ok := Lookup(m.QueryType)
	if !ok {
		return Answer{}, fmt.Errorf("unknown queryType %q", m.QueryType)
	}
	return guard(ctx, e, func(ctx context.Context) (Answer, error) { return spec.execute(e, ctx, m, r) })
}

// sides reads the head runs and, for a comparison, the base runs, with
// the unit they share.
func (e *Executor) sides(ctx context.Context, m Model) (head, base []storage.Run, unit string, err error) {
	// the two listings are round trips of their own: at once
	listed := aside.Run("listing", func() ([]storage.Run, error) {
		if !m.IsDiff() {
			return nil, nil
		}
		return e.selectRuns(ctx, m, m.Base)
	})
	head, err = e.selectRuns(ctx, m, m.Head)
	b := <-listed
	if err != nil {
		return nil, nil, "", fmt.Errorf("head: %w", err)
	}
	if b.Err != nil {
		return nil, nil, "", fmt.Errorf("base: %w", b.Err)
	}
	base = b.V
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
func (e *Executor) tree(ctx context.Context, m Model, _ Range) (Answer, error) {
	return answerTree(ctx, e, m, func(t *Tree) (Answer, error) {
		frames, err := t.Render(nil)
		return Answer{Frames: frames}, err
	})
}

// Engine returns the engine filled with the runs of a flamegraph, diff or
// functions query, and their unit, admitted by their (run, stack) rows:
// what AnswerTree answers from, and what bisect reads.
func (e *Executor) Engine(ctx context.Context, m Model) (*tree.Builder, string, error) {
	head, base, unit, err := e.sides(ctx, m)
	if err != nil {
		return nil, "", err
	}
	all := append(head[:len(head):len(head)], base...) // Store.Runs lists them by start time
	if err := e.admit(all); err != nil {
		return nil, "", err
	}
	b, err := loader.Load(ctx, e.Store, e.Stacks, head, base)
	return b, unit, err
}
