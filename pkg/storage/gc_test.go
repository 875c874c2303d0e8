package storage

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// Killed and replaced ingests and deleted runs leave rows no reader sees;
// GC removes exactly those, and only once they are older than the grace
// period.
func TestGC(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{BatchRows: 2})
	p := build("main;a 5", "main;b 3", "main;b;c 2", "x 1")
	ingest(t, s, meta("app", "1.0", "r1"), p)
	ingest(t, s, meta("app", "1.0", "r1"), build("main;a 7", "main;d 1")) // replaces r1
	ingest(t, s, meta("app", "1.0", "r2"), p)
	if err := s.DeleteRun(ctx, "app", "1.0", "r2"); err != nil {
		t.Fatal(err)
	}
	// An ingest killed before its commit: everything but the runs row.
	kctx, kill := context.WithCancel(ctx)
	err := s.Write(kctx, meta("app", "1.0", "r3"), p, func(done, total int) {
		if done == total-1 {
			kill()
		}
	})
	if err == nil {
		t.Fatal("the killed ingest committed")
	}
	visible := func() (map[string]int64, []Run) {
		runs, err := s.Runs(ctx, "app", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return export(t, s, "app", "1.0", "r1"), runs
	}
	// function rows: run functions and function timelines
	countInvisible := func() (samples, stacks, runRows, functions uint64) {
		vis := s.notIn(ctx) + " (SELECT argMax(ingest_id, committed_ns) FROM runs GROUP BY app, build, run)"
		return count(t, s, "SELECT count() FROM samples WHERE ingest_id "+vis),
			count(t, s, "SELECT count() FROM run_stacks WHERE ingest_id "+vis),
			count(t, s, "SELECT count() FROM runs WHERE ingest_id "+vis),
			count(t, s, "SELECT count() FROM run_functions WHERE ingest_id "+vis) +
				count(t, s, "SELECT count() FROM function_timelines WHERE ingest_id "+vis)
	}
	wantTotals, wantRuns := visible()
	if smp, stk, rr, fn := countInvisible(); smp != 12 || stk != 12 || rr != 2 || fn == 0 {
		t.Fatalf("invisible rows before gc: %d samples, %d stacks, %d runs, %d function rows; want 12, 12, 2, some", smp, stk, rr, fn)
	}

	// Within the grace period nothing goes: the killed ingest may be running.
	res, err := s.GC(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if res != (GCResult{}) {
		t.Errorf("gc within the grace period removed %+v", res)
	}
	if smp, _, _, _ := countInvisible(); smp != 12 {
		t.Errorf("%d invisible sample rows after a gc within the grace period, want 12", smp)
	}

	res, err = s.GC(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (GCResult{Superseded: 2, Uncommitted: 1, SampleRows: 12}); res != want {
		t.Errorf("gc removed %+v, want %+v", res, want)
	}
	if smp, stk, rr, fn := countInvisible(); smp+stk+rr+fn != 0 {
		t.Errorf("invisible rows after gc: %d samples, %d stacks, %d runs, %d function rows", smp, stk, rr, fn)
	}
	gotTotals, gotRuns := visible()
	if !reflect.DeepEqual(gotTotals, wantTotals) || !reflect.DeepEqual(gotRuns, wantRuns) {
		t.Errorf("visible data changed:\n%v %+v\nwant\n%v %+v", gotTotals, gotRuns, wantTotals, wantRuns)
	}
	if _, err := s.Runs(ctx, "app", nil, []string{"r2"}); err == nil {
		t.Error("the deleted run came back")
	}
	if res, err := s.GC(ctx, 0); err != nil || res != (GCResult{}) {
		t.Errorf("a second gc: %+v, %v", res, err)
	}
}
