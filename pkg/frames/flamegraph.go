// Package frames builds every data frame an answer holds, a file per
// answer: the tree engine's flame graphs (drawn unchanged by Grafana's own
// Flame Graph panel and Flamediff's) and functions tables, runs, time
// series, evolution and change points. docs/FRAMES.md and docs/QUERIES.md
// describe the layouts; names.go names every frame and field.
package frames

import (
	"math"
	"strconv"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/tree"
)

// maxEnumLabels is the number of texts an enum field can index (its values
// are uint16).
const maxEnumLabels = 1 << 16

// FlameGraph returns a tree as one frame in pre-order with Grafana's flame
// graph fields: level (int64), label (an enum field of the distinct labels,
// or a string field when there are more than 65,536), value and self
// (float64, per run). For a diff, value and self hold the base (Grafana's
// left side) and valueRight, selfRight the head; delta is (head total -
// base total) / base root total. For a single tree value and self hold the
// head. The value fields carry the unit; the frame prefers the flame graph
// visualisation.
//
// A diff with statistics (t.Stats) adds per node: deltaLow, deltaHigh,
// pValue, qValue (nullable float64, null where undefined), significant
// (nullable bool), headRuns and baseRuns (a JSON array of the node's
// per-run totals in the frame's unit), otherCount and otherMaxDelta (what
// an "other" node merges). A diff without carries t.StatsNotice as an
// info notice. Meta.Custom always holds "normalize", "alpha", "headRuns",
// "baseRuns" (run counts) and "stats" (whether the stat fields are there).
// Last, package names every node's package (see packageField).
func FlameGraph(t *tree.Tree, unit string) *data.Frame {
	n := t.Len()
	level := make([]int64, n)
	value, self := make([]float64, n), make([]float64, n)
	var valueRight, selfRight, delta []float64
	if t.Diff {
		valueRight, selfRight, delta = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	for i, nd := range t.Nodes {
		level[i] = int64(nd.Depth)
		if t.Diff {
			value[i], self[i] = nd.BaseTotal, nd.BaseSelf
			valueRight[i], selfRight[i] = nd.HeadTotal, nd.HeadSelf
			delta[i] = t.Delta(i)
		} else {
			value[i], self[i] = nd.HeadTotal, nd.HeadSelf
		}
	}
	cfg := &data.FieldConfig{Unit: GrafanaUnit(unit)}
	fields := data.Fields{
		data.NewField(FieldLevel, nil, level),
		labelField(t),
		data.NewField(FieldValue, nil, value).SetConfig(cfg),
		data.NewField(FieldSelf, nil, self).SetConfig(cfg),
	}
	if t.Diff {
		fields = append(fields,
			data.NewField(FieldValueRight, nil, valueRight).SetConfig(cfg),
			data.NewField(FieldSelfRight, nil, selfRight).SetConfig(cfg),
			data.NewField(FieldDelta, nil, delta).SetConfig(&data.FieldConfig{Unit: UnitPercent}))
	}
	meta := &data.FrameMeta{PreferredVisualization: data.VisTypeFlameGraph, Custom: map[string]any{
		MetaNormalize: t.Normalize.String(),
		MetaAlpha:     t.Alpha,
		MetaHeadRuns:  t.Runs[tree.Head],
		MetaBaseRuns:  t.Runs[tree.Base],
		MetaStats:     t.Stats != nil,
	}}
	if t.Stats != nil {
		fields = append(fields, nodeStatFields(t.Stats)...)
	} else if t.StatsNotice != "" {
		meta.Notices = []data.Notice{{Severity: data.NoticeSeverityInfo, Text: t.StatsNotice}}
	}
	if pkg := packageField(t); pkg != nil {
		fields = append(fields, pkg)
	}
	frame := data.NewFrame(FrameFlameGraph, fields...)
	frame.Meta = meta
	return frame
}

// Variant marks a flame graph frame as one variant of the tree (see
// query.Variants) with, if not "", a warning notice.
func Variant(f *data.Frame, name, notice string) *data.Frame {
	f.Meta.Custom.(map[string]any)[MetaVariant] = name
	return Warn(f, notice)
}

// Sandwich marks a flame graph frame as one of a function's two trees:
// part is "callers" or "callees".
func Sandwich(f *data.Frame, part, function string) *data.Frame {
	custom := f.Meta.Custom.(map[string]any)
	custom[MetaSandwich], custom[MetaFunction] = part, function
	return f
}

// Warn adds a warning notice to f (none when text is ""): why an answer
// has no stack, or shows a tree other than the one asked for.
func Warn(f *data.Frame, text string) *data.Frame {
	if text == "" {
		return f
	}
	if f.Meta == nil {
		f.Meta = &data.FrameMeta{}
	}
	f.Meta.Notices = append(f.Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: text})
	return f
}

// nodeStatFields are the statistics fields of a flame graph frame.
func nodeStatFields(st []tree.NodeStats) data.Fields {
	fields := statFields(len(st), func(i int) tree.NodeStats { return st[i] })
	headRuns, baseRuns := make([]string, len(st)), make([]string, len(st))
	otherCount, otherMaxDelta := make([]int64, len(st)), make([]float64, len(st))
	// Writing the per-run numbers is most of a big frame's cost: one
	// side on each core.
	tree.OnTwoCores(len(st) >= 1<<12, "frames.runs", func() {
		var scratch []byte
		for i, s := range st {
			headRuns[i] = jsonArray(&scratch, s.HeadRuns)
		}
	}, func() {
		var scratch []byte
		for i, s := range st {
			baseRuns[i] = jsonArray(&scratch, s.BaseRuns)
			otherCount[i], otherMaxDelta[i] = int64(s.OtherCount), s.OtherMaxDelta
		}
	})
	return append(fields,
		data.NewField(FieldHeadRuns, nil, headRuns),
		data.NewField(FieldBaseRuns, nil, baseRuns),
		data.NewField(FieldOtherCount, nil, otherCount),
		data.NewField(FieldOtherMaxDelta, nil, otherMaxDelta).SetConfig(&data.FieldConfig{Unit: UnitPercent}))
}

// statFields are deltaLow, deltaHigh, pValue, qValue and significant of n
// rows, each null where its value is NaN.
func statFields(n int, at func(i int) tree.NodeStats) data.Fields {
	low, high := make([]*float64, n), make([]*float64, n)
	p, q := make([]*float64, n), make([]*float64, n)
	significant := make([]*bool, n)
	for i := range n {
		s := at(i)
		low[i], high[i], p[i], q[i] = orNull(s.DeltaLow), orNull(s.DeltaHigh), orNull(s.PValue), orNull(s.QValue)
		if q[i] != nil {
			significant[i] = &s.Significant
		}
	}
	percent := &data.FieldConfig{Unit: UnitPercent}
	return data.Fields{
		data.NewField(FieldDeltaLow, nil, low).SetConfig(percent),
		data.NewField(FieldDeltaHigh, nil, high).SetConfig(percent),
		data.NewField(FieldPValue, nil, p),
		data.NewField(FieldQValue, nil, q),
		data.NewField(FieldSignificant, nil, significant),
	}
}

// orNull maps NaN and ±Inf (undefined statistics, unbounded intervals)
// to null: JSON cannot carry them and null reads as "none".
func orNull(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// jsonArray writes numbers as a JSON array ("[]" for none), in scratch
// (kept for the next call): the string is the one allocation, at its
// size.
func jsonArray(scratch *[]byte, xs []float64) string {
	buf := append((*scratch)[:0], '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			// per-run totals are sums of integer samples: exact as
			// integers, and far quicker to write than the shortest float
			buf = strconv.AppendInt(buf, int64(x), 10)
		} else {
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		}
	}
	*scratch = append(buf, ']')
	return string(*scratch)
}

// labelField interns the node labels into an enum field, in order of first
// appearance; frames that share a name share an enum text.
func labelField(t *tree.Tree) *data.Field {
	if f := enumField(FieldLabel, t, t.Label); f != nil {
		return f
	}
	return stringLabels(t)
}

func stringLabels(t *tree.Tree) *data.Field {
	labels := make([]string, t.Len())
	for i := range labels {
		labels[i] = t.Label(i)
	}
	return data.NewField(FieldLabel, nil, labels)
}
