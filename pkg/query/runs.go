package query

import (
	"context"

	"github.com/flamediff/flamediff/pkg/frames"
)

// runs answers a runs query: one row per run, and a summary comparing the
// runs' totals (the profile's value per run) head against base.
func (e *Executor) runs(ctx context.Context, m Model, _ Range) (Answer, error) {
	head, base, unit, err := e.sides(ctx, m)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Frames: frames.Runs(head, base, unit)}, nil
}
