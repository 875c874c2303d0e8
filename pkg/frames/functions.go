package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/tree"
)

// Functions returns a function table as a frame: function, self, total for
// one side, or function, selfBase, totalBase, selfHead, totalHead, delta
// for a diff, in the order of rows. Value fields carry the unit. A diff
// whose rows have statistics adds deltaLow, deltaHigh, pValue, qValue and
// significant as FlameGraph does.
func Functions(rows []tree.Function, diff bool, unit string) *data.Frame {
	names := make([]string, len(rows))
	column := func(get func(tree.Function) float64) []float64 {
		out := make([]float64, len(rows))
		for i, r := range rows {
			out[i] = get(r)
		}
		return out
	}
	for i, r := range rows {
		names[i] = r.Name
	}
	cfg := &data.FieldConfig{Unit: GrafanaUnit(unit)}
	fields := data.Fields{data.NewField(FieldFunction, nil, names)}
	if !diff {
		fields = append(fields,
			data.NewField(FieldSelf, nil, column(func(r tree.Function) float64 { return r.HeadSelf })).SetConfig(cfg),
			data.NewField(FieldTotal, nil, column(func(r tree.Function) float64 { return r.HeadTotal })).SetConfig(cfg))
	} else {
		fields = append(fields,
			data.NewField(FieldSelfBase, nil, column(func(r tree.Function) float64 { return r.BaseSelf })).SetConfig(cfg),
			data.NewField(FieldTotalBase, nil, column(func(r tree.Function) float64 { return r.BaseTotal })).SetConfig(cfg),
			data.NewField(FieldSelfHead, nil, column(func(r tree.Function) float64 { return r.HeadSelf })).SetConfig(cfg),
			data.NewField(FieldTotalHead, nil, column(func(r tree.Function) float64 { return r.HeadTotal })).SetConfig(cfg),
			data.NewField(FieldDelta, nil, column(func(r tree.Function) float64 { return r.Delta })).SetConfig(&data.FieldConfig{Unit: UnitPercent}))
		if len(rows) > 0 && rows[0].HeadRuns != nil {
			fields = append(fields, statFields(len(rows), func(i int) tree.NodeStats {
				r := rows[i]
				return tree.NodeStats{PValue: r.PValue, QValue: r.QValue, DeltaLow: r.DeltaLow, DeltaHigh: r.DeltaHigh, Significant: r.Significant}
			})...)
		}
	}
	return data.NewFrame(FrameFunctions, fields...)
}
