package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestReadsOfManyRuns reads 20,000 runs, whose ingest ids take more than
// ClickHouse's default max_query_size in one IN list, through every read
// that lists ingest ids, and checks each against the sums of the profiles
// stored.
func TestReadsOfManyRuns(t *testing.T) {
	const perBuild = 10_000
	ctx := context.Background()
	s := newStore(t, Options{})
	var in []Ingestion
	want := map[string]map[string]int64{} // build -> stack text -> sum
	for _, b := range []string{"base", "head"} {
		want[b] = map[string]int64{}
		for i := range perBuild {
			p := build(fmt.Sprintf("main;f %d @t0", 1+i%3), fmt.Sprintf("main;g %d @t0", 1+i%7))
			in = append(in, Ingestion{Meta: meta("app", b, fmt.Sprint(i)), Profile: p})
			for k, v := range totals(p) {
				want[b][k] += v
			}
		}
	}
	if err := s.IngestRuns(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]Run{}
	for _, b := range []string{"base", "head"} {
		rs, err := s.Runs(ctx, "app", []string{b}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != perBuild {
			t.Fatalf("%d runs of %s, want %d", len(rs), b, perBuild)
		}
		runs[b] = rs
	}
	all := append(append([]Run{}, runs["base"]...), runs["head"]...)

	text := map[uint64]string{} // stack hash -> "main@;f@"
	err := s.Stacks(ctx, all, func(h uint64, frames []Frame) error {
		parts := make([]string, len(frames))
		for i, f := range frames {
			parts[i] = f.Name + "@" + f.Module
		}
		if _, ok := text[h]; ok {
			return fmt.Errorf("stack %x twice", h)
		}
		text[h] = strings.Join(parts, ";")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != 2 {
		t.Fatalf("Stacks: %d stacks, want 2", len(text))
	}

	// One group per build: the server sums thousands of runs per key.
	got := map[string]map[string]int64{"base": {}, "head": {}}
	sides := []string{"base", "head"}
	err = s.StackValues(ctx, [][]Run{runs["base"], runs["head"]}, func(g int, h uint64, v int64, _ uint64) error {
		got[sides[g]][text[h]] += v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range sides {
		equalTotals(t, got[b], want[b])
	}

	// One group per run, summed here.
	perRun := map[string]int64{}
	err = s.RunStackValues(ctx, all, func(r int, h uint64, v int64) error {
		perRun[text[h]] += v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equalTotals(t, perRun, sumTotals(want["base"], want["head"]))

	timeline := map[string]int64{}
	err = s.Timeline(ctx, EachRun(all), func(r int, h uint64, _ int, v int64) error {
		timeline[text[h]] += v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equalTotals(t, timeline, sumTotals(want["base"], want["head"]))

	// Functions: f, g and main (every sample) per run.
	wantFn := map[uint64]int64{FunctionHash("main"): 0}
	for k, v := range sumTotals(want["base"], want["head"]) {
		wantFn[FunctionHash("main")] += v
		wantFn[FunctionHash(strings.TrimSuffix(k[strings.Index(k, ";")+1:], "@"))] += v
	}
	gotFn := map[uint64]int64{}
	ok, err := s.RunFunctionValues(ctx, all, 3, func(_ int, f uint64, v int64) error {
		gotFn[f] += v
		return nil
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if fmt.Sprint(gotFn) != fmt.Sprint(wantFn) {
		t.Errorf("function values %v, want %v", gotFn, wantFn)
	}
	gotTimeline := map[uint64]int64{}
	err = s.FunctionTimeline(ctx, all, []uint64{FunctionHash("f"), FunctionHash("g"), FunctionHash("main")},
		func(_ int, f uint64, _ int, v int64) error {
			if f != 0 {
				gotTimeline[f] += v
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gotTimeline) != fmt.Sprint(wantFn) {
		t.Errorf("function timelines %v, want %v", gotTimeline, wantFn)
	}

	// Storing 3,500 runs again leaves more superseded ingests to collect
	// than one list holds (idLists: 2,978), in less time than all would
	// take (each list's deletion waits for its mutations).
	again := in[:3500]
	for i := range again {
		again[i].Profile = build("main;h 1 @t0")
	}
	if err := s.IngestRuns(ctx, again, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Superseded != len(again) || res.SampleRows != uint64(2*len(again)) {
		t.Errorf("GC %+v, want %d superseded ingests of %d sample rows", res, len(again), 2*len(again))
	}
}
