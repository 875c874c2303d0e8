package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// diffNotes adds to the frames of a diff what the query layer knows of
// its change: the culprits of each tree, the diff's verdict (computed
// once, on the call tree without focus) and, for functions, their source
// and whether head modified them. A query that is no diff gets nothing.
type diffNotes struct {
	b        *tree.Builder
	o        tree.Options
	diff     bool
	modified map[string]bool
	verdict  *verdict.Verdict
}

func newDiffNotes(b *tree.Builder, m Model, o tree.Options, modified map[string]bool) *diffNotes {
	return &diffNotes{b: b, o: o, diff: m.IsDiff(), modified: modified}
}

// theVerdict computes the verdict once: from t when it is the call tree
// the verdict reads (plain: not inverted, no focus, collapsed as the
// query asks), else from a Build of its own.
func (d *diffNotes) theVerdict(t *tree.Tree, plain bool) (*verdict.Verdict, error) {
	switch {
	case d.verdict != nil:
	case plain:
		d.verdict = NewJudge(d.modified).verdictOf(t)
	default:
		v, err := NewJudge(d.modified).Verdict(d.b, d.o)
		if err != nil {
			return nil, err
		}
		d.verdict = v
	}
	return d.verdict, nil
}

// add appends the culprits of tree t (of variant, "" for a single tree;
// plain as theVerdict says) to out.
func (d *diffNotes) add(out data.Frames, t *tree.Tree, variant string, plain bool) (data.Frames, error) {
	if !d.diff {
		return out, nil
	}
	v, err := d.theVerdict(t, plain)
	if err != nil {
		return nil, err
	}
	return append(out, frames.Culprits(verdict.Culprits(t, d.modified), v, variant)), nil
}

// functions completes a functions frame: for a diff, each function's
// source and whether head modified it, then the culprits of its call
// tree.
func (d *diffNotes) functions(f *data.Frame) (data.Frames, error) {
	out := data.Frames{f}
	if !d.diff {
		return out, nil
	}
	fr := d.b.Frames()
	type function struct {
		src  tree.Source
		name string
	}
	byTitle := make(map[string]function, fr.Len()) // the rows' functions (tree.Function.Name)
	n := uint32(fr.Len())                          // #nosec G115 -- frame ids are uint32
	for id := range n {
		if _, ok := byTitle[fr.Title(id)]; !ok || byTitle[fr.Title(id)].src.File == "" {
			byTitle[fr.Title(id)] = function{fr.Source(id), fr.Name(id)}
		}
	}
	frames.AddSources(f, func(title string) (tree.Source, bool) { fn := byTitle[title]; return fn.src, d.modified[fn.name] })
	o := d.o
	o.Focus, o.Inverted = nil, false
	t, err := d.b.Build(o)
	if err != nil {
		return nil, err
	}
	return d.add(out, t, "", true)
}

// Modified returns the functions the changes of m's head builds name
// modified (nil for a query that is no diff).
func (e *Executor) Modified(ctx context.Context, m Model) (map[string]bool, error) {
	if !m.IsDiff() {
		return nil, nil
	}
	byBuild, err := e.Store.Changes(ctx, m.App, m.Head.Builds)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, c := range byBuild {
		for _, name := range c.Modified {
			out[name] = true
		}
	}
	return out, nil
}

// culpritLabel names the top regression culprit of the newest of builds
// against the build before it, for the label an alert carries when the
// newest build starts a regression (docs/ALERTING.md): "" when the diff
// has none (too few runs, or nothing significant).
func (e *Executor) culpritLabel(ctx context.Context, m Model, builds []buildRuns) (string, error) {
	n := len(builds)
	b, err := loader.Load(ctx, e.Store, e.Stacks, builds[n-1].runs, builds[n-2].runs)
	if err != nil {
		return "", err
	}
	diff := Model{QueryType: Diff, App: m.App, MaxNodes: DefaultMaxNodes}
	v, err := NewJudge(nil).Verdict(b, TreeOptions(b, diff, e.Rules))
	if err != nil || len(v.Regressions) == 0 {
		return "", err
	}
	return v.Regressions[0].Function, nil
}
