package frames

import (
	"encoding/json"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// Culprits returns the culprits of one tree of a diff (docs/CULPRITS.md)
// as a frame named "culprits", largest change first: culprit (the
// function's name: a field named "function" would make the panel take the
// frame for a functions table), module,
// kind (new, removed, self, spread, replaced), path and otherSites (JSON
// arrays of call paths, root first), callee, replaced (the callee a
// replaced culprit no longer calls), delta, deltaLow, deltaHigh, pValue,
// qValue and share (nullable), regression, file, line, modified and moved
// (found in work that moved: the delta is the cost change inside it).
// Meta.Custom holds "variant" (the tree's, "" for a single one) and
// "verdict", the diff's verdict (pkg/verdict), the same on every culprits
// frame of an answer.
func Culprits(cs []verdict.Culprit, v *verdict.Verdict, variant string) *data.Frame {
	n := len(cs)
	str := func(get func(c verdict.Culprit) string) []string {
		out := make([]string, n)
		for i, c := range cs {
			out[i] = get(c)
		}
		return out
	}
	num := func(get func(c verdict.Culprit) verdict.Number) []*float64 {
		out := make([]*float64, n)
		for i, c := range cs {
			out[i] = orNull(float64(get(c)))
		}
		return out
	}
	raw := func(get func(c verdict.Culprit) any) []json.RawMessage {
		out := make([]json.RawMessage, n)
		for i, c := range cs {
			out[i], _ = json.Marshal(get(c)) // strings only: cannot fail
		}
		return out
	}
	regression, modified, moved, line := make([]bool, n), make([]bool, n), make([]bool, n), make([]int64, n)
	for i, c := range cs {
		regression[i], modified[i], moved[i], line[i] = c.Regression, c.Modified, c.Moved, c.Line
	}
	share := &data.FieldConfig{Unit: UnitPercent}
	f := data.NewFrame(FrameCulprits,
		data.NewField(FieldCulprit, nil, str(func(c verdict.Culprit) string { return c.Function })),
		data.NewField(FieldModule, nil, str(func(c verdict.Culprit) string { return c.Module })),
		data.NewField(FieldKind, nil, str(func(c verdict.Culprit) string { return c.Kind })),
		data.NewField(FieldPath, nil, raw(func(c verdict.Culprit) any { return nonNil(c.Path) })),
		data.NewField(FieldOtherSites, nil, raw(func(c verdict.Culprit) any { return nonNil(c.OtherSites) })),
		data.NewField(FieldCallee, nil, str(func(c verdict.Culprit) string { return c.Callee })),
		data.NewField(FieldReplaced, nil, str(func(c verdict.Culprit) string { return c.Replaced })),
		data.NewField(FieldDelta, nil, num(func(c verdict.Culprit) verdict.Number { return c.Delta })).SetConfig(share),
		data.NewField(FieldDeltaLow, nil, num(func(c verdict.Culprit) verdict.Number { return c.DeltaLow })).SetConfig(share),
		data.NewField(FieldDeltaHigh, nil, num(func(c verdict.Culprit) verdict.Number { return c.DeltaHigh })).SetConfig(share),
		data.NewField(FieldPValue, nil, num(func(c verdict.Culprit) verdict.Number { return c.PValue })),
		data.NewField(FieldQValue, nil, num(func(c verdict.Culprit) verdict.Number { return c.QValue })),
		data.NewField(FieldShare, nil, num(func(c verdict.Culprit) verdict.Number { return c.Share })).SetConfig(share),
		data.NewField(FieldRegression, nil, regression),
		data.NewField(FieldFile, nil, str(func(c verdict.Culprit) string { return c.File })),
		data.NewField(FieldLine, nil, line),
		data.NewField(FieldModified, nil, modified),
		data.NewField(FieldMoved, nil, moved),
	)
	f.Meta = &data.FrameMeta{Custom: map[string]any{MetaVariant: variant, MetaVerdict: v}}
	return f
}

// nonNil makes a nil slice an empty one (a JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// AddSources adds to a functions frame, after its fields, each function's
// file and line (source: "" and 0 when unknown) and whether the head
// build modified it.
func AddSources(f *data.Frame, source func(name string) (src tree.Source, modified bool)) {
	names := f.Fields[0]
	n := names.Len()
	files, lines, modified := make([]string, n), make([]int64, n), make([]bool, n)
	for i := range n {
		src, mod := source(names.At(i).(string))
		files[i], lines[i], modified[i] = src.File, src.Line, mod
	}
	f.Fields = append(f.Fields, data.NewField(FieldFile, nil, files), data.NewField(FieldLine, nil, lines), data.NewField(FieldModified, nil, modified))
}
