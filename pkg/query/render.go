package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
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
// variants or a sandwich, a tree that lacks it (an inverted or collapsed
// view of the path, the other side of the sandwich) comes whole, with a
// notice saying so. A sandwich function no stack has is an error
// (ErrNoFunction); filters or only that leave no stack give an empty
// answer whose notice says why.
func Render(b *tree.Builder, m Model, rules *sysframes.Rules, unit string) (data.Frames, error) {
	return RenderWith(b, m, rules, unit, nil, nil)
}

// RenderWith is Render knowing the head build's modified functions
// (pkg/changes), which a diff's functions and culprits name. A diff adds
// its culprits (one frame per tree, after it; see culprits.go) under its
// verdict: v when the caller has judged it (the CLI's Judge, a sequential
// look's or at --min-base-share: every output of a call carries the same
// verdict), else NewJudge's, computed here.
func RenderWith(b *tree.Builder, m Model, rules *sysframes.Rules, unit string, modified map[string]bool, v *verdict.Verdict) (data.Frames, error) {
	o := TreeOptions(b, m, rules)
	d := newDiffNotes(b, m, o, modified)
	d.verdict = v
	if !m.Spec().Flame {
		rows := b.Functions(o)
		f := frames.Functions(rows, m.IsDiff(), unit)
		if len(rows) == 0 {
			frames.Warn(f, b.EmptyNotice(o))
		}
		return d.functions(f)
	}
	variants := []Variant{{"", m.Inverted, m.CollapseSystem}} // unnamed: the model's own
	if m.Variants {
		variants = Variants
	}
	var out data.Frames
	focused := false
	for _, part := range m.sandwichParts() {
		o.Sandwich = part
		for _, v := range variants {
			o.Inverted, o.CollapseSystem = v.Inverted, v.CollapseSystem
			t, err := b.Build(o)
			var notice string
			switch {
			case errors.Is(err, tree.ErrNoFunction):
				return nil, err
			case err != nil:
				notice = "the focus path is not in this view, which shows the whole tree"
				whole := o
				whole.Focus = nil
				if t, err = b.Build(whole); err != nil {
					return nil, err
				}
			default:
				focused = true
			}
			f := frames.Warn(frames.FlameGraph(t, unit), t.Notice)
			if v.Name != "" {
				frames.Variant(f, v.Name, notice)
			} else {
				frames.Warn(f, notice)
			}
			if name := sandwichPart(part); name != "" {
				frames.Sandwich(f, name, part.Function)
			}
			// The verdict reads the call tree as the query asks for it.
			plain := part.Function == "" && !v.Inverted && v.CollapseSystem == m.CollapseSystem && (len(o.Focus) == 0 || notice != "")
			if out, err = d.add(append(out, f), t, v.Name, plain); err != nil {
				return nil, err
			}
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
	m.aroundOptions(&o)
	if rules != nil {
		o.IsSystem = rules.ForFrames(b.Frames())
	}
	return o
}
