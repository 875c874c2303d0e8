package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/tree"
)

// packageField names every node's package by the rule that groups the
// evolution matrix (evolution.Split), so that the panel's colour by package
// and the matrix agree: "java/lang/Thread.run" is "java/lang" in both ("" where
// the naming convention has none). It is nil past maxEnumLabels packages.
func packageField(t *tree.Tree) *data.Field {
	return enumField(FieldPackage, t, func(i int) string {
		pkg, _, _ := evolution.Split(t.Label(i))
		return pkg
	})
}

// enumField interns text(i) of every node into an enum field, in order of
// first appearance, computing it once per distinct frame; nil when there
// are more than maxEnumLabels distinct texts.
func enumField(name string, t *tree.Tree, text func(i int) string) *data.Field {
	byFrame := make(map[uint32]data.EnumItemIndex)
	byText := make(map[string]data.EnumItemIndex)
	var texts []string
	values := make([]data.EnumItemIndex, t.Len())
	for i, nd := range t.Nodes {
		idx, ok := byFrame[nd.Frame]
		if !ok {
			s := text(i)
			if idx, ok = byText[s]; !ok {
				if len(texts) == maxEnumLabels {
					return nil
				}
				idx = data.EnumItemIndex(len(texts)) // #nosec G115 -- len(texts) < maxEnumLabels = 1<<16 here, the enum index's range
				byText[s] = idx
				texts = append(texts, s)
			}
			byFrame[nd.Frame] = idx
		}
		values[i] = idx
	}
	return data.NewField(name, nil, values).SetConfig(&data.FieldConfig{
		TypeConfig: &data.FieldTypeConfig{Enum: &data.EnumFieldConfig{Text: texts}},
	})
}
