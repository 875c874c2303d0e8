package loader_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/tree"
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
			out[q] = answerJSON(t, &query.Executor{Store: store, Stacks: loader.NewCache(0)}, q)
		}
		return out
	}
	summed := func() bool {
		runs, err := store.Runs(ctx, "app", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := store.RunFunctionValues(ctx, runs, 1, func(int, uint64, int64) error { return nil })
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
	waitMutations(ctx, t, conn)
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

// A diff whose (run, stack) values do not all fit 32 bits loads them
// whole: the staged table widens, and each node's per-run totals are the
// runs' values.
func TestLoadValuesPast32Bits(t *testing.T) {
	store, _ := teststore.Fresh(t, false)
	ctx := context.Background()
	big := int64(3) << 31 // past 2^32
	for i, build := range []string{"base", "head"} {
		for run := range 2 {
			p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
			root := p.Intern(profile.Frame{Name: "main"})
			slow := p.Intern(profile.Frame{Name: "slow"})
			p.Samples = []profile.Sample{{Stack: []uint32{root}, Value: 5}, {Stack: []uint32{root, slow}, Value: big + int64(10*i+run)}}
			meta := storage.RunMeta{App: "app", Build: build, Run: fmt.Sprint(run), Start: time.Date(2026, 1, 1+i, 0, run, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	head, base := teststore.Runs(t, store, "app", "head"), teststore.Runs(t, store, "app", "base")
	b, err := loader.Load(ctx, store, nil, head, base)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := b.Build(tree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root, st := tr.Nodes[0], tr.Stats[0]
	wantHead := []float64{float64(big + 10 + 5), float64(big + 11 + 5)}
	wantBase := []float64{float64(big + 5), float64(big + 1 + 5)}
	if !slices.Equal(st.HeadRuns, wantHead) || !slices.Equal(st.BaseRuns, wantBase) || root.HeadTotal != float64(big)+15.5 {
		t.Errorf("root: head runs %v, base runs %v, head total %v; want %v, %v, %v", st.HeadRuns, st.BaseRuns, root.HeadTotal, wantHead, wantBase, float64(big)+15.5)
	}
}

// waitMutations waits until the ALTER ... UPDATE mutations of conn's
// database are done, a minute at most.
func waitMutations(ctx context.Context, t *testing.T, conn driver.Conn) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var pending uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND NOT is_done").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the runs table's update did not finish in a minute")
		}
	}
}
