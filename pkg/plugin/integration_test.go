package plugin_test

// Integration tests: the built plugin binary, launched over go-plugin like
// Grafana does, against a real ClickHouse loaded with testdata profiles.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/internal/plugintest"
	"github.com/flamediff/flamediff/internal/pproftop"
	"github.com/flamediff/flamediff/internal/profilefile"
	"github.com/flamediff/flamediff/internal/testkit"
	"github.com/flamediff/flamediff/internal/teststore"
	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

var (
	pluginBinary string // the data source, built once
	binDir       string // where the binaries are built
	moduleRoot   string

	cliOnce   sync.Once
	cliBinary string // `flamediff`, built on first use
	cliErr    error
)

// flamediffCLI builds the command-line tool once.
func flamediffCLI(t *testing.T) string {
	cliOnce.Do(func() {
		cliBinary = filepath.Join(binDir, "flamediff")
		cmd := exec.Command("go", "build", "-o", cliBinary, "./cmd/flamediff")
		cmd.Dir = moduleRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("build flamediff: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliBinary
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flamediff-plugin-test")
	if err == nil {
		moduleRoot, err = plugintest.ModuleRoot()
	}
	if err == nil {
		pluginBinary, err = plugintest.Build(moduleRoot, dir, raceEnabled)
	}
	binDir = dir
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chtest.Main(m, func() { os.RemoveAll(dir) })
}

// Names full of SQL metacharacters, quotes, backslashes and unicode: they
// must reach ClickHouse as bound parameters and round-trip unchanged.
const (
	hostileApp  = `pprof 'app' "x" \ ; DROP TABLE runs; -- ü`
	hostileBase = `base'); SELECT 1; --`
	hostileHead = "head `\\' 名前"
)

// fixture is a database loaded with the shared pprof test profiles: build
// hostileBase (base-run*.pb.gz) and hostileHead (head-run*.pb.gz).
type fixture struct {
	plugin     *plugintest.Client
	settings   plugintest.Settings
	head, base []string       // the files
	store      *storage.Store // the database the plugin reads (loadPprofOn)
}

// migratedStore opens a fresh database with Flamediff's tables and
// returns it with its DSN; it is closed when the test ends. The tables
// are on the private cluster when chtest.OnCluster.
func migratedStore(t testing.TB) (*storage.Store, string) {
	t.Helper()
	return teststore.Fresh(t, chtest.OnCluster())
}

func loadPprof(t *testing.T) *fixture {
	t.Helper()
	return loadPprofOn(t, chtest.OnCluster())
}

func loadPprofOn(t *testing.T, cluster bool) *fixture {
	t.Helper()
	store, dsn := teststore.Fresh(t, cluster)
	ctx := context.Background()
	var head, base []string
	for _, side := range []struct {
		build string
		files *[]string
		side  string
	}{{hostileBase, &base, "base"}, {hostileHead, &head, "head"}} {
		files := testkit.PprofRuns(t, side.side)
		*side.files = files
		for i, name := range files {
			p := parseFile(t, name)
			meta := storage.RunMeta{App: hostileApp, Build: side.build, Run: fmt.Sprintf("run '%d'", i+1),
				Labels: map[string]string{"host\"": "ci-1 \\"}}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				t.Fatalf("ingest %s: %v", name, err)
			}
		}
	}
	f := startOn(t, dsn)
	f.head, f.base, f.store = head, base, store
	return f
}

func parseFile(t *testing.T, name string) *profile.Profile {
	t.Helper()
	p, err := profilefile.Parse(name, ingest.Options{Format: ingest.Auto})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startOn starts the plugin against the database of dsn.
func startOn(t testing.TB, dsn string) *fixture {
	t.Helper()
	settings, err := plugintest.SettingsFromDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{plugin: plugintest.Start(t, pluginBinary), settings: settings}
}

// oneFrame runs a query that answers one frame and returns it.
func (f *fixture) oneFrame(t testing.TB, model map[string]any) *data.Frame {
	t.Helper()
	frames := f.mustQuery(t, model)
	if len(frames) != 1 {
		t.Fatalf("query %v: %d frames, want 1", model, len(frames))
	}
	return frames[0]
}

// query sends one query and returns its response, failing on a transport
// error (a query error is the caller's to check).
func (f *fixture) query(t testing.TB, model map[string]any) backend.DataResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := f.plugin.QueryData(ctx, f.settings, plugintest.Query{RefID: "A", JSON: mustJSON(t, model)})
	if err != nil {
		t.Fatalf("QueryData transport: %v", err)
	}
	return resp.Responses["A"]
}

func (f *fixture) mustQuery(t testing.TB, model map[string]any) data.Frames {
	t.Helper()
	r := f.query(t, model)
	if r.Error != nil {
		t.Fatalf("query %v: %v", model, r.Error)
	}
	return r.Frames
}

func sel(builds ...string) map[string]any { return map[string]any{"builds": builds} }

func TestCheckHealth(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	res, err := f.plugin.CheckHealth(ctx, f.settings)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != backend.HealthStatusOk || !strings.Contains(res.Message, "ClickHouse 18.") && !strings.Contains(res.Message, "ClickHouse 2") {
		t.Errorf("healthy data source: %v %q", res.Status, res.Message)
	}

	for i, c := range healthFailures(t) {
		t.Run(c.name, func(t *testing.T) {
			s := copySettings(f.settings)
			s.UID = fmt.Sprintf("health-%d", i)
			c.change(&s)
			res, err := f.plugin.CheckHealth(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != backend.HealthStatusError || !strings.Contains(res.Message, c.want) {
				t.Errorf("got %v %q, want an error containing %q", res.Status, res.Message, c.want)
			}
		})
	}
}

// healthCase is a change to working settings and the words of the
// failed health check's message (none: the check passes).
type healthCase struct {
	name   string
	change func(s *plugintest.Settings)
	want   string
}

// healthFailures are the settings a health check must fail on.
func healthFailures(t testing.TB) []healthCase {
	return []healthCase{
		{"missing tables", func(s *plugintest.Settings) { s.JSONData["tables"] = map[string]any{"runs": "no_such_runs"} },
			"no_such_runs is missing"},
		{"no database", func(s *plugintest.Settings) { s.JSONData["defaultDatabase"] = "flamediff_never_migrated" },
			"has no database \"flamediff_never_migrated\" (run `flamediff migrate`)"},
		{"unreachable", func(s *plugintest.Settings) { s.JSONData["port"] = closedPort(t) }, "unreachable"},
		{"unknown user", func(s *plugintest.Settings) { s.JSONData["username"] = "nobody" }, `credentials of user "nobody"`},
		{"bad protocol", func(s *plugintest.Settings) { s.JSONData["protocol"] = "carrier-pigeon" }, "protocol must be native or http"},
		{"bad table name", func(s *plugintest.Settings) { s.JSONData["tables"] = map[string]any{"runs": "runs; DROP"} }, "invalid identifier"},
	}
}

// TestNoDatabase: queries and resources on a server where migrate never
// ran say to run it.
func TestNoDatabase(t *testing.T) {
	s, err := plugintest.SettingsFromDSN("clickhouse://default:@" + chtest.Addr(t) + "/flamediff_never_migrated")
	if err != nil {
		t.Fatal(err)
	}
	plugin := plugintest.Start(t, pluginBinary)
	ctx := context.Background()
	const want = "run `flamediff migrate`"
	if code, body, err := plugin.Resource(ctx, s, "apps"); err != nil || code != 502 || !strings.Contains(string(body), want) {
		t.Errorf("apps: %d %s %v, want 502 saying to %s", code, body, err, want)
	}
	resp, err := plugin.QueryData(ctx, s, plugintest.Query{RefID: "A", JSON: `{"queryType":"evolution","app":"a"}`})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Responses["A"]; r.Status != 502 || r.Error == nil || !strings.Contains(r.Error.Error(), want) {
		t.Errorf("query: %v %v, want 502 saying to %s", r.Status, r.Error, want)
	}
}

func copySettings(s plugintest.Settings) plugintest.Settings {
	c := s
	c.JSONData = map[string]any{}
	for k, v := range s.JSONData {
		c.JSONData[k] = v
	}
	c.Updated = time.Now()
	return c
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestResources(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	get := func(path string) (int, string) {
		code, body, err := f.plugin.Resource(ctx, f.settings, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return code, string(body)
	}
	esc := func(s string) string { return url.QueryEscape(s) }

	code, body := get("apps")
	var apps []string
	if code != 200 || json.Unmarshal([]byte(body), &apps) != nil || len(apps) != 1 || apps[0] != hostileApp {
		t.Errorf("apps: %d %s", code, body)
	}
	code, body = get("builds?app=" + esc(hostileApp))
	var builds []struct {
		Name string `json:"name"`
		Runs int    `json:"runs"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &builds) != nil || len(builds) != 2 {
		t.Fatalf("builds: %d %s", code, body)
	}
	names := map[string]int{builds[0].Name: builds[0].Runs, builds[1].Name: builds[1].Runs}
	if names[hostileBase] != len(f.base) || names[hostileHead] != len(f.head) {
		t.Errorf("builds: %s", body)
	}
	code, body = get("runs?app=" + esc(hostileApp) + "&build=" + esc(hostileHead))
	var runs []struct {
		Name   string            `json:"name"`
		Build  string            `json:"build"`
		Labels map[string]string `json:"labels"`
		Total  int64             `json:"total"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &runs) != nil || len(runs) != len(f.head) {
		t.Fatalf("runs: %d %s", code, body)
	}
	for _, r := range runs {
		if r.Build != hostileHead || !strings.HasPrefix(r.Name, "run '") || r.Labels["host\""] != "ci-1 \\" || r.Total <= 0 {
			t.Errorf("run %+v", r)
		}
	}
	code, body = get("functions?app=" + esc(hostileApp) + "&q=REGEXP")
	var fns []string
	if code != 200 || json.Unmarshal([]byte(body), &fns) != nil || len(fns) == 0 {
		t.Fatalf("functions: %d %s", code, body)
	}
	for _, fn := range fns {
		if !strings.Contains(strings.ToLower(fn), "regexp") {
			t.Errorf("functions?q=REGEXP returned %q", fn)
		}
	}

	for path, want := range map[string]int{
		"builds":                       400,
		"builds?app=" + esc("no' app"): 404,
		"runs?app=" + esc(hostileApp) + "&build=nope": 404,
		"functions?app=x&limit=lots":                  400,
		"nothing-here":                                404,
	} {
		if code, body := get(path); code != want {
			t.Errorf("%s: status %d (%s), want %d", path, code, body, want)
		}
	}
}

// TestDiffEqualsCLI: the diff and functions answered over gRPC from
// ClickHouse equal `flamediff query` on the same files, frame for frame,
// per-node statistics included: every variant, both normalisations.
func TestDiffEqualsCLI(t *testing.T) {
	f := loadPprof(t)
	var cases [][]string
	for _, norm := range [][]string{nil, {"--normalize", "relative"}} {
		for _, opts := range [][]string{nil, {"--inverted"}, {"--collapse-system"}, {"--variants"}, {"--max-nodes", "50"}} {
			cases = append(cases, append(append([]string{"--type", "diff"}, opts...), norm...))
		}
		cases = append(cases, append([]string{"--type", "functions", "--alpha", "0.2"}, norm...))
	}
	// Around the culprit: a sandwich, the filters, only new.
	cases = append(cases,
		[]string{"--type", "diff", "--sandwich", "encoding/json.(*decodeState).object", "--variants"},
		[]string{"--type", "diff", "--sandwich", "runtime.mallocgc", "--max-nodes", "50", "--normalize", "relative"},
		[]string{"--type", "diff", "--keep", `^(main|encoding/json)\.`, "--hide", `^runtime\.`, "--variants"},
		[]string{"--type", "functions", "--drop", `^runtime\.gc`, "--show-from", `^main\.`},
		[]string{"--type", "diff", "--only", "new"},
	)
	for _, opts := range cases {
		t.Run(strings.Join(opts, " "), func(t *testing.T) {
			model := map[string]any{"app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
			for i := 0; i < len(opts); i++ {
				switch opts[i] {
				case "--type":
					model["queryType"] = opts[i+1]
					i++
				case "--inverted":
					model["inverted"] = true
				case "--collapse-system":
					model["collapseSystem"] = true
				case "--variants":
					model["variants"] = true
				case "--max-nodes":
					model["maxNodes"] = 50
					i++
				case "--normalize":
					model["normalize"] = opts[i+1]
					i++
				case "--alpha":
					model["alpha"] = 0.2
					i++
				case "--sandwich", "--keep", "--drop", "--only":
					model[opts[i][2:]] = opts[i+1]
					i++
				case "--hide", "--show-from":
					model[map[string]string{"--hide": "hideFrames", "--show-from": "showFrom"}[opts[i]]] = opts[i+1]
					i++
				}
			}
			got := f.mustQuery(t, model)
			args := append([]string{"query", "--output", "json", "--head"}, f.head...)
			args = append(append(append(args, "--base"), f.base...), opts...)
			out, err := exec.Command(flamediffCLI(t), args...).Output()
			if err != nil {
				t.Fatalf("flamediff %v: %v", args, err)
			}
			var want data.Frames
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d frames over gRPC, %d from the CLI", len(got), len(want))
			}
			for i := range got {
				got[i].RefID = ""
				g, w := mustJSON(t, got[i]), mustJSON(t, want[i])
				if g != w {
					t.Errorf("frame %d differs:\n grpc %.600s\n cli  %.600s", i, g, w)
				}
				if n, _ := got[i].RowLen(); n < 10 && got[i].Name != "culprits" {
					t.Errorf("frame %d has only %d nodes: test data too small to mean anything", i, n)
				}
				if q, _ := got[i].FieldByName("qValue"); q == nil {
					t.Errorf("frame %d has no statistics", i)
				}
			}
		})
	}
}

// TestFunctionsMatchPprof: the functions query over gRPC equals
// `go tool pprof -top -diff_base` on the same files (per-run values times
// the run count give pprof's sums).
func TestFunctionsMatchPprof(t *testing.T) {
	f := loadPprof(t)
	want, err := pproftop.Top(f.head, f.base)
	if err != nil {
		t.Fatal(err)
	}
	frames := f.mustQuery(t, map[string]any{"queryType": "functions", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)})
	if len(f.head) != len(f.base) {
		t.Fatal("pprof's -diff_base sums sides; the test needs equal run counts")
	}
	if len(want) < 20 {
		t.Fatalf("pprof listed only %d functions", len(want))
	}
	samePprof(t, pprofEntries(t, frames[0], float64(len(f.head))), want)
}

// samePprof checks rows read from a frame against pprof's.
func samePprof(t *testing.T, got, want map[string]pproftop.Entry) {
	t.Helper()
	for name, w := range want {
		if w != (pproftop.Entry{}) && got[name] != w {
			t.Errorf("%s: %+v over gRPC, pprof says %+v", name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %+v over gRPC, absent from pprof", name, g)
		}
	}
}

// pprofEntries reads a diff's functions frame as pprof's -top -diff_base
// rows: per-run values times the run count give pprof's sums.
func pprofEntries(t *testing.T, fr *data.Frame, runs float64) map[string]pproftop.Entry {
	t.Helper()
	col := func(name string) *data.Field {
		fl, _ := fr.FieldByName(name)
		if fl == nil {
			t.Fatalf("functions frame lacks %s", name)
		}
		return fl
	}
	fn, sh, th, sb, tb := col("function"), col("selfHead"), col("totalHead"), col("selfBase"), col("totalBase")
	got := map[string]pproftop.Entry{}
	for i := 0; i < fn.Len(); i++ {
		flat := (sh.At(i).(float64) - sb.At(i).(float64)) * runs
		cum := (th.At(i).(float64) - tb.At(i).(float64)) * runs
		if flat != 0 || cum != 0 {
			got[fn.At(i).(string)] = pproftop.Entry{Flat: int64(math.Round(flat)), Cum: int64(math.Round(cum))}
		}
	}
	return got
}

func TestFlameGraphAndRuns(t *testing.T) {
	f := loadPprof(t)
	fg := f.mustQuery(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})
	if len(fg) != 1 || fg[0].Meta == nil || fg[0].Meta.PreferredVisualization != data.VisTypeFlameGraph {
		t.Fatalf("flamegraph frames: %+v", fg)
	}
	if _, idx := fg[0].FieldByName("valueRight"); idx >= 0 {
		t.Error("a single flame graph has no valueRight")
	}
	var total int64
	for _, name := range f.head {
		total += parseFile(t, name).Total()
	}
	value, _ := fg[0].FieldByName("value")
	if root := value.At(0).(float64); math.Abs(root-float64(total)/float64(len(f.head))) > 1e-6*root {
		t.Errorf("root %v, want the per-run average %v", root, float64(total)/float64(len(f.head)))
	}

	frames := f.mustQuery(t, map[string]any{"queryType": "runs", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)})
	if len(frames) != 2 || frames[0].Name != "runs" || frames[1].Name != "runs_summary" {
		t.Fatalf("runs frames: %v", frames)
	}
	if n, _ := frames[0].RowLen(); n != len(f.head)+len(f.base) {
		t.Errorf("runs frame has %d rows, want %d", n, len(f.head)+len(f.base))
	}
	p, _ := frames[1].FieldByName("pValue")
	pv, ok := p.ConcreteAt(0)
	if !ok || pv.(float64) <= 0 || pv.(float64) > 1 {
		t.Errorf("summary pValue %v", pv)
	}
}

// TestHostileQueries: SQL metacharacters in every string field, absurd
// numbers, unknown types and malformed JSON each give an error or an
// empty answer, and the plugin keeps serving.
func TestHostileQueries(t *testing.T) {
	f := loadPprof(t)
	evil := []string{`'`, `"`, `\`, "`", `'; DROP TABLE runs; --`, `%`, `_`, "\x00", `') OR 1=1 --`, "名前", strings.Repeat("x", 2000)}
	fields := []func(m map[string]any, s string){
		func(m map[string]any, s string) { m["app"] = s },
		func(m map[string]any, s string) { m["profileType"] = s },
		func(m map[string]any, s string) { m["head"] = map[string]any{"builds": []string{s}} },
		func(m map[string]any, s string) {
			m["head"] = map[string]any{"builds": []string{hostileHead}, "runs": []string{s}}
		},
		func(m map[string]any, s string) { m["base"] = map[string]any{"builds": []string{s}} },
		func(m map[string]any, s string) { m["builds"] = []string{s} },
		func(m map[string]any, s string) { m["function"] = s },
		func(m map[string]any, s string) { m["baseline"] = s },
	}
	for _, qt := range []string{"flamegraph", "diff", "functions", "runs", "evolution", "timeseries"} {
		for fi, set := range fields {
			for _, s := range evil {
				m := map[string]any{"queryType": qt, "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
				set(m, s)
				r := f.query(t, m)
				if r.Error == nil && len(r.Frames) == 0 {
					t.Errorf("%s field %d %q: neither error nor frames", qt, fi, s)
				}
			}
		}
	}
	ctx := context.Background()
	raw := []string{`{`, `[]`, `null`, `{"queryType": 7}`, `{"queryType":"drop"}`, `{"queryType":"diff","app":"x","maxNodes":-1}`,
		`{"queryType":"diff","app":"x","head":{"builds":"notalist"}}`, `{"queryType":"evolution","app":"x","threshold":5}`}
	for _, js := range raw {
		resp, err := f.plugin.QueryData(ctx, f.settings, plugintest.Query{RefID: "A", JSON: js})
		if err != nil {
			t.Fatalf("%s: transport error %v", js, err)
		}
		r := resp.Responses["A"]
		if r.Error == nil || r.Status != backend.StatusBadRequest {
			t.Errorf("%s: got status %v error %v, want a bad request", js, r.Status, r.Error)
		}
	}
	// A huge maxNodes is taken (clamped to the cap: TestHugeMaxNodesIsClamped).
	big := f.mustQuery(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase), "maxNodes": 1e15})
	if n, _ := big[0].RowLen(); n == 0 {
		t.Error("huge maxNodes gave an empty tree")
	}
	// Unknown names are explained.
	r := f.query(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel("9.9.9"), "base": sel(hostileBase)})
	if r.Error == nil || !strings.Contains(r.Error.Error(), "unknown build") || r.Status != backend.StatusNotFound {
		t.Errorf("unknown build: %v %v", r.Status, r.Error)
	}
	if f.plugin.Exited() {
		t.Fatal("the plugin died")
	}
	// Still serving.
	f.mustQuery(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})
}

// TestHugeMaxNodesIsClamped: a maxNodes above the documented cap of
// 2,000,000 (docs/QUERIES.md) counts as the cap. The run's stacks hold
// 2.1M frames, so only the clamp bounds its tree by the cap; the query's
// memory check, which sizes the tree by that bound, then refuses it with
// the bound in its message (2,000,000 nodes of 400 bytes are above a
// 640 MB budget), which shows the clamp without a 2M-node answer.
func TestHugeMaxNodesIsClamped(t *testing.T) {
	const stacks, depth = 1000, 2100
	store, dsn := migratedStore(t)
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
	deep := p.Intern(profile.Frame{Name: "deep"})
	for i := range stacks {
		stack := []uint32{p.Intern(profile.Frame{Name: fmt.Sprintf("top%d", i)})}
		for range depth - 1 {
			stack = append(stack, deep)
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: stack, Value: 10_000_000})
	}
	meta := storage.RunMeta{App: "clamp", Build: "deep", Run: "run-1", Start: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	if err := store.Write(context.Background(), meta, p, nil); err != nil {
		t.Fatal(err)
	}
	f := startOn(t, dsn)
	f.settings.JSONData["maxQueryMemory"] = 640
	r := f.query(t, map[string]any{"queryType": "flamegraph", "app": "clamp", "head": sel("deep"), "maxNodes": 1e15})
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "up to 2000000 nodes") {
		t.Errorf("maxNodes 1e15 on %d stack frames: %v %v, want 400 for a tree of up to 2000000 nodes", stacks*depth, r.Status, r.Error)
	}
}

// TestClickHouseDownAndTimeout: a dead server and a too-short timeout give
// per-query errors, not a crash.
func TestClickHouseDownAndTimeout(t *testing.T) {
	f := loadPprof(t)
	ctx := context.Background()
	down := copySettings(f.settings)
	down.UID, down.JSONData["port"], down.JSONData["dialTimeout"] = "down", closedPort(t), 1
	q := plugintest.Query{RefID: "A", JSON: mustJSON(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})}
	resp, err := f.plugin.QueryData(ctx, down, q, plugintest.Query{RefID: "B", JSON: q.JSON})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"A", "B"} {
		if r := resp.Responses[ref]; r.Error == nil || !strings.Contains(r.Error.Error(), "ClickHouse") || r.Status != backend.StatusBadGateway {
			t.Errorf("%s with ClickHouse down: %v %v", ref, r.Status, r.Error)
		}
	}
	slow := copySettings(f.settings)
	slow.UID, slow.JSONData["queryTimeout"] = "slow", "0.000001"
	resp, err = f.plugin.QueryData(ctx, slow, q)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Responses["A"]; r.Error == nil || r.Status != backend.StatusTimeout {
		t.Errorf("tiny timeout: %v %v", r.Status, r.Error)
	}
	f.mustQuery(t, map[string]any{"queryType": "flamegraph", "app": hostileApp, "head": sel(hostileHead)})
}

// TestLoad sends 200 diff queries, 20 at a time, over one plugin process.
// The test script runs it with -race.
func TestLoad(t *testing.T) {
	f := loadPprof(t)
	model := mustJSON(t, map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase), "variants": true})
	const total, concurrency = 200, 20
	var wg sync.WaitGroup
	errs := make(chan error, total)
	work := make(chan int)
	var first []byte
	var mu sync.Mutex
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				resp, err := f.plugin.QueryData(context.Background(), f.settings, plugintest.Query{RefID: "A", JSON: model})
				if err == nil && resp.Responses["A"].Error != nil {
					err = resp.Responses["A"].Error
				}
				if err != nil {
					errs <- fmt.Errorf("query %d: %w", i, err)
					continue
				}
				b, _ := json.Marshal(resp.Responses["A"].Frames)
				mu.Lock()
				if first == nil {
					first = b
				} else if !bytes.Equal(first, b) {
					errs <- fmt.Errorf("query %d answered differently", i)
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	for i := 0; i < total; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d diff queries (4 variants each) at concurrency %d in %v", total, concurrency, time.Since(start))
}

// TestFocus: a focus query returns the path's subtree only; a path the
// tree lacks is the user's mistake (400), naming the path.
func TestFocus(t *testing.T) {
	f := loadPprof(t)
	model := map[string]any{"queryType": "diff", "app": hostileApp, "head": sel(hostileHead), "base": sel(hostileBase)}
	whole := f.mustQuery(t, model)[0]
	level, _ := whole.FieldByName("level")
	label, _ := whole.FieldByName("label")
	text := func(fr *data.Frame, i int) string { return labelAt(fr, i) }
	last := ""
	for i := range level.Len() {
		if level.At(i).(int64) == 1 {
			last = text(whole, i) // the last child of the root: not the largest
		}
	}
	model["focus"] = []string{last}
	focused := f.mustQuery(t, model)[0]
	fl, _ := focused.FieldByName("level")
	for i := range fl.Len() {
		if fl.At(i).(int64) == 1 && text(focused, i) != last {
			t.Errorf("focus on %q returned the root child %q", last, text(focused, i))
		}
	}
	if n := fl.Len(); n < 2 || n >= label.Len() {
		t.Errorf("focused tree has %d nodes, the whole %d", n, label.Len())
	}
	model["focus"] = []string{last, "no such frame"}
	r := f.query(t, model)
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "no such frame") {
		t.Errorf("unknown focus: %v (status %d)", r.Error, r.Status)
	}
}

// labelAt is the label of node i (an enum or a string field).
func labelAt(fr *data.Frame, i int) string {
	fl, _ := fr.FieldByName("label")
	if v, ok := fl.At(i).(data.EnumItemIndex); ok {
		return fl.Config.TypeConfig.Enum.Text[v]
	}
	return fmt.Sprint(fl.At(i))
}
