package query

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Variant names one of the four trees a flame graph query can return; the
// panel's toggles switch between them without a new query.
type Variant struct {
	Name                     string
	Inverted, CollapseSystem bool
}

// Variants lists every variant, in the order frames are returned.
var Variants = []Variant{
	{"normal", false, false},
	{"inverted", true, false},
	{"collapsed", false, true},
	{"inverted+collapsed", true, true},
}

// Render turns a filled engine into the frames of a flamegraph, diff or
// functions query. Both the data source (engine filled from ClickHouse) and
// `flamediff query` (engine filled from files) call it, so they answer alike.
// The only error is a focus path that the data does not have.
func Render(b *tree.Builder, m Model, rules *sysframes.Rules, unit string) (data.Frames, error) {
	o := TreeOptions(b, m, rules)
	if m.QueryType == Functions {
		return data.Frames{frames.Functions(b.Functions(o), m.IsDiff(), unit)}, nil
	}
	if !m.Variants {
		t, err := b.Build(o)
		if err != nil {
			return nil, err
		}
		return data.Frames{frames.FlameGraph(t, unit)}, nil
	}
	out := make(data.Frames, 0, len(Variants))
	for _, v := range Variants {
		o.Inverted, o.CollapseSystem = v.Inverted, v.CollapseSystem
		t, err := b.Build(o)
		if err != nil {
			return nil, err
		}
		f := frames.FlameGraph(t, unit)
		f.Meta.Custom.(map[string]any)["variant"] = v.Name
		out = append(out, f)
	}
	return out, nil
}

// TreeOptions returns the engine options of the view m asks for. The
// engine asks IsSystem once per distinct frame of a Build.
func TreeOptions(b *tree.Builder, m Model, rules *sysframes.Rules) tree.Options {
	o := tree.Options{Inverted: m.Inverted, CollapseSystem: m.CollapseSystem, MaxNodes: m.MaxNodes}
	if rules != nil {
		o.IsSystem = rules.ForFrames(b.Frames())
	}
	return o
}
