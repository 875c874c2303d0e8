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
		byHash[FunctionHash(n)] = n
	}
	out := make([]map[string]int64, len(runs))
	for i := range out {
		out[i] = map[string]int64{}
	}
	ok, err := s.RunFunctionValues(context.Background(), runs, func(run int, h uint64, v int64) error {
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

// StackRuns gives a stack every run has once, the others run by run, from
// the run stacks of ingests with sums and from the samples of the others.
func TestStackRuns(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "1", "r1"), build("main;a 3", "main;b 2"))
	ingest(t, s, meta("a", "2", "r2"), build("main;a 1", "main;c 1", "main;c 2 @t3"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := map[uint64]string{}
	if err := s.Stacks(ctx, runs, func(h uint64, frames []Frame) error {
		text[h] = frames[len(frames)-1].Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read := func() map[string][]int {
		got := map[string][]int{}
		if err := s.StackRuns(ctx, runs, func(r int, stack uint64) error {
			got[text[stack]] = append(got[text[stack]], r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := map[string][]int{"a": {EveryRun}, "b": {0}, "c": {1}}
	if got := read(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("stack runs %v, want %v", got, want)
	}
	// Without run stacks rows (an older CLI's ingests), from the samples.
	for i := range runs {
		runs[i].StacksSummed = false
	}
	if err := s.conn.Exec(ctx, "TRUNCATE TABLE run_stacks"); err != nil {
		t.Fatal(err)
	}
	if got := read(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("stack runs from the samples %v, want %v", got, want)
	}
}
