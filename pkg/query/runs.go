package query

import (
	"context"
	"math"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Frame names of the runs query's response.
const (
	FrameRuns        = "runs"
	FrameRunsSummary = "runs_summary"
)

// runs answers a runs query: one row per run, and a summary comparing the
// runs' totals (the profile's value per run) head against base.
func (e *Executor) runs(ctx context.Context, m Model, _ Range) (Answer, error) {
	head, base, unit, err := e.sides(ctx, m)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Frames: RunsFrames(head, base, unit)}, nil
}

// RunsFrames returns the "runs" frame (side, build, run, time, duration in
// seconds, total) and the "runs_summary" frame: a row per side present
// (side, n, mean, median, stddev of the totals) with, on every row, the
// head-versus-base comparison (change of the mean, its 95% confidence
// interval ciLow..ciHigh, the Mann-Whitney U pValue and significant); the
// comparison is null without base runs.
func RunsFrames(head, base []storage.Run, unit string) data.Frames {
	n := len(head) + len(base)
	side, build, run := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	start := make([]time.Time, 0, n)
	duration, total := make([]float64, 0, n), make([]float64, 0, n)
	values := map[string][]float64{}
	for _, s := range []struct {
		name string
		runs []storage.Run
	}{{"base", base}, {"head", head}} {
		for _, r := range s.runs {
			side, build, run = append(side, s.name), append(build, r.Build), append(run, r.Run)
			start = append(start, r.Start)
			duration = append(duration, r.Duration.Seconds())
			total = append(total, float64(r.Total))
			values[s.name] = append(values[s.name], float64(r.Total))
		}
	}
	valueConfig := &data.FieldConfig{Unit: frames.GrafanaUnit(unit)}
	runsFrame := data.NewFrame(FrameRuns,
		data.NewField("side", nil, side),
		data.NewField("build", nil, build),
		data.NewField("run", nil, run),
		data.NewField("time", nil, start),
		data.NewField("duration", nil, duration).SetConfig(&data.FieldConfig{Unit: "s"}),
		data.NewField("total", nil, total).SetConfig(valueConfig),
	)
	runsFrame.Meta = &data.FrameMeta{Type: data.FrameTypeTable}

	sum := stats.Compare(values["base"], values["head"])
	var sides []string
	var described []stats.Side
	if len(base) > 0 {
		sides, described = append(sides, "base"), append(described, sum.Base)
	}
	sides, described = append(sides, "head"), append(described, sum.Head)
	rows := len(sides)
	count := make([]int64, rows)
	mean, median, stddev := make([]*float64, rows), make([]*float64, rows), make([]*float64, rows)
	change, lo, hi, p := make([]*float64, rows), make([]*float64, rows), make([]*float64, rows), make([]*float64, rows)
	significant := make([]*bool, rows)
	for i, d := range described {
		count[i] = int64(d.N)
		mean[i], median[i], stddev[i] = finiteOrNil(d.Mean), finiteOrNil(d.Median), finiteOrNil(d.StdDev)
		if len(base) > 0 {
			change[i], lo[i], hi[i], p[i] = finiteOrNil(sum.Change), finiteOrNil(sum.ChangeLow), finiteOrNil(sum.ChangeHigh), finiteOrNil(sum.PValue)
			significant[i] = &sum.Significant
		}
	}
	percent := &data.FieldConfig{Unit: "percentunit"}
	summary := data.NewFrame(FrameRunsSummary,
		data.NewField("side", nil, sides),
		data.NewField("n", nil, count),
		data.NewField("mean", nil, mean).SetConfig(valueConfig),
		data.NewField("median", nil, median).SetConfig(valueConfig),
		data.NewField("stddev", nil, stddev).SetConfig(valueConfig),
		data.NewField("change", nil, change).SetConfig(percent),
		data.NewField("ciLow", nil, lo).SetConfig(percent),
		data.NewField("ciHigh", nil, hi).SetConfig(percent),
		data.NewField("pValue", nil, p),
		data.NewField("significant", nil, significant),
	)
	summary.Meta = &data.FrameMeta{Type: data.FrameTypeTable}
	return data.Frames{runsFrame, summary}
}

// finiteOrNil maps NaN and ±Inf (undefined statistics, unbounded
// intervals) to null: JSON cannot carry them and null reads as "none".
func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
