package query

import (
	"errors"
	"fmt"
	"strings"

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

// ErrUnknownFocus means a query's focus path is not in its tree.
var ErrUnknownFocus = errors.New("focus path not found")

// focusError reports m's focus path as missing (Build's only error).
func focusError(m Model) error {
	return fmt.Errorf("%w: %s (an inverted view reads it leaf first)", ErrUnknownFocus, strings.Join(m.Focus, " > "))
}

// Render turns a filled engine into the frames of a flamegraph, diff or
// functions query. Both the data source (engine filled from ClickHouse) and
// `flamediff query` (engine filled from files) call it, so they answer alike.
// A focus path that the tree lacks is an error (ErrUnknownFocus); with
// variants, a variant that lacks it (an inverted or collapsed view of the
// path) comes whole, with a notice saying so.
func Render(b *tree.Builder, m Model, rules *sysframes.Rules, unit string) (data.Frames, error) {
	return RenderWith(b, m, rules, unit, nil)
}

// RenderWith is Render knowing the head build's modified functions
// (pkg/changes), which a diff's functions and culprits name. A diff adds
// its culprits (one frame per tree, after it; see culprits.go).
func RenderWith(b *tree.Builder, m Model, rules *sysframes.Rules, unit string, modified map[string]bool) (data.Frames, error) {
	o := TreeOptions(b, m, rules)
	d := newDiffNotes(b, m, o, modified)
	if m.QueryType == Functions {
		return d.functions(frames.Functions(b.Functions(o), m.IsDiff(), unit))
	}
	if !m.Variants {
		t, err := b.Build(o)
		if err != nil {
			return nil, focusError(m)
		}
		return d.add(data.Frames{frames.FlameGraph(t, unit)}, t, "", !o.Inverted && len(o.Focus) == 0)
	}
	out := make(data.Frames, 0, len(Variants))
	focused := false
	for _, v := range Variants {
		o.Inverted, o.CollapseSystem = v.Inverted, v.CollapseSystem
		t, err := b.Build(o)
		var notice string
		if err != nil {
			notice = "the focus path is not in this view, which shows the whole tree"
			whole := o
			whole.Focus = nil
			if t, err = b.Build(whole); err != nil {
				return nil, err
			}
		} else {
			focused = true
		}
		f := frames.FlameGraph(t, unit)
		f.Meta.Custom.(map[string]any)["variant"] = v.Name
		if notice != "" {
			f.Meta.Notices = append(f.Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: notice})
		}
		plain := !v.Inverted && v.CollapseSystem == m.CollapseSystem && (len(o.Focus) == 0 || notice != "")
		if out, err = d.add(append(out, f), t, v.Name, plain); err != nil {
			return nil, err
		}
	}
	if len(m.Focus) > 0 && !focused {
		return nil, focusError(m)
	}
	return out, nil
}

// TreeOptions returns the engine options of the view m asks for. The
// engine asks IsSystem once per distinct frame of a Build.
func TreeOptions(b *tree.Builder, m Model, rules *sysframes.Rules) tree.Options {
	o := tree.Options{Inverted: m.Inverted, CollapseSystem: m.CollapseSystem, MaxNodes: m.MaxNodes,
		Normalize: m.Normalization(), Focus: m.Focus}
	if m.Alpha != nil {
		o.Alpha = *m.Alpha
	}
	if rules != nil {
		o.IsSystem = rules.ForFrames(b.Frames())
	}
	return o
}
