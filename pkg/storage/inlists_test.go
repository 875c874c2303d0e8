package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestReadsOfManyRuns reads 20,000 runs, whose ingest ids take more than
// ClickHouse's default max_query_size in one IN list, through every read
// that lists ingest ids, and checks each against the sums of the profiles
// stored.
func TestReadsOfManyRuns(t *testing.T) {
	const perBuild, bits = 10_000, 14
	ctx := context.Background()
	s := newStore(t, Options{})
	var in []RunProfile
	want := map[string]map[string]int64{} // build -> stack text -> sum
	for _, b := range []string{"base", "head"} {
		want[b] = map[string]int64{}
		for i := range perBuild {
			lines := []string{fmt.Sprintf("main;f %d @t0", 1+i%3), fmt.Sprintf("main;g %d @t0", 1+i%7)}
			for j := range bits { // a stack set of its own for most runs
				if i&(1<<j) != 0 {
					lines = append(lines, fmt.Sprintf("main;s%d 1 @t0", j))
				}
			}
			p := build(lines...)
			in = append(in, RunProfile{Meta: meta("app", b, fmt.Sprint(i)), Profile: p})
			for k, v := range totals(p) {
				want[b][k] += v
			}
		}
	}
	if err := s.WriteRuns(ctx, in, nil); err != nil {
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
	err := s.stackTexts(ctx, all, func(h uint64, frames []Frame) error {
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
	if len(text) != 2+bits {
		t.Fatalf("Stacks: %d stacks, want %d", len(text), 2+bits)
	}

	// Stack s<j> is in the runs whose number has bit j, f and g in all.
	runsOf := map[string]int{}
	err = s.StackRuns(ctx, all, func(r int, h uint64) error {
		name := strings.TrimSuffix(text[h][strings.Index(text[h], ";")+1:], "@")
		if r == EveryRun {
			runsOf[name] = len(all)
			return nil
		}
		var i, j int
		fmt.Sscan(all[r].Run, &i)
		if _, err := fmt.Sscanf(name, "s%d", &j); err != nil || i&(1<<j) == 0 {
			return fmt.Errorf("stack %s in run %s", name, all[r].Run)
		}
		runsOf[name]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runsOf["f"] != len(all) || runsOf["g"] != len(all) {
		t.Errorf("f in %d runs, g in %d, want %d", runsOf["f"], runsOf["g"], len(all))
	}
	for j := range bits {
		want := 0
		for i := range perBuild {
			want += 2 * (i >> j & 1)
		}
		if n := runsOf[fmt.Sprint("s", j)]; n != want {
			t.Errorf("s%d in %d runs, want %d", j, n, want)
		}
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
	wantFn := map[uint64]int64{FunctionHash("main", ""): 0}
	for k, v := range sumTotals(want["base"], want["head"]) {
		wantFn[FunctionHash("main", "")] += v
		wantFn[FunctionHash(strings.TrimSuffix(k[strings.Index(k, ";")+1:], "@"), "")] += v
	}
	gotFn := map[uint64]int64{}
	ok, err := s.RunFunctionValues(ctx, all, len(wantFn), func(_ int, f uint64, v int64) error {
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
	err = s.FunctionTimeline(ctx, all, slices.Collect(maps.Keys(wantFn)),
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
	again, rows := in[:3500], 0
	for i := range again {
		rows += len(again[i].Profile.Samples) // one stack each, one bucket
		again[i].Profile = build("main;h 1 @t0")
	}
	if err := s.WriteRuns(ctx, again, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Superseded != len(again) || res.SampleRows != uint64(rows) {
		t.Errorf("GC %+v, want %d superseded ingests of %d sample rows", res, len(again), rows)
	}
}
