package tree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/profile"
)

// sample is one run's value of a folded stack ("A;B;C") on a side.
type sample struct {
	side  Side
	stack string
	value int64
	first uint64
}

// newTestBuilder interns the samples' stacks in order; runs gives the
// run count of Base and Head.
func newTestBuilder(samples []sample, baseRuns, headRuns int) *Builder {
	b := NewBuilder(NewFrames())
	for _, s := range samples {
		b.Add(s.side, b.Stack(internFolded(b.frames, s.stack)), s.value, s.first)
	}
	b.SetRuns(Base, baseRuns)
	b.SetRuns(Head, headRuns)
	return b
}

func internFolded(f *Frames, folded string) []uint32 {
	var ids []uint32
	if folded == "" {
		return ids
	}
	for _, name := range strings.Split(folded, ";") {
		ids = append(ids, f.Intern(name, ""))
	}
	return ids
}

// outline renders a tree one node a line, indented by depth:
// "label head" or, for a diff, "label head/base".
func outline(t *Tree) []string {
	var lines []string
	for i, n := range t.Nodes {
		line := fmt.Sprintf("%s%s %g", strings.Repeat(" ", int(n.Depth)), t.Label(i), n.HeadTotal)
		if t.Diff {
			line += fmt.Sprintf("/%g", n.BaseTotal)
		}
		lines = append(lines, line)
	}
	return lines
}

func mustBuild(t *testing.T, b *Builder, o Options) *Tree {
	t.Helper()
	tr, err := b.Build(o)
	if err != nil {
		t.Fatalf("Build(%+v): %v", o, err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatalf("Build(%+v): %v\n%s", o, err, strings.Join(outline(tr), "\n"))
	}
	return tr
}

func ftoa(v float64) string { return fmt.Sprintf("%g", v) }

// addProfile adds every sample of one run's profile to a side without a
// run index (no statistics), as Add does.
func addProfile(b *Builder, side Side, p *profile.Profile) error {
	return b.addProfile(p, func(s StackID, value int64, first uint64) { b.Add(side, s, value, first) })
}
