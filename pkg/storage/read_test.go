package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestStackValuesAndStacks(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	base1 := build("main;a 4", "main;b 2")
	base2 := build("main;a 6", "main;c 1")
	head1 := build("main;a 10", "main;b 2")
	ingest(t, s, meta("a", "base", "1"), base1)
	ingest(t, s, meta("a", "base", "2"), base2)
	ingest(t, s, meta("a", "head", "1"), head1)
	runsOf := func(build string) []Run {
		r, err := s.Runs(ctx, "a", []string{build}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base, head := runsOf("base"), runsOf("head")
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, append(base, head...), func(h uint64, frames []Frame) error {
		var names []string
		for _, f := range frames {
			if f.Hash != FrameHash(f.Name, f.Module, f.Inlined) {
				t.Errorf("frame %+v has a wrong hash", f)
			}
			names = append(names, f.Name+"@"+f.Module)
		}
		if _, dup := text[h]; dup {
			t.Errorf("stack %x visited twice", h)
		}
		text[h] = strings.Join(names, ";")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(text) != 3 {
		t.Errorf("stacks %v, want 3", text)
	}
	tests := []struct {
		name   string
		groups [][]Run
		want   []map[string]int64
		shared bool // a run in two groups: one row per run and stack
	}{
		{"per side", [][]Run{base, head}, []map[string]int64{sumTotals(totals(base1), totals(base2)), totals(head1)}, false},
		{"per run", [][]Run{base[:1], base[1:], head}, []map[string]int64{totals(base1), totals(base2), totals(head1)}, false},
		{"run in two groups", [][]Run{base, base[:1]}, []map[string]int64{sumTotals(totals(base1), totals(base2)), totals(base1)}, true},
	}
	// The same sums whether the run stacks rows hold them, hold an ingest
	// twice (two migrates at once: that ingest is read from the samples)
	// or are missing (not migrated yet). The last two happen to ingests of
	// older versions, whose runs are not marked as summed.
	older := func(groups [][]Run) [][]Run {
		out := make([][]Run, len(groups))
		for i, g := range groups {
			out[i] = slices.Clone(g)
			for j := range out[i] {
				out[i][j].StacksSummed = false
			}
		}
		return out
	}
	for _, state := range []struct {
		name, sql string
		older     bool
	}{
		{"summed", "", false},
		{"summed, older ingests", "", true},
		{"an ingest twice", "INSERT INTO run_stacks SELECT * FROM run_stacks WHERE ingest_id = " + fmt.Sprint(base[0].IngestID), true},
		{"none", "TRUNCATE TABLE run_stacks", true},
	} {
		if state.sql != "" {
			// synchronous on a cluster: rows queued for a shard would
			// arrive in the middle of the reads below
			if err := s.conn.Exec(syncInserts(ctx), state.sql); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range tests {
			t.Run(state.name+"/"+tt.name, func(t *testing.T) {
				groups := tt.groups
				if state.older {
					groups = older(groups)
				}
				got := make([]map[string]int64, len(groups))
				for i := range got {
					got[i] = map[string]int64{}
				}
				err := s.StackValues(ctx, groups, func(g int, h uint64, v int64, _ uint64) error {
					if _, dup := got[g][text[h]]; dup && !tt.shared {
						t.Errorf("group %d, stack %s visited twice", g, text[h])
					}
					got[g][text[h]] += v
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := range got {
					equalTotals(t, got[i], tt.want[i])
				}
			})
		}
	}
	stop := errors.New("stop")
	if err := s.StackValues(ctx, older([][]Run{base}), func(int, uint64, int64, uint64) error { return stop }); err != stop {
		t.Errorf("visit error %v, want it returned as is", err)
	}
	if err := s.StackValues(ctx, [][]Run{{{App: "a", Build: "x", Run: "y"}}}, nil); err == nil {
		t.Error("a run without ingest id was accepted")
	}
}

func TestFirstSeenAndTimeline(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	m := meta("a", "b", "timed")
	m.Duration = 3200 // 32 frames of 100ns
	ingest(t, s, m, build("main;a 1 @t50", "main;b 2 @t150", "main;a 4 @t3199", "main;a 8 @t120"))
	ingest(t, s, meta("a", "b", "untimed"), build("x 1", "y 1", "x 1", "y 1"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := map[uint64]string{}
	if err := s.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		text[h] = frames[len(frames)-1].Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type cell struct {
		run, leaf string
		frame     int
	}
	got := map[cell]int64{}
	groups := [][]Run{runs[:1], runs[1:]}
	if err := s.Timeline(ctx, groups, func(g int, h uint64, frame int, v int64) error {
		got[cell{groups[g][0].Run, text[h], frame}] += v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[cell]int64{
		{"timed", "a", 0}: 1, {"timed", "a", 1}: 8, {"timed", "b", 1}: 2, {"timed", "a", 31}: 4,
		// Untimed: four samples over 32 frames by position.
		{"untimed", "x", 0}: 1, {"untimed", "y", 8}: 1, {"untimed", "x", 16}: 1, {"untimed", "y", 24}: 1,
	}
	if len(got) != len(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("timeline %v = %d, want %d", k, got[k], v)
		}
	}
	seen := map[string]uint64{}
	if err := s.StackValues(ctx, [][]Run{runs}, func(_ int, h uint64, _ int64, first uint64) error {
		seen[text[h]] = first
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Earliest across runs: a at 50ns (timed), b at 150ns, x at ordinal 0, y at 1.
	if seen["a"] != 50 || seen["b"] != 150 || seen["x"] != 0 || seen["y"] != 1 {
		t.Errorf("first seen %v", seen)
	}
}

func TestRowCap(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		maxRows int
		wantErr bool
	}{
		{"under", 4, false},
		{"exactly", 3, false},
		{"over", 2, true},
	}
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "b", "r"), build("a 1", "b 1", "c 1"))
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.maxRows = tt.maxRows
			n := 0
			err := s.StackValues(ctx, [][]Run{runs}, func(int, uint64, int64, uint64) error { n++; return nil })
			if tt.wantErr {
				if !errors.Is(err, ErrTooManyRows) || !strings.Contains(err.Error(), "more than 2 rows") {
					t.Fatalf("error %v, want ErrTooManyRows", err)
				}
				return
			}
			if err != nil || n != 3 {
				t.Fatalf("%d rows, %v", n, err)
			}
		})
	}
}

func TestSearchFunctions(t *testing.T) {
	s := newStore(t, Options{})
	ingest(t, s, meta("a", "b", "r"), build("main;Compress;ÄrgerFunc 1", "main;x%y;a_b 1", "main;axyb;acb 1"))
	ingest(t, s, meta("other", "b", "r"), build("compressOther 1"))
	// Names of deleted and replaced runs are not offered.
	ingest(t, s, meta("a", "b", "gone"), build("main;GoneFunc 1"))
	if err := s.DeleteRun(context.Background(), "a", "b", "gone"); err != nil {
		t.Fatal(err)
	}
	ingest(t, s, meta("a", "b", "again"), build("main;ReplacedFunc 1"))
	ingest(t, s, meta("a", "b", "again"), build("main;axyb 1"))
	tests := []struct {
		q     string
		limit int
		want  string
	}{
		{"compress", 0, "Compress"},
		{"äRGER", 0, "ÄrgerFunc"},
		{"%", 0, "x%y"},
		{"_", 0, "a_b"},
		{"", 2, "Compress,a_b"},
		{"'; DROP TABLE frames; --", 0, ""},
		{"gone", 0, ""},
		{"replaced", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			got, err := s.SearchFunctions(context.Background(), "a", tt.q, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := s.SearchFunctions(context.Background(), "a", "", -1); err == nil {
		t.Error("negative limit accepted")
	}
}

// Stack texts are read by hash through external tables and come back as
// packed bytes, which must hold frame hashes of any bytes
// (reinterpretAsString drops trailing zeros).
func TestStackReadsByHash(t *testing.T) {
	native := newStore(t, Options{})
	ctx := context.Background()
	ingest(t, native, meta("a", "b", "1"), build("main;a 3", "main;b;c 2", "x@lib 1"))
	ingest(t, native, meta("a", "b", "2"), build("main;a 4")) // the stack again, in another part
	ingest(t, native, meta("other", "b", "1"), build("main;a 5"))
	odd := []uint64{1, 256, 0, 1 << 63, math.MaxUint64}
	insert := func(table string, rows ...[]any) {
		// synchronous on a cluster: the reads below must find the rows
		batch, err := native.conn.PrepareBatch(syncInserts(ctx), "INSERT INTO "+table)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := batch.Append(r...); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Send(); err != nil {
			t.Fatal(err)
		}
	}
	var frameRows [][]any
	for i, h := range odd {
		frameRows = append(frameRows, []any{"a", h, fmt.Sprint("odd", i), ""})
	}
	insert("frames (app, frame_hash, name, module)", frameRows...)
	// Twice, in two parts, as two ingests of the same stack leave it until
	// ClickHouse merges them: readers may pass it on twice, alike.
	insert("stacks (app, stack_hash, frame_hashes)", []any{"a", uint64(42), odd})
	insert("stacks (app, stack_hash, frame_hashes)", []any{"a", uint64(42), odd})
	runs, err := native.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// into collects what a reader passes on.
	into := func(m map[uint64][]uint64) func(uint64, []uint64) error {
		return func(h uint64, frames []uint64) error {
			if old, dup := m[h]; dup && !slices.Equal(old, frames) {
				t.Errorf("stack %x read twice, as %x and %x", h, old, frames)
			}
			m[h] = slices.Clone(frames)
			return nil
		}
	}
	want := map[uint64][]uint64{}
	if err := native.RunStackFrames(ctx, runs, into(want)); err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("%d stacks, want 3 ingested", len(want))
	}
	// Stacks passes each stack on once, copies or not.
	for h, frames := range want {
		insert("stacks (app, stack_hash, frame_hashes)", []any{"a", h, frames})
	}
	visits := map[uint64]int{}
	if err := native.stackTexts(ctx, runs, func(h uint64, frames []Frame) error {
		if visits[h]++; len(frames) != len(want[h]) {
			t.Errorf("stack %x: %d frames, want %d", h, len(frames), len(want[h]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(visits) != len(want) {
		t.Errorf("Stacks passed on %d stacks, want %d", len(visits), len(want))
	}
	for h, n := range visits {
		if n != 1 {
			t.Errorf("Stacks passed on stack %x %d times", h, n)
		}
	}
	want[42] = odd

	hashes := append(slices.Collect(maps.Keys(want)), 7) // 7: no such stack
	// (Not over HTTP: clickhouse-go's HTTP handshake sends a setting that
	// ClickHouse 18.16 rejects.)
	got := map[uint64][]uint64{}
	if err := native.StackFrames(ctx, "a", hashes, into(got)); err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("stacks by hash\n got %v\nwant %v", got, want)
	}
	names := map[uint64]string{}
	if err := native.Frames(ctx, "a", odd, func(f Frame) error {
		names[f.Hash] = f.Name
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(names) != len(odd) || names[math.MaxUint64] != "odd4" {
		t.Errorf("frames by hash %v", names)
	}
	if err := native.StackFrames(ctx, "other", []uint64{42}, func(uint64, []uint64) error {
		t.Error("a stack of app a read as app other's")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRunStackValuesChunks reads the per-run values of runs whose rows
// together exceed the row cap: RunStackValues splits them into reads that
// each fit, and every (run, stack) value arrives once under the run's
// index; a run alone over the cap still fails.
func TestRunStackValuesChunks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	want := map[string]map[uint64]int64{}
	for i := range 6 {
		lines := []string{fmt.Sprintf("main;f%d %d", i, 10+i), fmt.Sprintf("main;g %d", 100*i+1)}
		if i%2 == 0 {
			lines = append(lines, "main 7")
		}
		ingest(t, s, meta("a", "b", fmt.Sprint(i)), build(lines...))
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		want[r.Run] = map[uint64]int64{}
		err := s.StackValues(ctx, [][]Run{{r}}, func(_ int, h uint64, v int64, _ uint64) error {
			want[r.Run][h] = v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, maxRows := range []int{3, 7, 100} {
		s.maxRows = maxRows
		got := map[string]map[uint64]int64{}
		err := s.RunStackValues(ctx, runs, func(r int, h uint64, v int64) error {
			if got[runs[r].Run] == nil {
				got[runs[r].Run] = map[uint64]int64{}
			}
			if _, dup := got[runs[r].Run][h]; dup {
				t.Errorf("cap %d: run %s stack %x twice", maxRows, runs[r].Run, h)
			}
			got[runs[r].Run][h] = v
			return nil
		})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cap %d: %v, %v; want %v", maxRows, got, err, want)
		}
	}
	s.maxRows = 2
	if err := s.RunStackValues(ctx, runs, func(int, uint64, int64) error { return nil }); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("a run of 3 stacks under a cap of 2: %v, want ErrTooManyRows", err)
	}
}

// TestTimelineChunks reads a timeline of groups whose rows together
// exceed the row cap: Timeline reads them a few groups at a time, and the
// (group, stack, bucket) sums are those read with a cap they fit.
func TestTimelineChunks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	for i := range 4 {
		ingest(t, s, meta("a", fmt.Sprint("b", i), "r"), build(fmt.Sprintf("main;f%d %d @t0", i, 10+i), "main;g 5 @t0", "main;g 6 @t900"))
	}
	runs, err := s.Runs(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := [][]Run{runs[:1], runs[1:3], runs[3:]}
	read := func(maxRows int) (map[string]int64, error) {
		s.maxRows = maxRows
		got := map[string]int64{}
		err := s.Timeline(ctx, groups, func(g int, h uint64, bucket int, v int64) error {
			got[fmt.Sprint(g, h, bucket)] += v
			return nil
		})
		return got, err
	}
	want, err := read(100)
	if err != nil || len(want) != 10 {
		t.Fatalf("%d sums, %v", len(want), err)
	}
	for _, maxRows := range []int{6, 7} {
		if got, err := read(maxRows); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cap %d: %v, %v; want %v", maxRows, got, err, want)
		}
	}
	if _, err := read(5); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("a group of 6 rows under a cap of 5: %v, want ErrTooManyRows", err)
	}
}
