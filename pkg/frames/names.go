package frames

// Frame names: one per frame of each answer (docs/FRAMES.md,
// docs/QUERIES.md). The panel's models read the same names.
const (
	FrameFlameGraph   = "flamegraph"
	FrameFunctions    = "functions"
	FrameCulprits     = "culprits"
	FrameRuns         = "runs"
	FrameRunsSummary  = "runs_summary"
	FrameEvolution    = "evolution"
	FrameEdges        = "evolution_edges"
	FrameTimeline     = "evolution_timeline"
	FrameTimeSeries   = "timeseries"
	FrameChangePoints = "changepoints"
)

// Field names, each defined once whatever frames share it.
const (
	// flame graph
	FieldLevel         = "level"
	FieldLabel         = "label"
	FieldValue         = "value"
	FieldSelf          = "self"
	FieldValueRight    = "valueRight"
	FieldSelfRight     = "selfRight"
	FieldDelta         = "delta"
	FieldDeltaLow      = "deltaLow"
	FieldDeltaHigh     = "deltaHigh"
	FieldPValue        = "pValue"
	FieldQValue        = "qValue"
	FieldSignificant   = "significant"
	FieldHeadRuns      = "headRuns"
	FieldBaseRuns      = "baseRuns"
	FieldOtherCount    = "otherCount"
	FieldOtherMaxDelta = "otherMaxDelta"
	FieldPackage       = "package"
	// functions
	FieldFunction  = "function"
	FieldTotal     = "total"
	FieldSelfBase  = "selfBase"
	FieldTotalBase = "totalBase"
	FieldSelfHead  = "selfHead"
	FieldTotalHead = "totalHead"
	// runs
	FieldSide     = "side"
	FieldBuild    = "build"
	FieldRun      = "run"
	FieldTime     = "time"
	FieldDuration = "duration"
	FieldN        = "n"
	FieldMean     = "mean"
	FieldMedian   = "median"
	FieldStdDev   = "stddev"
	FieldChange   = "change"
	FieldCILow    = "ciLow"
	FieldCIHigh   = "ciHigh"
	// FieldMDC is the minimum detectable change of the run totals and
	// FieldRunsToDecide the runs a side that would detect the gate's
	// threshold (docs/STATISTICS.md).
	FieldMDC          = "mdc"
	FieldRunsToDecide = "runsToDecide"
	// evolution
	FieldComponent       = "component"
	FieldKind            = "kind"
	FieldParent          = "parent"
	FieldBuildTime       = "buildTime"
	FieldShare           = "share"
	FieldModified        = "modified"
	FieldAdded           = "added"
	FieldModifiedMethods = "modifiedMethods"
	FieldAddedMethods    = "addedMethods"
	FieldCaller          = "caller"
	FieldCallee          = "callee"
	FieldStatus          = "status"
	FieldBucket          = "bucket"
	// timeseries
	FieldRegression  = "regression"
	FieldChangePoint = "changepoint"
	// changepoints
	FieldPrevious = "previous"
	FieldMoved    = "moved"
	FieldCommit   = "commit"
	FieldBefore   = "before"
	FieldAfter    = "after"
	// culprits (also delta ... share, kind, regression, modified, moved
	// above); file, line and modified also end a functions frame with
	// sources (AddSources)
	FieldCulprit    = "culprit"
	FieldModule     = "module"
	FieldPath       = "path"
	FieldOtherSites = "otherSites"
	FieldReplaced   = "replaced"
	FieldFile       = "file"
	FieldLine       = "line"
)

// Keys of Meta.Custom.
const (
	MetaNormalize = "normalize"
	MetaAlpha     = "alpha"
	MetaHeadRuns  = "headRuns"
	MetaBaseRuns  = "baseRuns"
	MetaStats     = "stats"
	MetaVariant   = "variant"
	MetaVerdict   = "verdict"
	MetaBuilds    = "builds"
	// MetaSandwich is "callers" or "callees" on a sandwich's trees, and
	// MetaFunction the function they are of.
	MetaSandwich = "sandwich"
	MetaFunction = "function"
)

// UnitPercent is Grafana's unit of a share or relative change (0.05 is 5%).
const UnitPercent = "percentunit"

// units maps a profile's sample unit to a Grafana unit id; anything else is
// a plain count ("short").
var units = map[string]string{
	"nanoseconds":  "ns",
	"microseconds": "µs",
	"milliseconds": "ms",
	"seconds":      "s",
	"bytes":        "bytes",
}

// GrafanaUnit is the Grafana unit id for a sample unit ("nanoseconds" ->
// "ns", "bytes" -> "bytes", anything else -> "short").
func GrafanaUnit(unit string) string {
	if u, ok := units[unit]; ok {
		return u
	}
	return "short"
}

// LabelCulprit is the label of a timeseries' changepoint field naming the
// newest build's top regression culprit (docs/ALERTING.md).
const LabelCulprit = "culprit"
