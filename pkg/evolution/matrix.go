package evolution

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/flamediff/flamediff/pkg/stats"
)

// DefaultThreshold is the share of a build's total under which a component
// is hidden (when it stays under it in every build).
const DefaultThreshold = 0.02

// Options tune Analyze.
type Options struct {
	// Threshold in [0, 1]: components whose time share (time / build total)
	// is under it in every build are left out of every result. 0 keeps
	// everything; use DefaultThreshold for the paper's default.
	Threshold float64
	// Alpha is the false discovery rate of the cells' tests, in (0, 0.5];
	// 0 means stats.DefaultAlpha, as for the flame graph's nodes.
	Alpha float64
}

// Kind is a level of the component hierarchy.
type Kind string

// The levels of the hierarchy, outermost first.
const (
	Package Kind = "package"
	Class   Kind = "class"
	Method  Kind = "method"
)

// Row is one component in one build: a cell of the matrix.
type Row struct {
	Component string
	Kind      Kind
	// Parent is the enclosing class or package ("" at the top). A method's
	// parent is its class, or its package when it has no class.
	Parent    string
	Build     string
	BuildTime time.Time
	// Time is a method's inclusive time per run; for a class or package the
	// time of its most expensive method in that build (as in the paper).
	Time float64
	// Share is Time / the build's total (0 when the total is 0).
	Share float64
	// Change is (Time - previous) / previous against the immediately
	// preceding build; nil for the first build, when the component is
	// absent from the previous build, or when its time there was 0.
	Change *float64
	// Modified and Added count the build's modified and added methods
	// (from Build.Changes) that belong to the component; for a method 0 or 1.
	Modified, Added int
	// ModifiedMethods and AddedMethods name them, sorted: the change list
	// the panel shows on hover.
	ModifiedMethods, AddedMethods []string
	// PValue tests Change across runs (Welch's t of the build's run times
	// against the previous build's); QValue is Benjamini-Hochberg over the
	// tested cells of the matrix, and Significant is QValue < Alpha. All
	// nil where Change is, or a side has fewer than two runs' values.
	PValue, QValue *float64
	Significant    *bool
}

// EdgeStatus says whether a call edge appeared or disappeared.
type EdgeStatus string

// Edge statuses against the previous build.
const (
	EdgeAdded   EdgeStatus = "added"
	EdgeRemoved EdgeStatus = "removed"
)

// EdgeRow is a call edge added or removed by a build.
type EdgeRow struct {
	Build          string
	BuildTime      time.Time
	Caller, Callee string
	Status         EdgeStatus
}

// TimelineRow is a component's share of one time bucket of a build: its
// (per-kind, as in Row) time in the bucket divided by the bucket's total.
type TimelineRow struct {
	Build     string
	BuildTime time.Time
	Bucket    int
	Component string
	Kind      Kind
	Share     float64
}

// Result is the evolution matrix with its call edges and timeline.
type Result struct {
	// Matrix rows come component by component in hierarchy order (a
	// package, then its classes each followed by their methods, then its
	// class-less methods; siblings by peak share, largest first, then by
	// name), and build by build (input order) within a component. A
	// component has no row in a build where it is absent.
	Matrix []Row
	// Edges are the call edges that each build (from the second on) added
	// or removed against its predecessor, where the caller or the callee is
	// a visible method; by build, caller, callee.
	Edges []EdgeRow
	// Timeline has a row for each visible component present in a time
	// frame of a build with a non-zero total, by build, frame, then in
	// Matrix order.
	Timeline []TimelineRow
}

// component identifies a node of the hierarchy; names of different kinds
// may coincide (a Go package "main" and a C function "main").
type component struct {
	name string
	kind Kind
}

// hierarchy places frame names in the component tree, splitting each
// distinct name once.
type hierarchy struct {
	parent map[component]component // missing for top-level components
	split  map[string][]component  // frame → method, class, package (those that exist)
	shown  map[string][]component  // frame → those of split that are visible (times)
}

func (h *hierarchy) path(frame string) []component {
	if p, ok := h.split[frame]; ok {
		return p
	}
	pkg, class, _ := Split(frame)
	p := []component{{frame, Method}}
	if class != "" {
		p = append(p, component{class, Class})
	}
	if pkg != "" {
		p = append(p, component{pkg, Package})
	}
	for i := 0; i+1 < len(p); i++ {
		h.parent[p[i]] = p[i+1]
	}
	h.split[frame] = p
	return p
}

// times gives every visible component's time: a method's own, the
// maximum of its methods for a class or package. visible must be the
// same in every call on h (see shownPath).
func (h *hierarchy) times(functions map[string]float64, visible func(component) bool) map[component]float64 {
	out := map[component]float64{}
	for f, v := range functions {
		for _, c := range h.shownPath(f, visible) {
			if old, ok := out[c]; !ok || v > old {
				out[c] = v
			}
		}
	}
	return out
}

// shownPath is h.path(frame) without the components visible hides,
// worked out once per frame: a year of builds asks for each frame's in
// every build and time bucket.
func (h *hierarchy) shownPath(frame string, visible func(component) bool) []component {
	if p, ok := h.shown[frame]; ok {
		return p
	}
	var p []component
	for _, c := range h.path(frame) {
		if visible(c) {
			p = append(p, c)
		}
	}
	h.shown[frame] = p
	return p
}

// Analyze computes the evolution matrix of builds (in time order). Bad
// input (an empty or repeated build name, builds out of time order,
// negative or non-finite values, an invalid Changes or Threshold) is an
// error.
func Analyze(builds []Build, opts Options) (Result, error) {
	if !(opts.Threshold >= 0 && opts.Threshold <= 1) {
		return Result{}, fmt.Errorf("evolution: threshold %v outside [0, 1]", opts.Threshold)
	}
	if opts.Alpha == 0 {
		opts.Alpha = stats.DefaultAlpha
	}
	if !(opts.Alpha > 0 && opts.Alpha <= 0.5) {
		return Result{}, fmt.Errorf("evolution: alpha %v outside (0, 0.5]", opts.Alpha)
	}
	names := map[string]bool{}
	for i := range builds {
		b := &builds[i]
		if err := b.validate(); err != nil {
			return Result{}, err
		}
		if names[b.Name] {
			return Result{}, fmt.Errorf("evolution: build %q listed twice", b.Name)
		}
		names[b.Name] = true
		if i > 0 {
			prev := &builds[i-1]
			if !b.Time.IsZero() && !prev.Time.IsZero() && b.Time.Before(prev.Time) {
				return Result{}, fmt.Errorf("evolution: build %q (%s) listed after %q (%s): builds must be in time order",
					b.Name, b.Time.Format(time.RFC3339), prev.Name, prev.Time.Format(time.RFC3339))
			}
		}
	}

	h := newHierarchy()
	peak := h.peaks(builds)
	visible := func(c component) bool { return peak[c] >= opts.Threshold }
	order := h.order(peak, visible)
	// Each build's times of the visible components only: maps of every
	// component were most of a year of builds' memory.
	perBuild := make([]map[component]float64, len(builds))
	for i, b := range builds {
		perBuild[i] = h.times(b.Functions, visible)
	}

	matrix := matrixRows(builds, h, perBuild, order)
	testChanges(matrix, builds, h, opts.Alpha)
	return Result{
		Matrix:   matrix,
		Edges:    edgeRows(builds, func(f string) bool { return visible(component{f, Method}) }),
		Timeline: timelineRows(builds, h, order, visible),
	}, nil
}

func newHierarchy() *hierarchy {
	return &hierarchy{parent: map[component]component{}, split: map[string][]component{}, shown: map[string][]component{}}
}

// peaks gives every component's largest share of a build's total (a
// class's or package's share in a build is its largest method's).
func (h *hierarchy) peaks(builds []Build) map[component]float64 {
	// Each function's largest share first: the hierarchy is then walked
	// once per function, not once per function and build.
	top := map[string]float64{}
	for _, b := range builds {
		for f, v := range b.Functions {
			if s, old := share(v, b.Total), top[f]; s > old {
				top[f] = s
			} else if _, ok := top[f]; !ok {
				top[f] = s
			}
		}
	}
	peak := map[component]float64{}
	for f, s := range top {
		for _, c := range h.path(f) {
			if old, ok := peak[c]; !ok || s > old {
				peak[c] = s
			}
		}
	}
	return peak
}

// Shown reports, from the builds' Total and Functions, whether a frame
// can count in Analyze's result at threshold: whether the method, its
// class or its package reaches it in some build. The other frames may be
// left out of the builds' Timeline buckets (not out of Functions) without
// changing the result: a year of builds' buckets hold mostly them.
func Shown(builds []Build, threshold float64) func(frame string) bool {
	h := newHierarchy()
	peak := h.peaks(builds)
	return func(frame string) bool {
		return slices.ContainsFunc(h.path(frame), func(c component) bool { return peak[c] >= threshold })
	}
}

func share(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}

// order lists the visible components in hierarchy pre-order, siblings by
// peak share (largest first) then name.
func (h *hierarchy) order(peak map[component]float64, visible func(component) bool) []component {
	children := map[component][]component{}
	var roots []component
	for c := range peak {
		if !visible(c) {
			continue
		}
		if p, ok := h.parent[c]; ok {
			children[p] = append(children[p], c)
		} else {
			roots = append(roots, c)
		}
	}
	bySize := func(a, b component) int {
		return cmp.Or(cmp.Compare(peak[b], peak[a]), cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	}
	var out []component
	var walk func([]component)
	walk = func(cs []component) {
		slices.SortFunc(cs, bySize)
		for _, c := range cs {
			out = append(out, c)
			walk(children[c])
		}
	}
	walk(roots)
	return out
}

func matrixRows(builds []Build, h *hierarchy, perBuild []map[component]float64, order []component) []Row {
	modified := make([]map[component][]string, len(builds))
	added := make([]map[component][]string, len(builds))
	for i, b := range builds {
		modified[i], added[i] = h.changed(b.Changes.Modified), h.changed(b.Changes.Added)
	}
	var rows []Row
	for _, c := range order {
		for i, b := range builds {
			v, ok := perBuild[i][c]
			if !ok {
				continue
			}
			r := Row{
				Component: c.name, Kind: c.kind, Parent: h.parent[c].name,
				Build: b.Name, BuildTime: b.Time,
				Time: v, Share: share(v, b.Total),
				Modified: len(modified[i][c]), Added: len(added[i][c]),
				ModifiedMethods: modified[i][c], AddedMethods: added[i][c],
			}
			if i > 0 {
				if prev, ok := perBuild[i-1][c]; ok && prev != 0 {
					change := (v - prev) / prev
					r.Change = &change
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// changed lists the changed methods of each component (the method itself,
// its class and its package), in the order of methods (Changes keeps its
// lists sorted).
func (h *hierarchy) changed(methods []string) map[component][]string {
	n := map[component][]string{}
	for _, m := range methods {
		for _, c := range h.path(m) {
			n[c] = append(n[c], m)
		}
	}
	return n
}

func edgeRows(builds []Build, keep func(method string) bool) []EdgeRow {
	var rows []EdgeRow
	diff := func(b *Build, from, against map[Edge]struct{}, status EdgeStatus) {
		for e := range from {
			if _, ok := against[e]; !ok && (keep(e.Caller) || keep(e.Callee)) {
				rows = append(rows, EdgeRow{Build: b.Name, BuildTime: b.Time, Caller: e.Caller, Callee: e.Callee, Status: status})
			}
		}
	}
	for i := 1; i < len(builds); i++ {
		start := len(rows)
		diff(&builds[i], builds[i].Edges, builds[i-1].Edges, EdgeAdded)
		diff(&builds[i], builds[i-1].Edges, builds[i].Edges, EdgeRemoved)
		slices.SortFunc(rows[start:], func(a, b EdgeRow) int {
			return cmp.Or(cmp.Compare(a.Caller, b.Caller), cmp.Compare(a.Callee, b.Callee), cmp.Compare(a.Status, b.Status))
		})
	}
	return rows
}

func timelineRows(builds []Build, h *hierarchy, order []component, visible func(component) bool) []TimelineRow {
	var rows []TimelineRow
	for _, b := range builds {
		for f, tf := range b.Timeline {
			if tf.Total == 0 {
				continue
			}
			times := h.times(tf.Functions, visible)
			for _, c := range order {
				if v, ok := times[c]; ok {
					rows = append(rows, TimelineRow{Build: b.Name, BuildTime: b.Time, Bucket: f,
						Component: c.name, Kind: c.kind, Share: v / tf.Total})
				}
			}
		}
	}
	return rows
}
