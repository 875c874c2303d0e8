package frames

import (
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
)

// Evolution returns the matrix, edges and timeline frames of an
// evolution answer, in that order. unit is the Grafana unit of the time
// values ("ns", "bytes", "short").
func Evolution(r evolution.Result, unit string) data.Frames {
	return data.Frames{matrixFrame(r.Matrix, unit), edgesFrame(r.Edges), timelineFrame(r.Timeline)}
}

// matrixFrame is the long-format "evolution" frame, one row per Row in
// order, with fields component, kind, parent, build, buildTime (time),
// time (in unit), share, change (nullable; null for no previous build),
// modified and added (counts), modifiedMethods and addedMethods (the
// names, one per line), pValue, qValue and significant (nullable: the
// test of change across runs).
func matrixFrame(rows []evolution.Row, unit string) *data.Frame {
	n := len(rows)
	component, kind, parent, build := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	buildTime := make([]time.Time, n)
	t, share := make([]float64, n), make([]float64, n)
	change := make([]*float64, n)
	modified, added := make([]int64, n), make([]int64, n)
	modifiedMethods, addedMethods := make([]string, n), make([]string, n)
	pValue, qValue, significant := make([]*float64, n), make([]*float64, n), make([]*bool, n)
	for i, r := range rows {
		pValue[i], qValue[i], significant[i] = r.PValue, r.QValue, r.Significant
		modifiedMethods[i], addedMethods[i] = strings.Join(r.ModifiedMethods, "\n"), strings.Join(r.AddedMethods, "\n")
		component[i], kind[i], parent[i], build[i] = r.Component, string(r.Kind), r.Parent, r.Build
		buildTime[i], t[i], share[i], change[i] = r.BuildTime, r.Time, r.Share, r.Change
		modified[i], added[i] = int64(r.Modified), int64(r.Added)
	}
	return table(FrameEvolution,
		data.NewField(FieldComponent, nil, component),
		data.NewField(FieldKind, nil, kind),
		data.NewField(FieldParent, nil, parent),
		data.NewField(FieldBuild, nil, build),
		data.NewField(FieldBuildTime, nil, buildTime),
		data.NewField(FieldTime, nil, t).SetConfig(&data.FieldConfig{Unit: unit}),
		data.NewField(FieldShare, nil, share).SetConfig(&data.FieldConfig{Unit: UnitPercent}),
		data.NewField(FieldChange, nil, change).SetConfig(&data.FieldConfig{Unit: UnitPercent}),
		data.NewField(FieldModified, nil, modified),
		data.NewField(FieldAdded, nil, added),
		data.NewField(FieldModifiedMethods, nil, modifiedMethods),
		data.NewField(FieldAddedMethods, nil, addedMethods),
		data.NewField(FieldPValue, nil, pValue),
		data.NewField(FieldQValue, nil, qValue),
		data.NewField(FieldSignificant, nil, significant),
	)
}

// edgesFrame is the "evolution_edges" frame: build, buildTime, caller,
// callee, status (added | removed).
func edgesFrame(rows []evolution.EdgeRow) *data.Frame {
	n := len(rows)
	build, caller, callee, status := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	buildTime := make([]time.Time, n)
	for i, r := range rows {
		build[i], buildTime[i], caller[i], callee[i], status[i] = r.Build, r.BuildTime, r.Caller, r.Callee, string(r.Status)
	}
	return table(FrameEdges,
		data.NewField(FieldBuild, nil, build),
		data.NewField(FieldBuildTime, nil, buildTime),
		data.NewField(FieldCaller, nil, caller),
		data.NewField(FieldCallee, nil, callee),
		data.NewField(FieldStatus, nil, status),
	)
}

// timelineFrame is the "evolution_timeline" frame: build, buildTime,
// bucket (index of the time bucket of the runs), component, kind, share (of
// the bucket).
func timelineFrame(rows []evolution.TimelineRow) *data.Frame {
	n := len(rows)
	build, component, kind := make([]string, n), make([]string, n), make([]string, n)
	buildTime := make([]time.Time, n)
	bucket := make([]int64, n)
	share := make([]float64, n)
	for i, r := range rows {
		build[i], buildTime[i], bucket[i] = r.Build, r.BuildTime, int64(r.Bucket)
		component[i], kind[i], share[i] = r.Component, string(r.Kind), r.Share
	}
	return table(FrameTimeline,
		data.NewField(FieldBuild, nil, build),
		data.NewField(FieldBuildTime, nil, buildTime),
		data.NewField(FieldBucket, nil, bucket),
		data.NewField(FieldComponent, nil, component),
		data.NewField(FieldKind, nil, kind),
		data.NewField(FieldShare, nil, share).SetConfig(&data.FieldConfig{Unit: UnitPercent}),
	)
}

// table marks a frame as a plain table: its rows are not ordered by time
// (the evolution frames' by component), so the time-series frame types do
// not apply.
func table(name string, fields ...*data.Field) *data.Frame {
	f := data.NewFrame(name, fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeTable}
	return f
}
