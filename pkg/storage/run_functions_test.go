package storage

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// functionValues reads each run's function sums by name (names: the
// functions to look for), or nil when RunFunctionValues reports that some
// run has none.
func functionValues(t *testing.T, s *Store, runs []Run, names ...string) []map[string]int64 {
	t.Helper()
	byHash := map[uint64]string{}
	for _, n := range names {
		byHash[FunctionHash(n, "")] = n
	}
	out := make([]map[string]int64, len(runs))
	for i := range out {
		out[i] = map[string]int64{}
	}
	ok, err := s.RunFunctionValues(context.Background(), runs, len(names), func(run int, h uint64, v int64) error {
		name, known := byHash[h]
		if !known {
			t.Errorf("run %d: function %x is none of %v", run, h, names)
		}
		out[run][name] += v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	return out
}

// An ingest writes each run's inclusive sum per function: a stack counts
// once for each function it holds however often it recurs, one name in
// two modules is one function, and a function of zero-valued stacks only
// still has its row.
func TestIngestSumsFunctions(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "1", "r1"), build("main;a;b;a 3", "main;b@libb 2", "main;b 1 @t4", "main;c 0"))
	ingest(t, s, meta("a", "1", "r2"), build("main;a 7"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !runs[0].FunctionsSummed || !runs[1].FunctionsSummed {
		t.Errorf("runs %+v, want both marked as having their function sums", runs)
	}
	got := functionValues(t, s, runs, "main", "a", "b", "c")
	want := []map[string]int64{{"main": 6, "a": 3, "b": 6, "c": 0}, {"main": 7, "a": 7}}
	if got == nil || !maps.Equal(got[0], want[0]) || !maps.Equal(got[1], want[1]) {
		t.Errorf("function sums %v, want %v", got, want)
	}
	if n := count(t, s, "SELECT toUInt64(sum(value)) FROM run_functions WHERE function_hash = 0"); n != 13 {
		t.Errorf("totals rows add up to %d, want the runs' 6 + 7", n)
	}
}

// StackRuns gives a stack every run has once, the others run by run:
// from one run of each stack set when runs repeat their sets, else from a
// count per stack; from the run stacks of ingests with sums and from the
// samples of the others.
func TestStackRuns(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "1", "r1"), build("main;a 3", "main;b 2"))
	ingest(t, s, meta("a", "1", "r2"), build("main;a 1", "main;c 1", "main;c 2 @t3"))
	ingest(t, s, meta("a", "1", "r3"), build("main;b 7", "main;a 1"))
	ingest(t, s, meta("a", "1", "r4"), build("main;a 5", "main;b 1", "main;b 1"))
	all, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all[0].StackSet == 0 || all[0].StackSet != all[2].StackSet || all[2].StackSet != all[3].StackSet || all[1].StackSet == all[0].StackSet {
		t.Fatalf("stack sets %x, want r1, r3 and r4 alike and r2 apart", []uint64{all[0].StackSet, all[1].StackSet, all[2].StackSet, all[3].StackSet})
	}
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, all, func(h uint64, frames []Frame) error {
		text[h] = frames[len(frames)-1].Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read := func(runs []Run) map[string][]int {
		got := map[string][]int{}
		if err := s.StackRuns(ctx, runs, func(r int, stack uint64) error {
			got[text[stack]] = append(got[text[stack]], r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, rs := range got {
			slices.Sort(rs)
		}
		return got
	}
	unknown := func(runs []Run) []Run { // as ingests of an older version left them
		out := slices.Clone(runs)
		for i := range out {
			out[i].StackSet = 0
		}
		return out
	}
	cases := []struct {
		name string
		runs []Run
		want map[string][]int
	}{
		{"two stack sets of four runs", all, map[string][]int{"a": {EveryRun}, "b": {0, 2, 3}, "c": {1}}},
		{"one stack set", []Run{all[0], all[2], all[3]}, map[string][]int{"a": {EveryRun}, "b": {EveryRun}}},
		{"counted", all[:2], map[string][]int{"a": {EveryRun}, "b": {0}, "c": {1}}},
		{"unknown stack sets", unknown(all), map[string][]int{"a": {EveryRun}, "b": {0, 2, 3}, "c": {1}}},
	}
	for _, c := range cases {
		if got := read(c.runs); !maps.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: stack runs %v, want %v", c.name, got, c.want)
		}
	}
	// Without run stacks rows (an older CLI's ingests), from the samples.
	if err := s.conn.Exec(ctx, "TRUNCATE TABLE run_stacks"); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		runs := slices.Clone(c.runs)
		for i := range runs {
			runs[i].StacksSummed = false
		}
		if got := read(runs); !maps.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s, from the samples: stack runs %v, want %v", c.name, got, c.want)
		}
	}
}
