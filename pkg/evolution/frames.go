package evolution

import (
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Frame names of the evolution query's response.
const (
	FrameMatrix   = "evolution"
	FrameEdges    = "evolution_edges"
	FrameTimeline = "evolution_timeline"
)

// Frames returns the matrix, edges and timeline frames, in that order.
// unit is the Grafana unit of the time values ("ns", "bytes", "short").
func (r Result) Frames(unit string) data.Frames {
	return data.Frames{MatrixFrame(r.Matrix, unit), EdgesFrame(r.Edges), TimelineFrame(r.Timeline)}
}

// MatrixFrame is the long-format "evolution" frame, one row per Row in
// order, with fields component, kind, parent, build, buildTime (time),
// time (in unit), share, change (nullable; null for no previous build),
// modified and added (counts), modifiedMethods and addedMethods (the
// names, one per line), pValue, qValue and significant (nullable: the
// test of change across runs).
func MatrixFrame(rows []Row, unit string) *data.Frame {
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
	return table(FrameMatrix,
		data.NewField("component", nil, component),
		data.NewField("kind", nil, kind),
		data.NewField("parent", nil, parent),
		data.NewField("build", nil, build),
		data.NewField("buildTime", nil, buildTime),
		data.NewField("time", nil, t).SetConfig(&data.FieldConfig{Unit: unit}),
		data.NewField("share", nil, share).SetConfig(&data.FieldConfig{Unit: "percentunit"}),
		data.NewField("change", nil, change).SetConfig(&data.FieldConfig{Unit: "percentunit"}),
		data.NewField("modified", nil, modified),
		data.NewField("added", nil, added),
		data.NewField("modifiedMethods", nil, modifiedMethods),
		data.NewField("addedMethods", nil, addedMethods),
		data.NewField("pValue", nil, pValue),
		data.NewField("qValue", nil, qValue),
		data.NewField("significant", nil, significant),
	)
}

// EdgesFrame is the "evolution_edges" frame: build, buildTime, caller,
// callee, status (added | removed).
func EdgesFrame(rows []EdgeRow) *data.Frame {
	n := len(rows)
	build, caller, callee, status := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	buildTime := make([]time.Time, n)
	for i, r := range rows {
		build[i], buildTime[i], caller[i], callee[i], status[i] = r.Build, r.BuildTime, r.Caller, r.Callee, string(r.Status)
	}
	return table(FrameEdges,
		data.NewField("build", nil, build),
		data.NewField("buildTime", nil, buildTime),
		data.NewField("caller", nil, caller),
		data.NewField("callee", nil, callee),
		data.NewField("status", nil, status),
	)
}

// TimelineFrame is the "evolution_timeline" frame: build, buildTime, frame
// (index of the time frame), component, kind, share (of the time frame).
func TimelineFrame(rows []TimelineRow) *data.Frame {
	n := len(rows)
	build, component, kind := make([]string, n), make([]string, n), make([]string, n)
	buildTime := make([]time.Time, n)
	frame := make([]int64, n)
	share := make([]float64, n)
	for i, r := range rows {
		build[i], buildTime[i], frame[i] = r.Build, r.BuildTime, int64(r.Frame)
		component[i], kind[i], share[i] = r.Component, string(r.Kind), r.Share
	}
	return table(FrameTimeline,
		data.NewField("build", nil, build),
		data.NewField("buildTime", nil, buildTime),
		data.NewField("frame", nil, frame),
		data.NewField("component", nil, component),
		data.NewField("kind", nil, kind),
		data.NewField("share", nil, share).SetConfig(&data.FieldConfig{Unit: "percentunit"}),
	)
}

// table marks a frame as a plain table: rows are ordered by component, not
// by time, so the time-series frame types do not apply.
func table(name string, fields ...*data.Field) *data.Frame {
	f := data.NewFrame(name, fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeTable}
	return f
}
