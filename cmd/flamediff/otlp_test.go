package main

import (
	"bufio"
	"bytes"
	be "encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/otlptest"
	"github.com/flamediff/flamediff/internal/testkit"
)

// TestIngestOTLPProfilesLikePprof: each pprof file the tests hold and
// its OTLP conversion — a protobuf file, and the Collector file
// exporter's JSON lines and length-prefixed protobuf — store the same
// stacks and values, for every sample type.
func TestIngestOTLPProfilesLikePprof(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	dir := t.TempDir()
	files := testkit.PprofFiles(t)
	if len(files) < 10 {
		t.Fatalf("only %d pprof files", len(files))
	}
	for _, file := range files {
		src, _ := otlptest.ReadPprof(t, file)
		name := filepath.Base(file)
		pd := otlptest.FromPprof(src, "otlp", "1", name)
		enc := otlptest.Encodings(t, pd)
		pb, js := enc["protobuf"], enc["json"]
		prefixed := be.BigEndian.AppendUint32(nil, uint32(len(pb)))
		encoded := map[string][]byte{".pb": pb, ".jsonl": append(js, '\n'), ".prefixed": append(prefixed, pb...)}
		for _, st := range src.SampleType {
			pprofRun := name + "-" + st.Type
			mustRun(t, "ingest", "--dsn", dsn, "--app", "otlp", "--build", "pprof", "--run", pprofRun,
				"--format", "pprof", "--sample-type", st.Type, file)
			want := mustRun(t, "export", "--dsn", dsn, "--app", "otlp", "--build", "pprof", "--run", pprofRun, "--output", "folded")
			for ext, body := range encoded {
				path := filepath.Join(dir, name+ext)
				if err := os.WriteFile(path, body, 0o600); err != nil {
					t.Fatal(err)
				}
				build := "otlp" + ext
				out := mustRun(t, "ingest", "--dsn", dsn, "--format", "otlp", "--build", build, "--sample-type", st.Type, path)
				if !strings.Contains(out, "stored otlp/"+build+"/"+name) {
					t.Fatalf("ingest printed %q", out)
				}
				got := mustRun(t, "export", "--dsn", dsn, "--app", "otlp", "--build", build, "--run", name, "--output", "folded")
				if got != want {
					t.Errorf("%s %s %s: OTLP stores\n%.400s\npprof stores\n%.400s", name, ext, st.Type, got, want)
				}
			}
		}
	}
}

// TestIngestOTLPTraces stores a file of traces as span runs and prints
// the summary; bad input stores nothing.
func TestIngestOTLPTraces(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	td := otlptest.Traces(otlptest.Resource{Attrs: otlptest.Service("shop", "1.2"), Spans: []otlptest.Span{
		{Trace: 1, ID: 1, Name: "checkout", Start: 0, End: 100},
		{Trace: 1, ID: 2, Parent: 1, Name: "pay", Start: 10, End: 150},
		{Trace: 2, ID: 3, Name: "checkout", Start: 0, End: 80},
		{Trace: 2, ID: 4, Parent: 9, Name: "lost", Start: 5, End: 10},
	}})
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "traces.json", string(js))
	out := mustRun(t, "ingest", "--dsn", dsn, "--format", "otlp-traces", file)
	for _, want := range []string{"stored shop/1.2/7a000000000000000000000000000001: 2 samples, total 100 nanoseconds",
		"stored shop/1.2/7a000000000000000000000000000002: 2 samples, total 85 nanoseconds",
		"traces: 4 spans in 2 traces, 1 with a missing parent, 1 clipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("ingest printed %q, want %q", out, want)
		}
	}
	got := mustRun(t, "export", "--dsn", dsn, "--app", "shop", "--build", "1.2", "--run", "7a000000000000000000000000000001", "--output", "folded")
	if want := "shop: checkout 10\nshop: checkout;shop: pay 90\n"; got != want {
		t.Errorf("export %q, want %q", got, want)
	}
	bad := writeFile(t, "bad.json", string(bytes.Replace(js, []byte(`"name":"lost"`), []byte(`"name":7`), 1)))
	if _, err := flamediff(t, "ingest", "--dsn", dsn, "--format", "otlp-traces", "--build", "bad", bad); err == nil {
		t.Fatal("a malformed file was accepted")
	}
	if n := count(t, dsn, "SELECT count() FROM runs WHERE build = 'bad'"); n != 0 {
		t.Errorf("%d runs stored from a malformed file", n)
	}
}

// writeScenario writes runs traces of the generated scenario for build
// as one OTLP protobuf file (the file exporter's length-prefixed stream,
// a message per trace).
func writeScenario(t *testing.T, rng *rand.Rand, build string, runs int, firstTrace uint64, slower map[string]float64) string {
	t.Helper()
	var data []byte
	for i := range runs {
		td := otlptest.Traces(otlptest.ScenarioTrace(rng, firstTrace+uint64(i), build, 0.05, slower)...)
		pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		data = be.BigEndian.AppendUint32(data, uint32(len(pb)))
		data = append(data, pb...)
	}
	return writeFile(t, build+".otlp", string(data))
}

// TestSpanDiff: among runs whose every span varies by 5%, a span made 30%
// slower in one build is a significant regression of the diff, with its
// callers; in a build with nothing planted (A/A) nothing is significant.
func TestSpanDiff(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	rng := rand.New(rand.NewPCG(28, 1))
	files := map[string]string{
		"base": writeScenario(t, rng, "base", 10, 1000, nil),
		"same": writeScenario(t, rng, "same", 10, 2000, nil),
		"slow": writeScenario(t, rng, "slow", 10, 3000, map[string]float64{"db: scan": 1.3}),
	}
	for _, f := range files {
		mustRun(t, "ingest", "--dsn", dsn, "--format", "otlp-traces", f)
	}
	model := func(head string) string {
		return `{"queryType":"diff","app":"test","head":{"builds":["` + head + `"]},"base":{"builds":["base"]}}`
	}
	out, err := flamediff(t, "query", "--dsn", dsn, "--output", "markdown", "--fail-on-regression", "--model", model("slow"))
	if !isRegression(err) || !strings.Contains(out, "### Flamediff: FAIL") || !strings.Contains(out, "| `db: scan` |") {
		t.Errorf("planted slower span: %v\n%s", err, out)
	}
	if strings.Contains(out, "| `db: query` |") || strings.Contains(out, "| `cache: get` |") {
		t.Errorf("a span that did not change is reported:\n%s", out)
	}
	out, err = flamediff(t, "query", "--dsn", dsn, "--output", "markdown", "--fail-on-regression", "--model", model("same"))
	// 5% noise in 10 runs a side may leave a small change possible
	// (INCONCLUSIVE), but no span changes significantly.
	if lower := strings.ToLower(out); err != nil || strings.Contains(out, "FAIL") || !strings.Contains(lower, "regressions (0)") ||
		!strings.Contains(lower, "improvements (0)") {
		t.Errorf("A/A: %v\n%s", err, out)
	}
}

// TestReceiveCommand runs `flamediff receive`: with a token in
// $FLAMEDIFF_RECEIVE_TOKEN a request without it gets 401 and one that
// names a foreign Host 421; spans posted with it are stored when it is
// interrupted, before the wait is over; a non-loopback address without a
// token is refused.
func TestReceiveCommand(t *testing.T) {
	dsn := chtest.DSN(t)
	mustRun(t, "migrate", "--dsn", dsn)
	if stderr, code := runBinary(t, "receive", "--dsn", dsn, "--addr", "0.0.0.0:0"); code != 2 || !strings.Contains(stderr, "not loopback: give a bearer token") {
		t.Fatalf("non-loopback without a token: exit %d, %s", code, stderr)
	}
	cmd := exec.Command(flamediffBinary(t), "receive", "--dsn", dsn, "--addr", "127.0.0.1:0", "--wait", "1h", "--dir", t.TempDir())
	cmd.Env = append(os.Environ(), "FLAMEDIFF_RECEIVE_TOKEN=t0ken")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("no address printed: %s", stderr.String())
	}
	url := strings.Fields(lines.Text())[2] // flamediff receive: URL and ...
	td := otlptest.Traces(otlptest.ScenarioTrace(rand.New(rand.NewPCG(9, 9)), 1, "v9", 0, nil)...)
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	status := func(host, token string) int {
		resp, _ := send(t, url, host, string(body), map[string]string{"Content-Type": "application/x-protobuf", "Authorization": "Bearer " + token})
		return resp.StatusCode
	}
	if code := status("", "wrong"); code != 401 {
		t.Errorf("a wrong token: status %d, want 401", code)
	}
	if code := status("rebound.example", "t0ken"); code != 421 {
		t.Errorf("a foreign Host: status %d, want 421", code)
	}
	if code := status("", "t0ken"); code != 200 {
		t.Fatalf("status %d", code)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("receive: %v\n%s", err, stderr.String())
	}
	if want := "received 7 spans into 1 runs"; !strings.Contains(rest.String(), want) {
		t.Errorf("receive printed %q, want %q", rest.String(), want)
	}
	if n := count(t, dsn, "SELECT count() FROM runs WHERE app = 'test' AND build = 'v9'"); n != 1 {
		t.Errorf("%d runs stored at shutdown, want 1", n)
	}
}
