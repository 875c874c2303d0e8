package frames

import (
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

func runsOf(build string, totals ...int64) []Run {
	var out []Run
	for i, v := range totals {
		out = append(out, Run{Build: build, Run: string(rune('a' + i)), Total: v,
			Start: time.Unix(int64(i), 0), Duration: time.Duration(v) * time.Millisecond})
	}
	return out
}

func field(t *testing.T, f *data.Frame, name string) *data.Field {
	t.Helper()
	fl, _ := f.FieldByName(name)
	if fl == nil {
		t.Fatalf("frame %s lacks %s", f.Name, name)
	}
	return fl
}

func TestRuns(t *testing.T) {
	base, head := runsOf("1.0", 100, 110, 90, 105, 95), runsOf("2.0", 150, 160, 140, 155, 145)
	frames := Runs(head, base, "nanoseconds")
	runs, summary := frames[0], frames[1]
	if n, _ := runs.RowLen(); n != 10 {
		t.Fatalf("%d run rows", n)
	}
	if s := field(t, runs, "side"); s.At(0) != "base" || s.At(9) != "head" {
		t.Errorf("sides %v..%v", s.At(0), s.At(9))
	}
	if d := field(t, runs, "duration").At(0).(float64); d != 0.1 {
		t.Errorf("duration %v s, want 0.1", d)
	}
	if u := field(t, runs, "total").Config.Unit; u != "ns" {
		t.Errorf("unit %q", u)
	}
	mean := field(t, summary, "mean")
	if b, h := *mean.At(0).(*float64), *mean.At(1).(*float64); b != 100 || h != 150 {
		t.Errorf("means %v %v", b, h)
	}
	change := *field(t, summary, "change").At(0).(*float64)
	lo, hi := *field(t, summary, "ciLow").At(0).(*float64), *field(t, summary, "ciHigh").At(0).(*float64)
	p := *field(t, summary, "pValue").At(1).(*float64)
	if change != 0.5 || !(lo < 0.5 && 0.5 < hi && lo > 0) {
		t.Errorf("change %v CI [%v, %v]", change, lo, hi)
	}
	// Five runs each, every head above every base: the exact two-sided
	// Mann-Whitney p is 2/C(10,5) = 2/252.
	if math.Abs(p-2.0/252) > 1e-9 || !*field(t, summary, "significant").At(0).(*bool) {
		t.Errorf("p %v, significant %v", p, field(t, summary, "significant").At(0))
	}
	// What the runs can see: sd 7.9 on a mean of 100 over 5 runs a side is
	// an SE of 5% of the base; t(0.975, 8) + t(0.8, 8) = 2.306 + 0.889.
	mdc, decide := *field(t, summary, "mdc").At(0).(*float64), *field(t, summary, "runsToDecide").At(1).(*int64)
	if se := math.Sqrt(2*62.5/5) / 100; math.Abs(mdc-3.195*se) > 0.002 || decide < 500 {
		t.Errorf("mdc %v (want %v), runs to decide 1%%: %v", mdc, 3.195*se, decide)
	}
}

func TestRunsFramesHeadOnly(t *testing.T) {
	frames := Runs(runsOf("2.0", 7), nil, "count")
	summary := frames[1]
	if n, _ := summary.RowLen(); n != 1 || field(t, summary, "side").At(0) != "head" {
		t.Fatalf("head-only summary rows: %v", summary)
	}
	// One run: no spread, no comparison; nulls rather than NaN.
	if field(t, summary, "stddev").At(0).(*float64) != nil || field(t, summary, "change").At(0).(*float64) != nil ||
		field(t, summary, "significant").At(0).(*bool) != nil {
		t.Error("undefined statistics must be null")
	}
}
