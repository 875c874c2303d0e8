package tree

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func mustFilter(t *testing.T, spec FilterSpec) *Filter {
	t.Helper()
	f, err := NewFilter(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNewFilterErrors(t *testing.T) {
	if f, err := NewFilter(FilterSpec{}); f != nil || err != nil {
		t.Errorf("empty spec: %v, %v; want no filter", f, err)
	}
	tests := []struct {
		spec          FilterSpec
		field, reason string
	}{
		{FilterSpec{Keep: "(a"}, "keep", "missing closing )"},
		{FilterSpec{Keep: "a", Drop: "[z-a]"}, "drop", "invalid character class range"},
		{FilterSpec{Hide: `\p{Nope}`}, "hideFrames", "invalid character class range"},
		{FilterSpec{ShowFrom: "a(?=b)"}, "showFrom", "invalid or unsupported Perl syntax"},
		{FilterSpec{Hide: strings.Repeat("a", MaxFilterBytes+1)}, "hideFrames", "more than 1024"},
	}
	for _, tc := range tests {
		_, err := NewFilter(tc.spec)
		var fe *FilterError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.reason) || !strings.HasPrefix(err.Error(), tc.field+": ") {
			t.Errorf("%+v: %v; want a %s error saying %q", tc.spec, err, tc.field, tc.reason)
		}
	}
}

// The filters on small trees: what each keeps, and pprof's order (Keep
// and Drop judge the stored stack; Hide, then ShowFrom edit it).
func TestFilters(t *testing.T) {
	samples := []sample{
		{Head, "main;http;handler;json", 4, 0},
		{Head, "main;http;handler;regexp;gc", 2, 1},
		{Head, "main;gc", 3, 2},
		{Head, "gc", 1, 3},
		{Base, "main;http;handler;json", 5, 0},
		{Base, "main;gc", 1, 2},
	}
	tests := []struct {
		spec FilterSpec
		want []string
	}{
		{FilterSpec{Keep: "^handler$"}, []string{"total 6/5", " main 6/5", "  http 6/5", "   handler 6/5", "    json 4/5", "    regexp 2/0", "     gc 2/0"}},
		{FilterSpec{Drop: "^gc$"}, []string{"total 4/5", " main 4/5", "  http 4/5", "   handler 4/5", "    json 4/5"}},
		// Keep and Drop both match the second stack: dropped.
		{FilterSpec{Keep: "regexp|json", Drop: "gc"}, []string{"total 4/5", " main 4/5", "  http 4/5", "   handler 4/5", "    json 4/5"}},
		// The stack of only gc loses its one frame: dropped.
		{FilterSpec{Hide: "^(gc|http)$"}, []string{"total 9/6", " main 9/6", "  handler 6/5", "   json 4/5", "   regexp 2/0"}},
		{FilterSpec{ShowFrom: "handler|gc"}, []string{"total 10/6", " handler 6/5", "  json 4/5", "  regexp 2/0", "   gc 2/0", " gc 4/1"}},
		// Keep judges the stored stack, before Hide removes its frame.
		{FilterSpec{Keep: "regexp", Hide: "regexp|main"}, []string{"total 2/0", " http 2/0", "  handler 2/0", "   gc 2/0"}},
	}
	b := newTestBuilder(samples, 1, 1)
	for _, tc := range tests {
		f := mustFilter(t, tc.spec)
		got := outline(mustBuild(t, b, Options{Filter: f}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n%s\nwant\n%s", f, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

func TestFilterLeavesNothing(t *testing.T) {
	b := newTestBuilder([]sample{{Head, "a;b", 1, 0}, {Base, "a;c", 1, 0}}, 1, 1)
	for _, tc := range []struct {
		spec   FilterSpec
		notice string
	}{
		{FilterSpec{Keep: "^zz$"}, `keep "^zz$" matches no frame`},
		{FilterSpec{ShowFrom: "zz"}, `showFrom "zz" matches no frame`},
		{FilterSpec{Drop: "a"}, `no stack is left after the filters drop="a"`},
		{FilterSpec{Hide: "."}, `no stack is left after the filters hideFrames="."`},
	} {
		o := Options{Filter: mustFilter(t, tc.spec)}
		tr := mustBuild(t, b, o)
		if tr.Len() != 1 || tr.Nodes[0].HeadTotal != 0 || !strings.Contains(tr.Notice, tc.notice) {
			t.Errorf("%+v: %d nodes, notice %q; want an empty tree saying %q", tc.spec, tr.Len(), tr.Notice, tc.notice)
		}
		if rows := b.Functions(o); len(rows) != 0 || b.EmptyNotice(o) != tr.Notice {
			t.Errorf("%+v: %d rows, notice %q", tc.spec, len(rows), b.EmptyNotice(o))
		}
	}
	if n := mustBuild(t, b, Options{Filter: mustFilter(t, FilterSpec{Keep: "b"})}).Notice; n != "" {
		t.Errorf("a filter that leaves stacks: notice %q", n)
	}
}

// Each filter's function table equals pprof's under the same flag. The
// expressions are anchored: pprof also matches file names, Flamediff
// frame names only.
func TestFiltersMatchPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	tests := []struct {
		spec  FilterSpec
		flags []string
	}{
		{FilterSpec{Keep: `^encoding/json\.`}, []string{`-focus=^encoding/json\.`}},
		{FilterSpec{Drop: `^runtime\.mallocgc$`}, []string{`-ignore=^runtime\.mallocgc$`}},
		{FilterSpec{Hide: `^runtime\.`}, []string{`-hide=^runtime\.`}},
		{FilterSpec{ShowFrom: `^regexp\.`}, []string{`-show_from=^regexp\.`}},
		{FilterSpec{Keep: `^main\.`, Drop: `^compress/`, Hide: `^runtime\.m`, ShowFrom: `^(regexp|encoding/json)\.`},
			[]string{`-focus=^main\.`, `-ignore=^compress/`, `-hide=^runtime\.m`, `-show_from=^(regexp|encoding/json)\.`}},
	}
	for _, tc := range tests {
		f := mustFilter(t, tc.spec)
		t.Run(f.String(), func(t *testing.T) {
			rows := pprofDiffTop(t, Options{Filter: f}, tc.flags...)
			if tc.spec.Hide == "" {
				return
			}
			hidden := regexp.MustCompile(tc.spec.Hide)
			for _, r := range rows {
				if hidden.MatchString(r.Name) {
					t.Errorf("%s: a hidden frame has a row", r.Name)
				}
			}
		})
	}
}
