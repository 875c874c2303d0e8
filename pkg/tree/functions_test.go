package tree

import (
	"fmt"
	"slices"
	"testing"
)

func TestFunctions(t *testing.T) {
	tests := []struct {
		name               string
		samples            []sample
		baseRuns, headRuns int
		opts               Options
		want               []string // "name self/total", diff: "name hs/ht bs/bt delta"
	}{{
		name:     "recursion counts once in total",
		samples:  []sample{h("A;B;A", 1, 0), h("A;B", 2, 1), h("A;A;A", 4, 2)},
		headRuns: 1,
		want:     []string{"A 5/7", "B 2/3"},
	}, {
		name:     "averaged over runs",
		samples:  []sample{h("main;f", 3, 0), h("main;f", 1, 0), h("main", 2, 0)},
		headRuns: 2,
		want:     []string{"f 2/2", "main 1/3"},
	}, {
		name:     "collapsed system frames disappear",
		samples:  []sample{h("main;sysA;sysB", 2, 0), h("main;sysC;cb", 1, 0)},
		headRuns: 1,
		opts:     Options{CollapseSystem: true},
		want:     []string{"sysA 2/2", "cb 1/1", "main 0/3", "sysC 0/1"},
	}, {
		name:     "diff sorted by change of total, then of self",
		samples:  []sample{bs("main;a", 4, 0), bs("main;b", 4, 0), h("main;a", 4, 0), h("main;b", 8, 0), h("main;c", 2, 0), h("main;a;c", 2, 0)},
		baseRuns: 1, headRuns: 1,
		want: []string{"main 0/16 0/8 1", "b 8/8 4/4 0.5", "c 4/4 0/0 0.5", "a 4/6 4/4 0.25"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBuilder(tt.samples, tt.baseRuns, tt.headRuns)
			if tt.opts.CollapseSystem {
				tt.opts.IsSystem = sys(b.frames)
			}
			var got []string
			for _, f := range b.Functions(tt.opts) {
				row := fmt.Sprintf("%s %g/%g", f.Name, f.HeadSelf, f.HeadTotal)
				if tt.baseRuns > 0 {
					row += fmt.Sprintf(" %g/%g %g", f.BaseSelf, f.BaseTotal, f.Delta)
				}
				got = append(got, row)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// A row is a function, never a name: two packages' stringify and Node's
// own are three rows, titled with their files; the sandwich of a title is
// that file's function, of a plain name every module's.
func TestFunctionsKeyByIdentity(t *testing.T) {
	fr := NewFrames()
	b := NewBuilder(fr)
	main := fr.Intern("main", "server.js")
	qs := fr.Intern("stringify", "/a/node_modules/qs/lib/stringify.js")
	other := fr.Intern("stringify", "/a/node_modules/.pnpm/fast-json@1.0.0/node_modules/fast-json/lib/stringify.js")
	node := fr.Intern("stringify", "node:internal/querystring")
	b.SetRuns(Head, 1)
	for i, f := range []uint32{qs, other, node} {
		b.Add(Head, b.Stack([]uint32{main, f}), int64(1+i), uint64(i))
	}
	var got []string
	for _, f := range b.Functions(Options{}) {
		got = append(got, fmt.Sprintf("%s %g", f.Name, f.HeadSelf))
	}
	want := []string{"stringify (node:internal/querystring) 3", "stringify (fast-json/lib/stringify.js) 2", "stringify (qs/lib/stringify.js) 1", "main 0"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	for function, total := range map[string]float64{"stringify (qs/lib/stringify.js)": 1, "stringify": 6} {
		tr := mustBuild(t, b, Options{Sandwich: Sandwich{Function: function}})
		if got := tr.Nodes[0].HeadTotal - tr.Nodes[0].HeadSelf; got != total {
			t.Errorf("sandwich of %q: %g through the function, want %g", function, got, total)
		}
	}
}
