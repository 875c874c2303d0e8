package evolution

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/pkg/changes"
)

const (
	mainFn  = "main.main"
	handle  = "example.com/app/server.(*Server).Handle"
	encode  = "example.com/app/codec.Encode"
	escape  = "example.com/app/codec.escape"
	query   = "example.com/app/db.(*Conn).Query"
	tiny    = "runtime.tiny"
	debugf  = "example.com/app/log.Debugf"
	codec   = "example.com/app/codec"
	server  = "example.com/app/server.Server"
	serverP = "example.com/app/server"
	db      = "example.com/app/db"
	conn    = "example.com/app/db.Conn"
)

type stack struct {
	frames string
	value  float64
}

func build(name string, day int, ch changes.Changes, stacks ...stack) Build {
	b := Build{Name: name, Time: time.Date(2026, 11, day, 0, 0, 0, 0, time.UTC), Changes: ch}
	for _, s := range stacks {
		b.AddStack(strings.Split(s.frames, ";"), s.value)
	}
	return b
}

// fourBuilds: build 2 modifies db.Query without effect, build 3 makes
// codec.Encode twice as slow (and adds codec.escape), build 4 drops a log
// call. runtime and log stay under 2% of the total throughout.
func fourBuilds() []Build {
	common := func(queryTime float64) []stack {
		return []stack{
			{mainFn + ";" + handle + ";" + query, queryTime},
			{mainFn + ";" + tiny, 1},
		}
	}
	logCall := stack{mainFn + ";" + debugf, 1.5}
	return []Build{
		build("1.0", 1, changes.Changes{}, append(common(50), stack{mainFn + ";" + handle + ";" + encode, 40}, logCall)...),
		build("1.1", 2, changes.Changes{Modified: []string{query}},
			append(common(50.5), stack{mainFn + ";" + handle + ";" + encode, 40}, logCall)...),
		build("1.2", 3, changes.Changes{Modified: []string{encode}, Added: []string{escape}},
			append(common(50.5), stack{mainFn + ";" + handle + ";" + encode, 60},
				stack{mainFn + ";" + handle + ";" + encode + ";" + escape, 20}, logCall)...),
		build("1.3", 4, changes.Changes{Removed: []string{debugf}},
			append(common(50.5), stack{mainFn + ";" + handle + ";" + encode, 60},
				stack{mainFn + ";" + handle + ";" + encode + ";" + escape, 20})...),
	}
}

func TestMatrixFourBuilds(t *testing.T) {
	builds := fourBuilds()
	res, err := Analyze(builds, Options{Threshold: DefaultThreshold})
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		time     float64
		change   float64 // NaN = null
		modified int
		added    int
	}
	nan := math.NaN()
	want := map[string][]cell{ // component → cells of builds 1.0 .. 1.3 (nil = absent)
		encode: {{40, nan, 0, 0}, {40, 0, 0, 0}, {80, 1, 1, 0}, {80, 0, 0, 0}},
		codec:  {{40, nan, 0, 0}, {40, 0, 0, 0}, {80, 1, 1, 1}, {80, 0, 0, 0}},
		escape: {{}, {}, {20, nan, 0, 1}, {20, 0, 0, 0}},
		query:  {{50, nan, 0, 0}, {50.5, 0.01, 1, 0}, {50.5, 0, 0, 0}, {50.5, 0, 0, 0}},
		conn:   {{50, nan, 0, 0}, {50.5, 0.01, 1, 0}, {50.5, 0, 0, 0}, {50.5, 0, 0, 0}},
		db:     {{50, nan, 0, 0}, {50.5, 0.01, 1, 0}, {50.5, 0, 0, 0}, {50.5, 0, 0, 0}},
		mainFn: {{92.5, nan, 0, 0}, {93, 0.5 / 92.5, 0, 0}, {133, 40 / 93.0, 0, 0}, {131.5, -1.5 / 133, 0, 0}},
	}
	// Handle's class and package hold the changed methods below them only
	// through calls, not by name: their counts stay with db and codec.
	want[server] = []cell{{90, nan, 0, 0}, {90.5, 0.5 / 90, 0, 0}, {130.5, 40 / 90.5, 0, 0}, {130.5, 0, 0, 0}}
	want[serverP] = want[server]
	want[handle] = want[server]
	want["main"] = want[mainFn]

	got := map[string][]Row{}
	for _, r := range res.Matrix {
		got[r.Component] = append(got[r.Component], r)
	}
	for comp, cells := range want {
		rows := got[comp]
		i := 0
		for b, c := range cells {
			if c == (cell{}) {
				continue
			}
			if i >= len(rows) || rows[i].Build != builds[b].Name {
				t.Errorf("%s: no row for build %s", comp, builds[b].Name)
				continue
			}
			r := rows[i]
			i++
			gotChange := nan
			if r.Change != nil {
				gotChange = *r.Change
			}
			if math.Abs(r.Time-c.time) > 1e-9 || !near(gotChange, c.change) || r.Modified != c.modified || r.Added != c.added {
				t.Errorf("%s @ %s: time %g change %g modified %d added %d; want %g %g %d %d",
					comp, r.Build, r.Time, gotChange, r.Modified, r.Added, c.time, c.change, c.modified, c.added)
			}
			if !r.BuildTime.Equal(builds[b].Time) || math.Abs(r.Share-r.Time/builds[b].Total) > 1e-12 {
				t.Errorf("%s @ %s: build time %v share %g", comp, r.Build, r.BuildTime, r.Share)
			}
		}
		if i != len(rows) {
			t.Errorf("%s: %d rows, want %d", comp, len(rows), i)
		}
	}
	for comp := range got {
		if _, ok := want[comp]; !ok {
			t.Errorf("unexpected component %q (hidden ones: runtime, log)", comp)
		}
	}

	// Hierarchy: kinds, parents and pre-order (bigger siblings first).
	var order []string
	for _, r := range res.Matrix {
		if len(order) == 0 || order[len(order)-1] != string(r.Kind)+" "+r.Component+" < "+r.Parent {
			order = append(order, string(r.Kind)+" "+r.Component+" < "+r.Parent)
		}
	}
	wantOrder := []string{
		"package main < ",
		"method main.main < main",
		"package example.com/app/server < ",
		"class example.com/app/server.Server < example.com/app/server",
		"method " + handle + " < " + server,
		"package " + codec + " < ",
		"method " + encode + " < " + codec,
		"method " + escape + " < " + codec,
		"package " + db + " < ",
		"class " + conn + " < " + db,
		"method " + query + " < " + conn,
	}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("order\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
	}

	wantEdges := []EdgeRow{
		{Build: "1.2", BuildTime: builds[2].Time, Caller: encode, Callee: escape, Status: EdgeAdded},
		{Build: "1.3", BuildTime: builds[3].Time, Caller: mainFn, Callee: debugf, Status: EdgeRemoved},
	}
	if !reflect.DeepEqual(res.Edges, wantEdges) {
		t.Errorf("edges %+v\nwant %+v", res.Edges, wantEdges)
	}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-9
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		threshold float64
		hidden    []string
		shown     []string
	}{
		{0, nil, []string{tiny, "runtime", debugf}},
		{DefaultThreshold, []string{tiny, "runtime", debugf, "example.com/app/log"}, []string{escape}},
		// escape peaks at 20/133 = 15%: hidden at 0.2, while its package
		// (as expensive as Encode) stays.
		{0.2, []string{escape, tiny}, []string{encode, codec}},
		{1, []string{encode, handle}, []string{mainFn, "main"}}, // main.main is the whole build
	}
	for _, tt := range tests {
		res, err := Analyze(fourBuilds(), Options{Threshold: tt.threshold})
		if err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		for _, r := range res.Matrix {
			present[r.Component] = true
		}
		for _, c := range tt.hidden {
			if present[c] {
				t.Errorf("threshold %g: %s shown", tt.threshold, c)
			}
		}
		for _, c := range tt.shown {
			if !present[c] {
				t.Errorf("threshold %g: %s hidden", tt.threshold, c)
			}
		}
	}
}

func TestAddStackInclusive(t *testing.T) {
	var b Build
	b.AddStack([]string{"a", "b", "a", "c"}, 5) // recursion: a counted once
	b.AddStack([]string{"a", "c"}, 2)
	want := map[string]float64{"a": 7, "b": 5, "c": 7}
	if !reflect.DeepEqual(b.Functions, want) || b.Total != 7 {
		t.Errorf("functions %v total %g, want %v 7", b.Functions, b.Total, want)
	}
	wantEdges := map[Edge]struct{}{{"a", "b"}: {}, {"b", "a"}: {}, {"a", "c"}: {}}
	if !reflect.DeepEqual(b.Edges, wantEdges) {
		t.Errorf("edges %v, want %v", b.Edges, wantEdges)
	}
}

func TestTimeline(t *testing.T) {
	b := Build{Name: "x"}
	b.AddStack([]string{"main.main", "pkg.(*T).A"}, 6)
	b.AddStack([]string{"main.main", "pkg.(*T).B"}, 4)
	b.AddTimed(0, []string{"main.main", "pkg.(*T).A"}, 1)
	b.AddTimed(0, []string{"main.main", "pkg.(*T).B"}, 3)
	b.AddTimed(1, []string{"main.main", "pkg.(*T).A"}, 5)
	b.AddTimed(1, []string{"main.main", "pkg.(*T).B"}, 1)
	b.AddTimed(3, []string{"main.main", "pkg.(*T).A"}, 0) // frame 2 stays empty: no rows
	b.AddTimed(-1, []string{"main.main"}, 9)              // ignored
	res, err := Analyze([]Build{b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range res.Timeline {
		got[string(r.Kind)+" "+r.Component+" @"+string(rune('0'+r.Bucket))] = r.Share
	}
	want := map[string]float64{
		"package main @0": 1, "method main.main @0": 1,
		"package pkg @0": 0.75, "class pkg.T @0": 0.75, "method pkg.(*T).A @0": 0.25, "method pkg.(*T).B @0": 0.75,
		"package main @1": 1, "method main.main @1": 1,
		"package pkg @1": 5.0 / 6, "class pkg.T @1": 5.0 / 6, "method pkg.(*T).A @1": 5.0 / 6, "method pkg.(*T).B @1": 1.0 / 6,
	}
	if len(got) != len(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-12 {
			t.Errorf("%s: share %g (present %v), want %g", k, g, ok, v)
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	ok := func(name string, day int) Build {
		return build(name, day, changes.Changes{}, stack{"a", 1})
	}
	bad := func(f func(*Build)) Build {
		b := ok("b", 2)
		f(&b)
		return b
	}
	tests := []struct {
		name    string
		builds  []Build
		opts    Options
		wantErr string
	}{
		{"threshold", []Build{ok("a", 1)}, Options{Threshold: 1.5}, "threshold"},
		{"nan threshold", []Build{ok("a", 1)}, Options{Threshold: math.NaN()}, "threshold"},
		{"empty name", []Build{ok("", 1)}, Options{}, "empty name"},
		{"duplicate", []Build{ok("a", 1), ok("b", 2), ok("a", 3)}, Options{}, `"a" listed twice`},
		{"time order", []Build{ok("a", 2), ok("b", 1)}, Options{}, "time order"},
		{"negative total", []Build{ok("a", 1), bad(func(b *Build) { b.Total = -1 })}, Options{}, "total -1"},
		{"nan function", []Build{bad(func(b *Build) { b.Functions["a"] = math.NaN() })}, Options{}, `function "a" has time NaN`},
		{"inf frame", []Build{bad(func(b *Build) { b.AddTimed(0, []string{"a"}, math.Inf(1)) })}, Options{}, "time frame 0"},
		{"bad changes", []Build{bad(func(b *Build) { b.Changes.Added = []string{""} })}, Options{}, "added[0] is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Analyze(tt.builds, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if res, err := Analyze(nil, Options{}); err != nil || len(res.Matrix)+len(res.Edges)+len(res.Timeline) != 0 {
		t.Errorf("no builds: %+v, %v", res, err)
	}
}

// BenchmarkAnalyze: 12 builds of 20,000 functions (500 packages of 8
// types of 5 methods) with 10 time frames each, default threshold.
func BenchmarkAnalyze(b *testing.B) {
	var builds []Build
	for v := range 12 {
		bd := Build{Name: "v" + strconv.Itoa(v), Time: time.Date(2026, 1, v+1, 0, 0, 0, 0, time.UTC),
			Functions: map[string]float64{}, Edges: map[Edge]struct{}{}, Timeline: make([]TimeBucket, 10)}
		for i := range bd.Timeline {
			bd.Timeline[i] = TimeBucket{Total: 1e6, Functions: map[string]float64{}}
		}
		for p := range 500 {
			for ty := range 8 {
				for m := range 5 {
					f := fmt.Sprintf("example.com/app/p%d.(*T%d).M%d", p, ty, m)
					t := float64((p*40+ty*5+m)%997+1) * float64(1+v%3)
					bd.Functions[f] = t
					bd.Timeline[m*2].Functions[f] = t / 10
					if (p+v)%5 != 0 {
						bd.Edges[Edge{"main.main", f}] = struct{}{}
					}
				}
			}
		}
		bd.Total = 1e6
		builds = append(builds, bd)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyze(builds, Options{Threshold: DefaultThreshold}); err != nil {
			b.Fatal(err)
		}
	}
}

// Shown keeps exactly the frames with a component Analyze shows: one
// whose peak share reaches the threshold in some build.
func TestShownAgreesWithAnalyze(t *testing.T) {
	names := []string{mainFn, handle, encode, escape, query,
		"example.com/app/codec.(*Writer).Flush", "example.com/app/db.Open", "runtime.mallocgc", "libc.so:memcpy"}
	for seed := range 20 {
		var builds []Build
		for b := range 4 {
			fns := map[string]float64{}
			total := 0.0
			for i, n := range names {
				if (seed+b+i)%5 == 0 {
					continue // absent from this build
				}
				v := float64((seed*7+b*3+i*11)%17) * 10
				fns[n] = v
				total = max(total, v)
			}
			builds = append(builds, Build{Name: fmt.Sprint("b", b), Time: time.Unix(int64(b), 0), Total: total * 1.5, Functions: fns})
		}
		for _, threshold := range []float64{0, 0.1, 0.3, 0.6, 0.9} {
			res, err := Analyze(builds, Options{Threshold: threshold})
			if err != nil {
				t.Fatal(err)
			}
			visible := map[component]bool{}
			for _, r := range res.Matrix {
				visible[component{r.Component, r.Kind}] = true
			}
			shown, h := Shown(builds, threshold), newHierarchy()
			for _, n := range names {
				want := false
				for _, c := range h.path(n) {
					want = want || visible[c]
				}
				present := false
				for _, b := range builds {
					_, ok := b.Functions[n]
					present = present || ok
				}
				if present && shown(n) != want {
					t.Errorf("seed %d, threshold %v: Shown(%s) = %v, Analyze shows a component of it: %v", seed, threshold, n, shown(n), want)
				}
			}
		}
	}
}
