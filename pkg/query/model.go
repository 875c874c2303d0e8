// Package query holds the query model shared by the data source and the CLI,
// and turns a filled tree engine into the frames each query type returns.
package query

import (
	"encoding/json"
	"fmt"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/stats"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Type is a query type (docs/QUERIES.md).
type Type string

// The query types.
const (
	FlameGraph Type = "flamegraph"
	Diff       Type = "diff"
	Functions  Type = "functions"
	Runs       Type = "runs"
	Evolution  Type = "evolution"
	TimeSeries Type = "timeseries"
	// ChangePoints lists the change points of the total and of every
	// function over builds (docs/CHANGEPOINTS.md).
	ChangePoints Type = "changepoints"
)

// Limits on what a query may ask for.
const (
	DefaultMaxNodes = 20_000
	// MaxMaxNodes bounds maxNodes so that a hostile query cannot ask for a
	// frame larger than a browser can hold.
	MaxMaxNodes      = 2_000_000
	DefaultThreshold = 0.02
	DefaultMinShare  = 0.01
	// MaxAlpha bounds alpha: a false-discovery rate above one half calls
	// noise a change.
	MaxAlpha          = 0.5
	maxNameBytes      = 1024
	maxNamesPerSelect = 10_000
)

// Selection picks runs: every run of Builds, or only the named Runs.
type Selection struct {
	Builds []string `json:"builds"`
	Runs   []string `json:"runs"`
}

// Model is the JSON model of a Grafana query (the fields Grafana itself adds,
// such as refId and datasource, are ignored).
type Model struct {
	QueryType      Type      `json:"queryType"`
	App            string    `json:"app"`
	ProfileType    string    `json:"profileType"`
	Head           Selection `json:"head"`
	Base           Selection `json:"base"`
	Builds         []string  `json:"builds"`
	Inverted       bool      `json:"inverted"`
	CollapseSystem bool      `json:"collapseSystem"`
	MaxNodes       int       `json:"maxNodes"`
	// Variants asks flamegraph and diff queries for all four trees (normal,
	// inverted, collapsed, inverted+collapsed) so the panel toggles without
	// a new query.
	Variants bool `json:"variants"`
	// Function narrows a timeseries to one function's total.
	Function string `json:"function"`
	// Baseline makes a timeseries relative to that build's value.
	Baseline string `json:"baseline"`
	// Field narrows a timeseries to one of its numeric fields (value,
	// change, pValue, significant, regression): Grafana Alerting makes a
	// series of every numeric field, and a rule wants exactly one.
	Field string `json:"field"`
	// Threshold hides evolution components under this share of the total.
	Threshold *float64 `json:"threshold"`
	// Normalize is what a diff compares: "absolute" values (the default)
	// or "relative" shares of each side's total.
	Normalize string `json:"normalize"`
	// Alpha is the false-discovery rate under which a diff's node or
	// function is significant (default stats.DefaultAlpha).
	Alpha *float64 `json:"alpha"`
	// Focus is a path of labels from the root's child down: flamegraph and
	// diff queries return that subtree at full detail.
	Focus []string `json:"focus"`
	// MinShare is the share of a build's total a function must reach in
	// some build for changepoints to follow it; MinChange the smallest
	// relative change a significant change point has (|after/before - 1|;
	// a diff's verdict has a threshold of another kind, Judge.MinBaseShare).
	MinShare  *float64 `json:"minShare"`
	MinChange *float64 `json:"minChange"`
	// Sandwich names a function: flamegraph and diff queries answer its
	// callers tree and its callees tree instead of the whole tree.
	Sandwich string `json:"sandwich"`
	// Keep, Drop, Hide and ShowFrom are Go regular expressions on frame
	// names, pprof's -focus, -ignore, -hide and -show_from, applied before
	// the statistics (tree.FilterSpec). Hide is "hideFrames": Grafana's
	// own "hide" hides a query.
	Keep     string `json:"keep"`
	Drop     string `json:"drop"`
	Hide     string `json:"hideFrames"`
	ShowFrom string `json:"showFrom"`
	// Only is "new" (the stacks new in head) or "removed" (the stacks gone
	// from it); "" keeps every stack.
	Only string `json:"only"`

	filter *tree.Filter // Keep..ShowFrom, compiled by Parse
}

// Parse decodes and validates a query model, filling defaults.
func Parse(raw []byte) (Model, error) {
	var m Model
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("invalid query JSON: %w", err)
	}
	return m, m.Validate()
}

// Validate checks a query model built in Go (the CLI's flags, MCP's
// tool arguments) as Parse checks one sent as JSON, and fills the same
// defaults; a model it accepted passes again unchanged.
func (m *Model) Validate() error {
	spec, known := Lookup(m.QueryType)
	switch {
	case m.QueryType == "":
		return fmt.Errorf("queryType is required (one of %s)", typeList(""))
	case !known:
		return fmt.Errorf("unknown queryType %q (want %s)", m.QueryType, typeList(" or "))
	}
	if m.App == "" {
		return fmt.Errorf("app is required")
	}
	if err := checkNames("app", []string{m.App, m.ProfileType, m.Function, m.Baseline}); err != nil {
		return err
	}
	for name, list := range map[string][]string{
		"head.builds": m.Head.Builds, "head.runs": m.Head.Runs,
		"base.builds": m.Base.Builds, "base.runs": m.Base.Runs, "builds": m.Builds, "focus": m.Focus,
	} {
		if err := checkNames(name, list); err != nil {
			return err
		}
	}
	if spec.Head == Required && len(m.Head.Builds) == 0 {
		return fmt.Errorf("%s query needs head.builds", m.QueryType)
	}
	if spec.Base == Required && len(m.Base.Builds) == 0 {
		return fmt.Errorf("%s query needs base.builds", m.QueryType)
	}
	switch m.Field {
	case "", frames.FieldValue, frames.FieldChangePoint:
	case frames.FieldChange, frames.FieldPValue, frames.FieldSignificant, frames.FieldRegression:
		if m.Baseline == "" {
			return fmt.Errorf("field %q needs a baseline (a build or %q)", m.Field, "previous")
		}
	default:
		return fmt.Errorf("unknown field %q (want value, change, pValue, significant, regression or changepoint)", m.Field)
	}
	switch {
	case m.MaxNodes == 0:
		m.MaxNodes = DefaultMaxNodes
	case m.MaxNodes < 0:
		return fmt.Errorf("maxNodes must be positive, not %d", m.MaxNodes)
	case m.MaxNodes > MaxMaxNodes:
		m.MaxNodes = MaxMaxNodes
	}
	for _, o := range []struct {
		name  string
		value **float64
		def   float64
	}{
		{"threshold", &m.Threshold, DefaultThreshold},
		{"minShare", &m.MinShare, DefaultMinShare},
		{"minChange", &m.MinChange, stats.DefaultMinChange},
	} {
		if *o.value == nil {
			def := o.def
			*o.value = &def
		} else if v := **o.value; v < 0 || v >= 1 {
			return fmt.Errorf("%s must be a share in [0, 1), not %v", o.name, v)
		}
	}
	switch m.Normalize {
	case "":
		m.Normalize = tree.Absolute.String()
	case tree.Absolute.String(), tree.Relative.String():
	default:
		return fmt.Errorf("normalize must be absolute or relative, not %q", m.Normalize)
	}
	if m.Alpha == nil {
		a := stats.DefaultAlpha
		m.Alpha = &a
	} else if !(*m.Alpha > 0 && *m.Alpha <= MaxAlpha) {
		return fmt.Errorf("alpha must be a false-discovery rate in (0, %v], not %v", MaxAlpha, *m.Alpha)
	}
	return m.validateAround()
}

// Normalization is the engine's form of Normalize.
func (m Model) Normalization() tree.Normalization {
	if m.Normalize == tree.Relative.String() {
		return tree.Relative
	}
	return tree.Absolute
}

// IsTree reports whether the query is answered by the tree engine
// (flamegraph, diff, functions).
func (m Model) IsTree() bool { return m.Spec().Tree }

// IsDiff reports whether the query compares head against base: its type
// needs base runs, or may have them and has.
func (m Model) IsDiff() bool {
	switch m.Spec().Base {
	case Required:
		return true
	case Optional:
		return len(m.Base.Builds) > 0
	}
	return false
}

// checkNames rejects names that cannot be an app, build, run or function:
// bind parameters make any text safe for ClickHouse, so only shape is checked.
func checkNames(field string, names []string) error {
	if len(names) > maxNamesPerSelect {
		return fmt.Errorf("%s: too many names (%d, at most %d)", field, len(names), maxNamesPerSelect)
	}
	for _, n := range names {
		if n == "" && field != "app" {
			return fmt.Errorf("%s: empty name (an unset template variable?)", field)
		}
		if len(n) > maxNameBytes {
			return fmt.Errorf("%s: name longer than %d bytes", field, maxNameBytes)
		}
	}
	return nil
}
