package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
)

// faultCycles is how many times a fault test stops the receiver: the
// issue asks for 20; FLAMEDIFF_RECEIVE_SOAK=N runs a longer soak.
func faultCycles() int {
	if n, err := strconv.Atoi(os.Getenv("FLAMEDIFF_RECEIVE_SOAK")); err == nil && n > 0 {
		return n
	}
	return 20
}

// ledger is what the senders were acknowledged: per run, its expected
// total and sample count.
type ledger struct {
	mu       sync.Mutex
	runs     map[string][2]int64
	statuses map[int]int // the profile sender's answers
}

func (l *ledger) ack(run string, total, samples int64) {
	l.mu.Lock()
	l.runs[run] = [2]int64{total, samples}
	l.mu.Unlock()
}

// The least load a fault test must have acknowledged to prove anything:
// spans of traces, samples of profiles.
const minAckedSpans, minAckedSamples = 100, 20

// enough says whether the senders were acknowledged the least load.
func (l *ledger) enough() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var acked [2]int64
	for run, v := range l.runs {
		acked[map[bool]int{false: 0, true: 1}[run[0] == 'p']] += v[1]
	}
	return acked[0] >= minAckedSpans && acked[1] >= minAckedSamples
}

// traceSender sends traces through the OpenTelemetry Go SDK's OTLP/HTTP
// exporter until stop closes, each export retried (by the exporter, then
// by the loop) until it succeeds, as a test suite's exporter would: a
// trace of a root span and two children, one to four traces an export.
// A trace's run is its trace id; its total is the root's duration.
func traceSender(t *testing.T, url string, seed uint64, l *ledger, stop <-chan struct{}) {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 50 * time.Millisecond,
			MaxInterval: 500 * time.Millisecond, MaxElapsedTime: 3 * time.Second}),
		otlptracehttp.WithTimeout(5*time.Second))
	if err != nil {
		t.Error(err)
		return
	}
	defer exp.Shutdown(ctx)
	res := sdkresource.NewSchemaless(attribute.String("service.name", "faults"), attribute.String("service.version", "v1"))
	rng := rand.New(rand.NewPCG(seed, 1))
	base := time.Unix(1_780_000_000, 0)
	for n := uint64(1); ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		var spans tracetest.SpanStubs
		want := map[string]int64{}
		for range 1 + rng.IntN(4) {
			var tid trace.TraceID
			for i := range tid {
				tid[i] = byte(rng.Uint32())
			}
			sid := func(k byte) trace.SpanID { return trace.SpanID{1, 2, 3, 4, 5, 6, byte(n), k} }
			start := base.Add(time.Duration(n) * time.Millisecond)
			d := []time.Duration{time.Duration(5000 + rng.IntN(1000)), time.Duration(500 + rng.IntN(500)), time.Duration(500 + rng.IntN(500))}
			root := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid(1)})
			spans = append(spans, tracetest.SpanStub{Name: "root", SpanContext: root, StartTime: start, EndTime: start.Add(d[0]), Resource: res})
			for k := byte(2); k <= 3; k++ {
				at := start.Add(time.Duration(k) * 1000)
				spans = append(spans, tracetest.SpanStub{Name: "child" + strconv.Itoa(int(k)), Parent: root,
					SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid(k)}),
					StartTime:   at, EndTime: at.Add(d[k-1]), Resource: res})
			}
			want[tid.String()] = int64(d[0])
		}
		for exp.ExportSpans(ctx, spans.Snapshots()) != nil {
			select {
			case <-stop: // given up: never acknowledged
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		for run, total := range want {
			l.ack(run, total, 3)
		}
		time.Sleep(time.Duration(20+rng.IntN(40)) * time.Millisecond)
	}
}

// profileSender posts OTLP profiles (each a run of SmallPprof) with
// net/http as the Collector's otlphttp exporter does, retrying until a 2xx:
// the Go SDK has no profiles exporter.
func profileSender(t *testing.T, url string, l *ledger, stop <-chan struct{}) {
	src := otlptest.SmallPprof()
	var total int64
	for _, s := range src.Sample {
		total += s.Value[len(s.Value)-1] // the last sample type is the default
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for n := 1; ; n++ {
		run := fmt.Sprintf("p%d", n)
		body, err := pprofileotlp.NewExportRequestFromProfiles(otlptest.FromPprof(src, "faults", "v1", run)).MarshalProto()
		if err != nil {
			t.Error(err)
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Post(url+"/v1/profiles", "application/x-protobuf", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
				l.mu.Lock()
				l.statuses[resp.StatusCode]++
				l.mu.Unlock()
				if resp.StatusCode == 200 {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		l.ack(run, total, int64(len(src.Sample)))
		time.Sleep(50 * time.Millisecond)
	}
}

// receiverProc runs `flamediff receive` on a fixed address and directory,
// restartable.
type receiverProc struct {
	t         *testing.T
	args      []string
	cmd       *exec.Cmd
	stderr    *bytes.Buffer
	peakRSSKB int
}

// start starts the receiver and waits until it listens (it prints its
// address then), signal handlers set.
func (p *receiverProc) start() {
	p.cmd = exec.Command(flamediffBinary(p.t), p.args...)
	p.stderr = &bytes.Buffer{}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		p.t.Fatalf("receive did not start: %s", p.stderr)
	}
	go func() {
		for lines.Scan() {
		}
	}()
}

// stop notes the receiver's peak RSS, signals it and waits for it; a
// SIGTERM must end it cleanly.
func (p *receiverProc) stop(sig syscall.Signal) {
	p.peakRSSKB = max(p.peakRSSKB, peakRSSKB(p.t, p.cmd.Process.Pid))
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	err := p.cmd.Wait()
	if sig == syscall.SIGTERM && err != nil {
		p.t.Fatalf("receive after SIGTERM: %v\n%s", err, p.stderr)
	}
}

// peakRSSKB is a running process's peak resident memory so far (Linux's
// VmHWM). Not the rusage of the ended child: Go starts it with vfork, so
// its high-water mark would count the test binary's memory before exec.
func peakRSSKB(t *testing.T, pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestReceiveKeepsWhatItAcknowledged stops `flamediff receive` 20 times
// at random moments (0.2-0.6 s apart) under a steady load of traces, from
// the OpenTelemetry SDK's exporter, and profiles, restarting it each
// time; then every acknowledged run must be stored once, whole: its
// total and sample count those sent. The faults: SIGKILL; SIGTERM; SIGKILL
// with ClickHouse (a private server) paused for 3 s and killed and
// restarted in between, while the pending bound is small, so that
// senders get 503 with Retry-After. The faults run side by side (40-65 s on the loaded test machine);
// FLAMEDIFF_RECEIVE_SOAK=N stops it N times instead.
func TestReceiveKeepsWhatItAcknowledged(t *testing.T) {
	for _, fault := range []string{"SIGKILL", "SIGTERM", "clickhouse"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel() // mostly waiting: the three faults take the time of one
			var dsn string
			var server *chtest.Server // a private one, to pause and kill
			if fault == "clickhouse" {
				var err error
				if server, err = chtest.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = server.Resume(); _ = server.Stop() })
				dsn = "clickhouse://default:@" + server.Addr + "/default"
			} else {
				dsn = chtest.DSN(t)
			}
			mustRun(t, "migrate", "--dsn", dsn)
			addr := freeAddr(t)
			p := &receiverProc{t: t, args: []string{"receive", "--dsn", dsn, "--addr", addr, "--dir", t.TempDir(),
				"--wait", "300ms", "--commit-timeout", "2s", "--max-pending-spans", "600"}}
			l := &ledger{runs: map[string][2]int64{}, statuses: map[int]int{}}
			stop := make(chan struct{})
			var senders sync.WaitGroup
			for i := range 2 {
				senders.Go(func() { traceSender(t, "http://"+addr, uint64(i+1), l, stop) })
			}
			senders.Go(func() { profileSender(t, "http://"+addr, l, stop) })
			sig := syscall.SIGKILL
			if fault == "SIGTERM" {
				sig = syscall.SIGTERM
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(fault))))
			cycles := faultCycles()
			p.start()
			// On a loaded machine a restart takes longer and fewer requests
			// get through between faults: more faults, up to three times
			// as many, until the load is enough to prove something.
			faults := 0
			for i := 0; i < cycles || i < 3*cycles && !l.enough(); i++ {
				faults++
				time.Sleep(time.Duration(200+rng.IntN(400)) * time.Millisecond)
				switch {
				case server != nil && i == cycles/4:
					if err := server.Pause(); err != nil {
						t.Fatal(err)
					}
					time.Sleep(3 * time.Second)
					if err := server.Resume(); err != nil {
						t.Fatal(err)
					}
				case server != nil && i == cycles/2:
					server.Kill()
					time.Sleep(time.Second)
					if err := server.Restart(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				p.stop(sig)
				p.start()
			}
			close(stop)
			senders.Wait()
			p.stop(syscall.SIGTERM) // drains what is pending
			p.start()               // and a restart finds nothing left in the log
			time.Sleep(time.Second)
			p.stop(syscall.SIGTERM)

			rows, err := chtest.Conn(t, dsn).Query(context.Background(), "SELECT run, argMax(total, committed_ns),"+
				" argMax(samples, committed_ns), argMax(deleted, committed_ns) FROM runs WHERE app = 'faults' GROUP BY build, run")
			if err != nil {
				t.Fatal(err)
			}
			stored := map[string][2]int64{}
			for rows.Next() {
				var run string
				var total int64
				var samples uint64
				var deleted uint8
				if err := rows.Scan(&run, &total, &samples, &deleted); err != nil {
					t.Fatal(err)
				}
				if deleted == 0 {
					stored[run] = [2]int64{total, int64(samples)} // #nosec G115 -- a few samples
				}
			}
			var acked, kept, lost, wrong [2]int // traces, profiles: in samples
			for run, want := range l.runs {
				kind := 0
				if run[0] == 'p' {
					kind = 1
				}
				acked[kind] += int(want[1])
				got, ok := stored[run]
				switch {
				case !ok:
					lost[kind] += int(want[1])
				case got != want:
					wrong[kind] += int(want[1])
					t.Errorf("run %s stored with total %d and %d samples, sent %d and %d", run, got[0], got[1], want[0], want[1])
				default:
					kept[kind] += int(want[1])
				}
			}
			t.Logf("%s x%d: spans acknowledged %d, stored %d, lost %d, duplicated or partial %d; profile samples acknowledged %d, "+
				"stored %d, lost %d, duplicated or partial %d; profile answers %v; receiver peak RSS %d MiB",
				fault, faults, acked[0], kept[0], lost[0], wrong[0], acked[1], kept[1], lost[1], wrong[1], l.statuses, p.peakRSSKB>>10)
			if lost != [2]int{} {
				t.Errorf("acknowledged and lost: %d spans, %d profile samples", lost[0], lost[1])
			}
			if acked[0] < minAckedSpans || acked[1] < minAckedSamples {
				t.Errorf("only %d spans and %d samples acknowledged: the load proves little", acked[0], acked[1])
			}
			if server != nil && l.statuses[503] == 0 {
				t.Errorf("no 503 while ClickHouse was down: %v", l.statuses)
			}
		})
	}
}

// deepRequestMiB bounds the receiver's peak memory while it refuses a
// request nested 1.6M deep (docs/OTLP.md).
const deepRequestMiB = 128

// TestReceiveRefusesDeepRequest posts a traces request whose attribute
// value nests 1.6M arrays deep (13 MB, under the 16 MiB cap; it crashed
// pdata's decoder with a stack overflow): 400, naming the depth, and the
// process stays under deepRequestMiB of peak memory.
func TestReceiveRefusesDeepRequest(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	addr := freeAddr(t)
	p := &receiverProc{t: t, args: []string{"receive", "--dsn", dsn, "--addr", addr, "--dir", t.TempDir()}}
	p.start()
	body := otlptest.NestedTraces(1_600_000, nil)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, answer := testkit.Do(t, req)
	if resp.StatusCode != 400 || !bytes.Contains(answer, []byte("messages nest more than 64 deep")) {
		t.Errorf("%d bytes nested 1.6M deep: %d %q", len(body), resp.StatusCode, answer)
	}
	p.stop(syscall.SIGTERM)
	t.Logf("peak RSS %d MiB refusing a %d-byte request nested 1.6M deep", p.peakRSSKB>>10, len(body))
	if p.peakRSSKB>>10 > deepRequestMiB {
		t.Errorf("peak RSS %d MiB, over %d", p.peakRSSKB>>10, deepRequestMiB)
	}
}
