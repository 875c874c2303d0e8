package query

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/internal/fault"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// The tree-query pipeline: every caller of a tree query (the data source,
// serve, the CLI on files and on stored runs, MCP, the report) reaches
// its engine through AnswerTree or AnswerLocal, so that the memory
// admission, the binding of the build to the query's context, the
// deadline, panic recovery and the judge are each here once.

// ErrInternal wraps a bug in a query's work, such as a recovered panic.
var ErrInternal = errors.New("internal error")

// Panic is a panic of a query's work, recovered as its error: Value is
// what it panicked with, Stack where (for the log; the message stays
// short).
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("%v: %v", ErrInternal, p.Value) }

func (p *Panic) Unwrap() error { return ErrInternal }

// Guard runs f and returns its result, or ctx's error as soon as ctx ends
// even if f does not notice (clickhouse-go's handshake waits out its own
// dial timeout), with a panic in f as a *Panic error: for a caller that
// must answer by its deadline whatever its work does (the data source's
// queries, whose turn at its gate holds until the work really ends, its
// resources and health check).
func Guard[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // f may finish after nobody listens
	go func() {
		var r result
		r.v, r.err = recovered(ctx, f)
		done <- r
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// recovered runs f, a panic in it (or carried from the engine's other
// cores) becoming a *Panic error instead of killing the process.
func recovered[T any](ctx context.Context, f func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			stack := debug.Stack()
			if cp, ok := p.(*tree.CorePanic); ok {
				stack = cp.Stack
			}
			var zero T
			v, err = zero, &Panic{Value: p, Stack: stack}
		}
	}()
	return f(ctx)
}

// guard runs a query's work f within the executor's deadline, a panic
// its error. It returns when f does: f ends soon after ctx (the engine is
// bound to it, ClickHouse's reads honour it).
func guard[T any](ctx context.Context, e *Executor, f func(context.Context) (T, error)) (T, error) {
	if e.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	return recovered(ctx, f)
}

// Tree is a tree query (flamegraph, diff, functions) on its filled
// engine: what a caller's answer reads.
type Tree struct {
	Builder *tree.Builder
	Model   Model
	Rules   *sysframes.Rules
	Unit    string
	// Modified is the head build's modified functions (stored runs of a
	// diff; nil for files).
	Modified map[string]bool
}

// AnswerTree answers the tree query m on e's stored runs with answer,
// under the pipeline's guards: m is validated, its runs admitted against
// the memory budget before anything is read and its trees once the
// engine is filled, the engine bound to ctx (a cancelled or late query
// stops building), the deadline applied and a panic made an error. When
// ctx ends, its error is the answer, whatever answer returns.
func AnswerTree[T any](ctx context.Context, e *Executor, m Model, answer func(*Tree) (T, error)) (T, error) {
	if err := m.Validate(); err != nil {
		var zero T
		return zero, err
	}
	return guard(ctx, e, func(ctx context.Context) (T, error) { return answerTree(ctx, e, m, answer) })
}

// answerTree is AnswerTree without the guards, for the executor's own
// tree queries (Answer guards them).
func answerTree[T any](ctx context.Context, e *Executor, m Model, answer func(*Tree) (T, error)) (T, error) {
	var zero T
	b, unit, err := e.Engine(ctx, m)
	if err != nil {
		return zero, err
	}
	if err := m.checkMemory(b, e.MaxMemory); err != nil {
		return zero, err
	}
	modified, err := e.Modified(ctx, m)
	if err != nil {
		return zero, err
	}
	t := &Tree{Builder: b, Model: m, Rules: e.Rules, Unit: unit, Modified: modified}
	return bound(ctx, t, e.Admitted, answer)
}

// AnswerLocal answers a tree query whose engine the caller filled (the
// CLI's profile files) with answer, under the guards of AnswerTree but
// the memory budget and the deadline, which the CLI on files has not.
func AnswerLocal[T any](ctx context.Context, t *Tree, answer func(*Tree) (T, error)) (T, error) {
	return recovered(ctx, func(ctx context.Context) (T, error) { return bound(ctx, t, nil, answer) })
}

// bound binds t's engine to ctx, tells admitted (when set) and answers.
func bound[T any](ctx context.Context, t *Tree, admitted func(context.Context, *tree.Builder), answer func(*Tree) (T, error)) (T, error) {
	t.Builder.StopWhen(ctx)
	if admitted != nil {
		admitted(ctx, t.Builder)
	}
	v, err := answer(t)
	if ctx.Err() != nil { // a stopped Build gives the root alone: no answer
		var zero T
		return zero, ctx.Err()
	}
	return v, err
}

// Options are the engine options of the view the query asks for.
func (t *Tree) Options() tree.Options { return TreeOptions(t.Builder, t.Model, t.Rules) }

// Verdict is the diff's verdict by j, which learns the head build's
// modified functions here.
func (t *Tree) Verdict(j Judge) (*verdict.Verdict, error) {
	j.Modified = t.Modified
	return j.Verdict(t.Builder, t.Options())
}

// Render is the query's frames (RenderWith), a diff's culprits under
// verdict v (nil: NewJudge's).
func (t *Tree) Render(v *verdict.Verdict) (data.Frames, error) {
	fault.Point("query.render")
	return RenderWith(t.Builder, t.Model, t.Rules, t.Unit, t.Modified, v)
}
