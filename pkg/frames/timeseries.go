package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Series is a timeseries answer, a row per build.
type Series struct {
	Times  []time.Time
	Builds []string
	// Name is the value's display name (the function, or "total"), Unit
	// the Grafana unit of Value, the mean per-run value.
	Name, Unit string
	Value      []float64
	// Compared: against a baseline, with Change and PValue (NaN: null),
	// Significant (1 or 0) and Regression (the change when significant).
	Compared                bool
	Change, PValue          []float64
	Significant, Regression []float64
	// ChangePoint is the rise where a significant change point starts,
	// else 0.
	ChangePoint []float64
	// Only, if set, keeps time and that one numeric field: Grafana
	// Alerting makes a series of every numeric field.
	Only string
}

// TimeSeries is the wide time-series "timeseries" frame: time, value,
// with a baseline change, pValue, significant and regression, then
// changepoint; Meta.Custom "builds" names the builds in row order.
func TimeSeries(s Series) *data.Frame {
	fields := []*data.Field{
		data.NewField(FieldTime, nil, s.Times),
		data.NewField(FieldValue, nil, s.Value).SetConfig(&data.FieldConfig{Unit: s.Unit, DisplayNameFromDS: s.Name}),
	}
	if s.Compared {
		percent := &data.FieldConfig{Unit: UnitPercent}
		change, pValue := make([]*float64, len(s.Change)), make([]*float64, len(s.PValue))
		for i := range change {
			change[i], pValue[i] = orNull(s.Change[i]), orNull(s.PValue[i])
		}
		fields = append(fields,
			data.NewField(FieldChange, nil, change).SetConfig(percent),
			data.NewField(FieldPValue, nil, pValue),
			data.NewField(FieldSignificant, nil, s.Significant),
			data.NewField(FieldRegression, nil, s.Regression).SetConfig(percent),
		)
	}
	fields = append(fields, data.NewField(FieldChangePoint, nil, s.ChangePoint).SetConfig(&data.FieldConfig{Unit: UnitPercent}))
	if s.Only != "" {
		for _, fl := range fields[1:] {
			if fl.Name == s.Only {
				fields = []*data.Field{fields[0], fl}
				break
			}
		}
	}
	f := data.NewFrame(FrameTimeSeries, fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide, Custom: map[string]any{MetaBuilds: s.Builds}}
	return f
}
