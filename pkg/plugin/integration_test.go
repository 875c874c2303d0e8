package plugin_test

// Integration tests: the built plugin binary, launched over go-plugin like
// Grafana does, against a real ClickHouse loaded with testdata profiles.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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
