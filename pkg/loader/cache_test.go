package loader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// storeWithPprof loads testdata/pprof: build "base" and build "head". It
// returns the store and its DSN.
func storeWithPprof(t *testing.T) (*storage.Store, string) {
	t.Helper()
	store, dsn := teststore.Fresh(t, false)
	ctx := context.Background()
	for _, build := range []string{"base", "head"} {
		for i, name := range testkit.PprofRuns(t, build) {
			p, err := profilefile.Parse(name, ingest.Options{Format: ingest.Pprof})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Write(ctx, storage.RunMeta{App: "app", Build: build, Run: fmt.Sprint(i)}, p, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return store, dsn
}

// answerJSON is the JSON of the frames e answers a query model with.
func answerJSON(t *testing.T, e *query.Executor, raw string) string {
	t.Helper()
	m, err := query.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := e.Execute(context.Background(), m, query.Range{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(frames)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The stack cache must never change an answer: not when warm, not when it
// is too small and starts over in the middle of a query, not when queries
// over different selections share it.
func TestStackCacheKeepsAnswers(t *testing.T) {
	store, dsn := storeWithPprof(t)
	ctx := context.Background()
	queries := []string{
		`{"queryType":"diff","app":"app","head":{"builds":["head"]},"base":{"builds":["base"]},"variants":true}`,
		`{"queryType":"flamegraph","app":"app","head":{"builds":["head"],"runs":["0"]}}`,
		`{"queryType":"functions","app":"app","head":{"builds":["base"]}}`,
		`{"queryType":"evolution","app":"app","threshold":0}`,
	}
	uncached := &query.Executor{Store: store}
	want := map[string]string{}
	for _, q := range queries {
		want[q] = answerJSON(t, uncached, q)
	}
	for _, limit := range []int{0, 50, 5000} {
		cached := &query.Executor{Store: store, Stacks: loader.NewCache(limit)}
		for round := 0; round < 3; round++ {
			for _, q := range queries {
				if got := answerJSON(t, cached, q); got != want[q] {
					t.Errorf("cache limit %d, round %d: %s answered differently", limit, round, q)
				}
			}
		}
	}

	// Copies of stack rows, as two ingests at once that both write a new
	// stack leave until ClickHouse merges their parts, answer alike.
	conn := chtest.Conn(t, dsn)
	for _, sql := range []string{"SYSTEM STOP MERGES stacks",
		"INSERT INTO stacks (app, stack_hash, frame_hashes) SELECT app, stack_hash, frame_hashes FROM stacks"} {
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := store.Runs(ctx, "app", []string{"head"}, nil)
	base, _ := store.Runs(ctx, "app", []string{"base"}, nil)
	listed, err := loader.NewCache(0).FillRuns(ctx, store, append(head, base...))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(listed) || len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("the stacks of a selection are listed out of order or more than once")
	}
	for _, limit := range []int{0, 50} {
		copies := &query.Executor{Store: store, Stacks: loader.NewCache(limit)}
		for _, q := range queries {
			if got := answerJSON(t, copies, q); got != want[q] {
				t.Errorf("with every stack row twice, cache limit %d: %s answered differently", limit, q)
			}
		}
	}

	// Ingests that run_stacks does not list (written by an older CLI
	// since the last migrate, whose runs rows do not say that their sums
	// are written) answer alike: their stacks are read by hash once the
	// sums are in.
	for _, sql := range []string{"TRUNCATE TABLE run_stacks", "ALTER TABLE runs UPDATE stacks_summed = 0 WHERE stacks_summed = 1"} {
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) { // a mutation ends in the background
		var marked uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM runs WHERE stacks_summed = 1").Scan(&marked); err != nil {
			t.Fatal(err)
		}
		if marked == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs still marked as summed after 30 s", marked)
		}
	}
	unlisted := &query.Executor{Store: store, Stacks: loader.NewCache(0)}
	for _, q := range queries {
		if got := answerJSON(t, unlisted, q); got != want[q] {
			t.Errorf("without run_stacks rows: %s answered differently", q)
		}
	}

	warm := loader.NewCache(0)
	e := &query.Executor{Store: store, Stacks: warm}
	answerJSON(t, e, queries[0])
	hashes := warm.Selection(append(head, base...))
	if len(hashes) == 0 {
		t.Fatal("a query did not leave its selection in the cache")
	}
	if lacking := warm.Lacking(hashes); len(lacking) != 0 {
		t.Errorf("a query left %d of its %d stacks out of the cache", len(lacking), len(hashes))
	}
}

// A cold read takes every stack of the app when that costs less than
// selecting the runs' own (many runs over an app of few stacks beyond
// them): the stacks no selected run has stay out of the answers, and go to
// the cache. A selection of few rows still reads its own stacks only.
func TestWholeAppReadKeepsAnswers(t *testing.T) {
	store, _ := teststore.Fresh(t, false)
	ctx := context.Background()
	// Builds a and b: 4 runs each of 10 stacks under main (b's run 3 adds
	// one); build other: 1 run of 3 stacks no run of a or b has.
	ingest := func(build string, run int, names []string) {
		p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
		root := p.Intern(profile.Frame{Name: "main"})
		for i, name := range names {
			p.Samples = append(p.Samples, profile.Sample{Stack: []uint32{root, p.Intern(profile.Frame{Name: name})}, Value: int64(100 + 10*i + run)})
		}
		meta := storage.RunMeta{App: "app", Build: build, Run: fmt.Sprint(run), Start: time.Date(2026, 1, 1, 0, len(build), run, 0, time.UTC)}
		if err := store.Write(ctx, meta, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	var shared []string
	for i := range 10 {
		shared = append(shared, fmt.Sprintf("f%d", i))
	}
	for run := range 4 {
		ingest("a", run, shared)
		if run == 3 {
			ingest("b", run, append(shared, "slow"))
		} else {
			ingest("b", run, shared)
		}
	}
	queries := []string{
		`{"queryType":"diff","app":"app","head":{"builds":["b"]},"base":{"builds":["a"]}}`,
		`{"queryType":"functions","app":"app","head":{"builds":["b"]},"base":{"builds":["a"]}}`,
		`{"queryType":"changepoints","app":"app","builds":["a","b"],"minShare":0}`,
		`{"queryType":"flamegraph","app":"app","head":{"builds":["b"],"runs":["3"]}}`,
	}
	want := map[string]string{}
	for _, q := range queries {
		want[q] = answerJSON(t, &query.Executor{Store: store, Stacks: loader.NewCache(0)}, q)
	}
	ingest("other", 0, []string{"x", "y", "z"})
	others, err := store.Runs(ctx, "app", []string{"other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var otherStacks []uint64
	if err := store.RunStackFrames(ctx, others, func(h uint64, _ []uint64) error {
		otherStacks = append(otherStacks, h)
		return nil
	}); err != nil || len(otherStacks) != 3 {
		t.Fatalf("build other has stacks %x (%v), want 3", otherStacks, err)
	}
	for i, q := range queries {
		cache := loader.NewCache(0)
		if got := answerJSON(t, &query.Executor{Store: store, Stacks: cache}, q); got != want[q] {
			t.Errorf("%s answered differently once the app had stacks beyond it:\n got %s\nwant %s", q, got, want[q])
		}
		// 8 runs of 10-11 stacks over an app of 14: the whole app; one run: its own.
		wholeApp := i < 3
		if lacking := cache.Lacking(otherStacks); (len(lacking) == 0) != wholeApp {
			t.Errorf("%s: the cache lacks %d of build other's 3 stacks; read the whole app: %v", q, len(lacking), wholeApp)
		}
	}
}
