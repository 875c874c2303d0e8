package ingest

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/pkg/profile"
)

// samples lists a profile's samples as "stack value @time", in order.
func spanSamples(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Samples {
		out = append(out, fmt.Sprintf("%s %d @%d", strings.Join(p.Names(s.Stack), ";"), s.Value, s.Time))
	}
	return out
}

func svc(spans ...otlptest.Span) otlptest.Resource {
	return otlptest.Resource{Attrs: otlptest.Service("s", "v1"), Spans: spans}
}

func TestSpanRunsExact(t *testing.T) {
	tests := []struct {
		name string
		td   ptrace.Traces
		want []string
		sum  TraceSummary
	}{
		{"nested", otlptest.Traces(svc(
			otlptest.Span{Trace: 1, ID: 1, Name: "A", Start: 0, End: 100},
			otlptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "B", Start: 10, End: 60},
			otlptest.Span{Trace: 1, ID: 3, Parent: 2, Name: "C", Start: 20, End: 30},
			otlptest.Span{Trace: 1, ID: 4, Parent: 1, Name: "D", Start: 70, End: 90},
		)), []string{"s: A 30 @0", "s: A;s: B 40 @10", "s: A;s: B;s: C 10 @20", "s: A;s: D 20 @70"},
			TraceSummary{Spans: 4, Traces: 1}},
		{"overlapping async children", otlptest.Traces(svc(
			otlptest.Span{Trace: 1, ID: 1, Name: "A", Start: 0, End: 100},
			otlptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "B", Start: 10, End: 60},
			otlptest.Span{Trace: 1, ID: 3, Parent: 1, Name: "C", Start: 40, End: 80},
			otlptest.Span{Trace: 1, ID: 4, Parent: 1, Name: "B", Start: 45, End: 55},
		)), []string{"s: A 30 @0", "s: A;s: B 50 @10", "s: A;s: C 40 @40", "s: A;s: B 10 @45"},
			TraceSummary{Spans: 4, Traces: 1}},
		{"missing parent", otlptest.Traces(svc(
			otlptest.Span{Trace: 1, ID: 1, Name: "A", Start: 0, End: 10},
			otlptest.Span{Trace: 1, ID: 5, Parent: 99, Name: "E", Start: 5, End: 25},
			otlptest.Span{Trace: 1, ID: 6, Parent: 5, Name: "F", Start: 10, End: 15},
		)), []string{"s: A 10 @0", "[missing parent];s: E 15 @5", "[missing parent];s: E;s: F 5 @10"},
			TraceSummary{Spans: 3, Traces: 1, Orphans: 1}},
		{"clock skew", otlptest.Traces(svc(
			otlptest.Span{Trace: 1, ID: 1, Name: "A", Start: 100, End: 200},
			otlptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "early", Start: 50, End: 80},
			otlptest.Span{Trace: 1, ID: 3, Parent: 1, Name: "late", Start: 150, End: 250},
			otlptest.Span{Trace: 1, ID: 4, Parent: 3, Name: "later", Start: 190, End: 260},
		)), []string{"s: A 50 @50", "s: A;s: late 40 @100", "s: A;s: late;s: later 10 @140"},
			TraceSummary{Spans: 4, Traces: 1, Clipped: 3}},
		{"services and duplicates", otlptest.Traces(
			otlptest.Resource{Attrs: otlptest.Service("api", "2.0"), Spans: []otlptest.Span{
				{Trace: 1, ID: 1, Name: "GET /x", Start: 0, End: 100}}},
			otlptest.Resource{Attrs: otlptest.Service("db", "9"), Spans: []otlptest.Span{
				{Trace: 1, ID: 2, Parent: 1, Name: "query", Start: 20, End: 50},
				{Trace: 1, ID: 2, Parent: 1, Name: "query", Start: 20, End: 50}}},
		), []string{"api: GET /x 70 @0", "api: GET /x;db: query 30 @20"},
			TraceSummary{Spans: 2, Traces: 1, Duplicates: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, sum, err := TraceRuns(RunOptions{}, "t", tt.td)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			r := runs[0]
			if id := otlptest.TraceID(1); r.Run != hex.EncodeToString(id[:]) || r.App == "" || r.Build == "" {
				t.Errorf("run %s/%s/%s", r.App, r.Build, r.Run)
			}
			if got := spanSamples(r.Profile); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if sum != tt.sum {
				t.Errorf("summary %+v, want %+v", sum, tt.sum)
			}
			if p := r.Profile; p.SampleType != "wall" || p.Unit != "nanoseconds" {
				t.Errorf("sample type %s/%s", p.SampleType, p.Unit)
			}
		})
	}
}

// TestSpanRunsGrouped: traces that carry one run attribute form one run,
// each span's first-seen its offset in its own trace.
func TestSpanRunsGrouped(t *testing.T) {
	run := map[string]string{"flamediff.run": "r7"}
	td := otlptest.Traces(
		otlptest.Resource{Attrs: otlptest.Service("s", "v1"), Spans: []otlptest.Span{
			{Trace: 1, ID: 1, Name: "login", Start: 1000, End: 1030, Attrs: run},
			{Trace: 2, ID: 2, Name: "search", Start: 5000, End: 5050, Attrs: run},
			{Trace: 3, ID: 3, Name: "other", Start: 0, End: 5},
		}})
	runs, _, err := TraceRuns(RunOptions{RunAttribute: "flamediff.run"}, "t", td)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Run != "r7" {
		t.Fatalf("runs %+v", runs)
	}
	if got, want := spanSamples(runs[0].Profile), []string{"s: login 30 @0", "s: search 50 @0"}; !slices.Equal(got, want) {
		t.Errorf("samples %q, want %q", got, want)
	}
	if _, _, err := TraceRuns(RunOptions{}, "t", otlptest.Traces(otlptest.Resource{Spans: []otlptest.Span{{Trace: 1, ID: 1, Name: "x", End: 1}}})); err == nil ||
		!strings.Contains(err.Error(), "service.name") {
		t.Errorf("a trace without service.name: %v", err)
	}
}

// TestSpanFramesCarryCodePosition: code.file.path and code.line.number
// (or the older code.filepath and code.lineno) give a frame's file:line.
func TestSpanFramesCarryCodePosition(t *testing.T) {
	td := otlptest.Traces(svc(
		otlptest.Span{Trace: 1, ID: 1, Name: "A", End: 10, Attrs: map[string]string{"code.file.path": "a.go"},
			IntAttrs: map[string]int64{"code.line.number": 12}},
		otlptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "B", End: 5, Attrs: map[string]string{"code.filepath": "b.py"},
			IntAttrs: map[string]int64{"code.lineno": 7}},
	))
	runs, _, err := TraceRuns(RunOptions{}, "t", td)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range runs[0].Profile.Frames {
		got = append(got, fmt.Sprintf("%s %s:%d", f.Name, f.File, f.Line))
	}
	if want := []string{"s: A a.go:12", "s: B b.py:7"}; !slices.Equal(got, want) {
		t.Errorf("frames %q, want %q", got, want)
	}
}

// TestSpanRunsOfTwoApps: files, like the receiver, keep run "1" of two
// apps apart; TracesOf gives back what SpansOf read.
func TestSpanRunsOfTwoApps(t *testing.T) {
	a, b := otlptest.Service("A", "b1"), otlptest.Service("B", "b7")
	a["flamediff.run"], b["flamediff.run"] = "1", "1"
	td := otlptest.Traces(
		otlptest.Resource{Attrs: a, Spans: []otlptest.Span{{Trace: 1, ID: 1, Name: "a", End: 10,
			Attrs: map[string]string{"code.file.path": "a.go"}, IntAttrs: map[string]int64{"code.line.number": 3}}}},
		otlptest.Resource{Attrs: b, Spans: []otlptest.Span{{Trace: 2, ID: 1, Name: "b", End: 20}, {Trace: 2, ID: 2, Parent: 1, Name: "c", End: 5}}})
	runs, _, err := TraceRuns(RunOptions{RunAttribute: "flamediff.run"}, "t", td)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.App+"/"+r.Build+"/"+r.Run+" "+strings.Join(spanSamples(r.Profile), ","))
	}
	if want := []string{"A/b1/1 A: a 10 @0", "B/b7/1 B: b 15 @0,B: b;B: c 5 @0"}; !slices.Equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
	spans, err := SpansOf(td, "flamediff.run")
	if err != nil {
		t.Fatal(err)
	}
	back, err := SpansOf(TracesOf(spans, "flamediff.run"), "flamediff.run")
	if err != nil || !slices.Equal(back, spans) {
		t.Errorf("TracesOf then SpansOf: %+v, %v; want %+v", back, err, spans)
	}
}
