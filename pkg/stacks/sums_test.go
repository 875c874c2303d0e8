package stacks_test

import (
	"context"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/stacks"
)

// The over-time queries give the same answers from the run functions
// table as from summing the run stacks (ingests written before the table
// existed), and again once migrate has filled the table in for those.
func TestFunctionSumsKeepAnswers(t *testing.T) {
	if chtest.OnCluster() {
		t.Skip("rewrites the runs table with ALTER, which a Distributed table refuses; the single-server suite runs it")
	}
	store, dsn := storeWithPprof(t)
	ctx := context.Background()
	queries := []string{
		`{"queryType":"changepoints","app":"app","builds":["base","head"],"minShare":0}`,
		`{"queryType":"timeseries","app":"app","function":"main.validateHead","baseline":"base"}`,
		`{"queryType":"timeseries","app":"app","function":"runtime.mallocgc"}`,
		`{"queryType":"evolution","app":"app","threshold":0}`,
		`{"queryType":"evolution","app":"app"}`,
	}
	answers := func() map[string]string {
		out := map[string]string{}
		for _, q := range queries {
			out[q] = answerJSON(t, &query.Executor{Store: store, Stacks: stacks.NewCache(0)}, q)
		}
		return out
	}
	summed := func() bool {
		runs, err := store.Runs(ctx, "app", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := store.RunFunctionValues(ctx, runs, func(int, uint64, int64) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !summed() {
		t.Fatal("fresh ingests have no function sums")
	}
	want := answers()
	// As ingests of an older version left them: no function sums.
	conn := chtest.Conn(t, dsn)
	for _, sql := range []string{"ALTER TABLE runs UPDATE functions_summed = 0 WHERE 1", "TRUNCATE TABLE run_functions", "TRUNCATE TABLE function_timelines"} {
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var pending uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND NOT is_done").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runs table's update did not finish in a minute")
		}
	}
	if summed() {
		t.Fatal("the runs still say they have function sums")
	}
	for stage, check := range []func() bool{func() bool { return true }, func() bool {
		if err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return summed()
	}} {
		if !check() {
			t.Fatal("migrate did not fill in the function sums")
		}
		got := answers()
		for _, q := range queries {
			if got[q] != want[q] {
				t.Errorf("stage %d (0: summed from the run stacks, 1: filled in by migrate): %s answered\n %s\nwant %s", stage, q, got[q], want[q])
			}
		}
	}
}
