package otlptest

import (
	"math/rand/v2"
)

// ScenarioStep is a span of the generated test scenario: its service,
// name, parent (an index into Scenario, -1 for the root), start after its
// parent's start and duration, in nanoseconds before noise.
type ScenarioStep struct {
	Service, Name    string
	Parent           int
	Offset, Duration uint64
}

// Scenario is a test that logs in, searches (two overlapping async
// calls) and renders, under one root span.
var Scenario = []ScenarioStep{
	{"test", "scenario", -1, 0, 80_000_000},
	{"api", "login", 0, 1_000_000, 20_000_000},
	{"db", "query", 1, 5_000_000, 8_000_000},
	{"api", "search", 0, 22_000_000, 35_000_000},
	{"cache", "get", 3, 2_000_000, 10_000_000},
	{"db", "scan", 3, 6_000_000, 15_000_000},
	{"api", "render", 0, 60_000_000, 12_000_000},
}

// ScenarioTrace generates one trace of Scenario, every duration and
// offset scaled by noise (1 + sd·N(0,1)) and the durations of the steps
// named in slower ("service: name") by their factor. A slower step
// delays what waits for it, as in a program that runs one step after
// another: its ancestors end later by as much, and the spans that start
// after it ended start later, so only its own self time changes. Spans of
// each service form one resource of version build.
func ScenarioTrace(rng *rand.Rand, trace uint64, build string, sd float64, slower map[string]float64) []Resource {
	spans := make([]Span, len(Scenario))
	for i, st := range Scenario {
		scale := func(v uint64) uint64 { return uint64(float64(v) * max(0.1, 1+sd*rng.NormFloat64())) }
		d := scale(st.Duration)
		s := Span{Trace: trace, ID: trace<<8 | uint64(i+1), Name: st.Name} // #nosec G115 -- i indexes Scenario's seven steps
		if st.Parent >= 0 {
			p := spans[st.Parent]
			s.Parent = p.ID
			s.Start = p.Start + scale(st.Offset)
		}
		s.End = s.Start + d
		spans[i] = s
	}
	for i, st := range Scenario {
		if f, ok := slower[st.Service+": "+st.Name]; ok {
			delay(spans, i, uint64(float64(spans[i].End-spans[i].Start)*(f-1)))
		}
	}
	byService := map[string]int{}
	var out []Resource
	for i, st := range Scenario {
		j, ok := byService[st.Service]
		if !ok {
			j = len(out)
			byService[st.Service] = j
			out = append(out, Resource{Attrs: Service(st.Service, build)})
		}
		out[j].Spans = append(out[j].Spans, spans[i])
	}
	return out
}

// delay makes step i of a scenario trace last d longer: the spans that
// start once it has ended move by d, and it and its ancestors end d later.
func delay(spans []Span, i int, d uint64) {
	end := spans[i].End
	for j := range spans {
		if spans[j].Start >= end {
			spans[j].Start += d
			spans[j].End += d
		}
	}
	for a := i; a >= 0; a = Scenario[a].Parent {
		spans[a].End += d
	}
}
