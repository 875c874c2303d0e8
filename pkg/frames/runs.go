package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Run is a run as the runs frame shows it: a stored run or a file the
// report reads.
type Run struct {
	Build, Run string
	Start      time.Time
	Duration   time.Duration
	Total      int64 // the sum of the run's values
}

// Runs returns the "runs" frame (side, build, run, time, duration in
// seconds, total) and the "runs_summary" frame: a row per side present
// (side, n, mean, median, stddev of the totals) with, on every row, the
// head-versus-base comparison (change of the mean, its 95% confidence
// interval ciLow..ciHigh, the Mann-Whitney U pValue and significant, the
// minimum detectable change mdc at 80% power and runsToDecide, the runs a
// side that would detect the gate's default threshold); the comparison is
// null without base runs.
func Runs(head, base []Run, unit string) data.Frames {
	n := len(head) + len(base)
	side, build, run := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	start := make([]time.Time, 0, n)
	duration, total := make([]float64, 0, n), make([]float64, 0, n)
	values := map[string][]float64{}
	for _, s := range []struct {
		name string
		runs []Run
	}{{"base", base}, {"head", head}} {
		for _, r := range s.runs {
			side, build, run = append(side, s.name), append(build, r.Build), append(run, r.Run)
			start = append(start, r.Start)
			duration = append(duration, r.Duration.Seconds())
			total = append(total, float64(r.Total))
			values[s.name] = append(values[s.name], float64(r.Total))
		}
	}
	valueConfig := &data.FieldConfig{Unit: GrafanaUnit(unit)}
	runsFrame := table(FrameRuns,
		data.NewField(FieldSide, nil, side),
		data.NewField(FieldBuild, nil, build),
		data.NewField(FieldRun, nil, run),
		data.NewField(FieldTime, nil, start),
		data.NewField(FieldDuration, nil, duration).SetConfig(&data.FieldConfig{Unit: "s"}),
		data.NewField(FieldTotal, nil, total).SetConfig(valueConfig),
	)

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
	mdc, decide := make([]*float64, rows), make([]*int64, rows)
	for i, d := range described {
		count[i] = int64(d.N)
		mean[i], median[i], stddev[i] = orNull(d.Mean), orNull(d.Median), orNull(d.StdDev)
		if len(base) > 0 {
			change[i], lo[i], hi[i], p[i] = orNull(sum.Change), orNull(sum.ChangeLow), orNull(sum.ChangeHigh), orNull(sum.PValue)
			significant[i] = &sum.Significant
			mdc[i] = orNull(stats.MDC(sum.Base, sum.Head, stats.DefaultAlpha, stats.DefaultPower))
			if n := int64(stats.RunsFor(sum.Base, sum.Head, verdict.DefaultMinBaseShare, stats.DefaultAlpha, stats.DefaultPower)); n > 0 {
				decide[i] = &n
			}
		}
	}
	percent := &data.FieldConfig{Unit: UnitPercent}
	summary := table(FrameRunsSummary,
		data.NewField(FieldSide, nil, sides),
		data.NewField(FieldN, nil, count),
		data.NewField(FieldMean, nil, mean).SetConfig(valueConfig),
		data.NewField(FieldMedian, nil, median).SetConfig(valueConfig),
		data.NewField(FieldStdDev, nil, stddev).SetConfig(valueConfig),
		data.NewField(FieldChange, nil, change).SetConfig(percent),
		data.NewField(FieldCILow, nil, lo).SetConfig(percent),
		data.NewField(FieldCIHigh, nil, hi).SetConfig(percent),
		data.NewField(FieldPValue, nil, p),
		data.NewField(FieldSignificant, nil, significant),
		data.NewField(FieldMDC, nil, mdc).SetConfig(percent),
		data.NewField(FieldRunsToDecide, nil, decide),
	)
	return data.Frames{runsFrame, summary}
}
