package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
)

// ChangePoints is the "changepoints" frame, one row per change point in
// the given order: function, build, previous (the build before), commit,
// before and after (per-run means, in the Grafana unit), change, pValue,
// significant, moved (a function that appeared or vanished with work that
// moved, not cost: docs/CHANGEPOINTS.md). builds, if not nil, are the builds looked at, oldest first
// (Meta.Custom "builds").
func ChangePoints(cps []evolution.ChangePoint, unit string, builds []string) *data.Frame {
	n := len(cps)
	function, build, previous, commit := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	before, after := make([]float64, n), make([]float64, n)
	change, pValue := make([]*float64, n), make([]float64, n)
	significant, moved := make([]bool, n), make([]bool, n)
	for i, c := range cps {
		function[i], build[i], previous[i], commit[i] = c.Function, c.Build, c.Previous, c.Commit
		before[i], after[i], change[i] = c.Before, c.After, orNull(c.Change)
		pValue[i], significant[i], moved[i] = c.PValue, c.Significant, c.Moved
	}
	amount := &data.FieldConfig{Unit: unit}
	f := table(FrameChangePoints,
		data.NewField(FieldFunction, nil, function),
		data.NewField(FieldBuild, nil, build),
		data.NewField(FieldPrevious, nil, previous),
		data.NewField(FieldCommit, nil, commit),
		data.NewField(FieldBefore, nil, before).SetConfig(amount),
		data.NewField(FieldAfter, nil, after).SetConfig(amount),
		data.NewField(FieldChange, nil, change).SetConfig(&data.FieldConfig{Unit: UnitPercent}),
		data.NewField(FieldPValue, nil, pValue),
		data.NewField(FieldSignificant, nil, significant),
		data.NewField(FieldMoved, nil, moved),
	)
	if builds != nil {
		f.Meta.Custom = map[string]any{MetaBuilds: builds}
	}
	return f
}
