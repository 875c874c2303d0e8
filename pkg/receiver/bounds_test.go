package receiver

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/otlp"
)

// oneSpanTraces is a request of n one-span traces numbered from first,
// each its own run of 1000 ns.
func oneSpanTraces(t testing.TB, first, n int) []byte {
	t.Helper()
	spans := make([]otlptest.Span, n)
	for i := range spans {
		spans[i] = otlptest.Span{Trace: uint64(first + i), ID: 1, Name: "test", Start: uint64(i), End: uint64(i) + 1000} // #nosec G115 -- small
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(otlptest.Traces(otlptest.Resource{Attrs: otlptest.Service("burst", "v1"), Spans: spans})).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storedRuns counts the visible runs of app in ClickHouse, and their
// total.
func storedRuns(t testing.TB, dsn, app string) (runs uint64, total int64) {
	t.Helper()
	err := chtest.Conn(t, dsn).QueryRow(context.Background(), "SELECT count(), sum(t) FROM (SELECT argMax(total, committed_ns) AS t,"+
		" argMax(deleted, committed_ns) AS d FROM runs WHERE app = ? GROUP BY build, run) WHERE d = 0", app).Scan(&runs, &total)
	if err != nil {
		t.Fatal(err)
	}
	return runs, total
}

// TestBurstAndLargeRequest: 8 senders post 200 requests of 10 one-span
// traces each as fast as they can (16,000 runs, acknowledged in about
// 2 s), then one request of 50,000 traces (14 MB): every run is stored,
// with its value, though a commit names more runs than ClickHouse takes
// in one IN list.
func TestBurstAndLargeRequest(t *testing.T) {
	dsn := chtest.DSN(t)
	store := teststore.Migrated(t, dsn)
	r, srv := start(t, store, Options{Wait: 200 * time.Millisecond}, "")
	var wg sync.WaitGroup
	began := time.Now()
	for s := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, oneSpanTraces(t, 1+(s*200+i)*10, 10)); code != 200 {
					t.Errorf("burst: %d %s", code, body)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("16,000 runs acknowledged in %s", time.Since(began).Round(time.Millisecond))
	body := oneSpanTraces(t, 1_000_000, 50_000)
	if code, _, answer := post(t, srv.URL+"/v1/traces", protobufType, body); code != 200 {
		t.Fatalf("50,000 traces (%d bytes): %d %s", len(body), code, answer)
	}
	waitFor(t, "66,000 runs", func() bool { return r.Stats().TraceRuns == 66_000 })
	if runs, total := storedRuns(t, dsn, "burst"); runs != 66_000 || total != 66_000*1000 {
		t.Errorf("%d runs of total %d stored, want 66,000 of 66,000,000", runs, total)
	}
	if s := r.Stats(); s.SetAside != 0 || s.PendingSpans != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestRunsOfTwoAppsStayApart: with a run attribute, run "1" of app A
// build b1, of app B build b7 and of app C build b1 are three runs, each
// with its own spans.
func TestRunsOfTwoAppsStayApart(t *testing.T) {
	store := newStore(t)
	r, srv := start(t, store, Options{Wait: 100 * time.Millisecond, RunAttribute: "flamediff.run"}, "")
	for i, app := range [][2]string{{"A", "b1"}, {"B", "b7"}, {"C", "b1"}} {
		attrs := otlptest.Service(app[0], app[1])
		attrs["flamediff.run"] = "1"
		td := otlptest.Traces(otlptest.Resource{Attrs: attrs, Spans: []otlptest.Span{
			{Trace: uint64(i + 1), ID: 1, Name: "root-" + app[0], Start: 0, End: uint64(100 * (i + 1))}}}) // #nosec G115 -- small
		pb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, pb); code != 200 {
			t.Fatalf("%s: %d %s", app, code, body)
		}
		if i == 1 { // C comes after A and B are stored: not late
			waitFor(t, "two runs", func() bool { return r.Stats().TraceRuns == 2 })
		}
	}
	waitFor(t, "three runs", func() bool { return r.Stats().TraceRuns == 3 })
	for i, app := range [][2]string{{"A", "b1"}, {"B", "b7"}, {"C", "b1"}} {
		want := map[string]int64{app[0] + ": root-" + app[0]: int64(100 * (i + 1))}
		if got := folded(t, store, app[0], app[1], "1"); !maps.Equal(got, want) {
			t.Errorf("%s/%s run 1: %v, want %v", app[0], app[1], got, want)
		}
	}
	if s := r.Stats(); s.LateSpans != 0 {
		t.Errorf("late spans: %+v", s)
	}
}

// TestRepeatedProfileRequests holds docs/OTLP.md to what the receiver
// does with two requests for one run: the later replaces the earlier
// (so that a retried request is stored once), and a profiler sending a
// run in pieces names each piece's run.
func TestRepeatedProfileRequests(t *testing.T) {
	store := newStore(t)
	_, srv := start(t, store, Options{}, "")
	files := []string{testkit.Testdata("pprof", "base-run1.pb.gz"), testkit.Testdata("pprof", "head-run1.pb.gz")}
	var last map[string]int64
	for _, file := range files {
		pd, want := pprofRequest(t, file, "b", "r")
		pb, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // sent twice, as a retry would
			if code, _, body := post(t, srv.URL+"/v1/profiles", protobufType, pb); code != 200 {
				t.Fatalf("%d %s", code, body)
			}
		}
		last = stackTotals(want)
	}
	if got := folded(t, store, "prof", "b", "r"); !maps.Equal(got, last) {
		t.Error("the run stored is not the last request's profile")
	}
	doc, err := os.ReadFile("../../docs/OTLP.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "a later request for the same (app, build, run) **replaces** it") {
		t.Error("docs/OTLP.md does not say that a later profile request replaces its run")
	}
}

// TestSetAside: while ClickHouse answers but refuses every commit (its
// runs table renamed away), a run is set aside as an OTLP traces file
// that reads back as the spans sent, health reports it, and later runs
// are stored once the table is back.
func TestSetAside(t *testing.T) {
	dsn := chtest.DSN(t)
	store := teststore.Migrated(t, dsn)
	dir := t.TempDir()
	var mu sync.Mutex
	var logged []string
	r, srv := start(t, store, Options{Wait: 50 * time.Millisecond, Dir: dir, Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}}, "")
	conn := chtest.Conn(t, dsn)
	ctx := context.Background()
	if err := conn.Exec(ctx, "RENAME TABLE runs TO runs_away"); err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, oneSpanTraces(t, 1, 1)); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	waitFor(t, "a run set aside", func() bool { return r.Stats().SetAside == 1 })
	files, _ := filepath.Glob(filepath.Join(dir, "set-aside", "traces-*.pb"))
	if len(files) != 1 {
		t.Fatalf("set-aside files %v", files)
	}
	data, err := os.ReadFile(files[0]) // #nosec G304 -- the test's own file
	if err != nil {
		t.Fatal(err)
	}
	batches, err := otlp.DecodeTraces(data, files[0])
	if err != nil {
		t.Fatal(err)
	}
	spans, err := otlp.SpansOf(batches[0], "")
	if err != nil || len(spans) != 1 || spans[0].Name != "test" || spans[0].End-spans[0].Start != 1000 || spans[0].Service != "burst" {
		t.Fatalf("set aside %+v %v", spans, err)
	}
	if code, _, body := send(t, "GET", srv.URL+"/health", nil); code != 200 || !strings.Contains(string(body), `"setAside":1`) {
		t.Errorf("health: %d %s", code, body)
	}
	mu.Lock()
	if !strings.Contains(strings.Join(logged, "\n"), "set aside (the store refuses it") {
		t.Errorf("not logged: %q", logged)
	}
	mu.Unlock()
	if err := conn.Exec(ctx, "RENAME TABLE runs_away TO runs"); err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, oneSpanTraces(t, 2, 1)); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	waitFor(t, "the next run", func() bool { return r.Stats().TraceRuns == 1 })
}

// TestLogReplay: spans acknowledged by a receiver that never stored them
// (it crashed) are stored by the next one on the same directory, once;
// a torn record at the log's end (a crash while appending, before any
// answer) is ignored; once stored, the log is trimmed, and a third
// receiver finds nothing to store.
func TestLogReplay(t *testing.T) {
	dsn := chtest.DSN(t)
	store := teststore.Migrated(t, dsn)
	dir := t.TempDir()
	crashed, err := Open(store, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(crashed.Handler(guardFor(t, loopback, "")))
	for i := range 5 {
		if code, _, body := post(t, srv.URL+"/v1/traces", protobufType, oneSpanTraces(t, 1+10*i, 10), "Host", "127.0.0.1:4318"); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	srv.Close()
	_ = crashed.Close() // its Run never ran: nothing stored
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	f, err := os.OpenFile(segs[0], os.O_APPEND|os.O_WRONLY, 0) // #nosec G304 -- the test's own file
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0, 0, 1, 0, 1, 2, 3, 4, 5}); err != nil { // a header promising 256 bytes, 1 written
		t.Fatal(err)
	}
	f.Close()
	r, _ := start(t, store, Options{Dir: dir, Wait: 50 * time.Millisecond}, "")
	if s := r.Stats(); s.Replayed != 50 || s.PendingRuns != 50 {
		t.Fatalf("replayed %+v", s)
	}
	waitFor(t, "50 runs", func() bool { return r.Stats().TraceRuns == 50 })
	if runs, total := storedRuns(t, dsn, "burst"); runs != 50 || total != 50*1000 {
		t.Errorf("%d runs of total %d", runs, total)
	}
	waitFor(t, "the log trimmed", func() bool {
		segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
		return slices.Equal(segs, []string{filepath.Join(dir, "wal", segmentName(1))}) // the crashed receiver's is gone
	})
	r.Close()
	again, err := Open(store, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if s := again.Stats(); s.Replayed != 0 || s.PendingRuns != 0 {
		t.Errorf("after the runs were stored the log still holds %+v", s)
	}
}
