package query

import (
	"context"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/storage"
)

// runs answers a runs query: one row per run, and a summary comparing the
// runs' totals (the profile's value per run) head against base.
func (e *Executor) runs(ctx context.Context, m Model, _ Range) (Answer, error) {
	head, base, unit, err := e.sides(ctx, m)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Frames: frames.Runs(shown(head), shown(base), unit)}, nil
}

// shown is stored runs as the runs frame shows them.
func shown(runs []storage.Run) []frames.Run {
	out := make([]frames.Run, len(runs))
	for i, r := range runs {
		out[i] = frames.Run{Build: r.Build, Run: r.Run, Start: r.Start, Duration: r.Duration, Total: r.Total}
	}
	return out
}
