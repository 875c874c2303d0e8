// Package plugintest runs the built data source binary the way Grafana
// does — hashicorp/go-plugin with grpcplugin's handshake — and calls its
// pluginv2 gRPC services, so integration tests, the load test and the
// benchmarks exercise the real process, not the Go types behind it.
package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/grafana/grafana-plugin-sdk-go/backend/grpcplugin"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
)

// PluginID is the data source's plugin id.
const PluginID = "flamediff-clickhouse-datasource"

// Build compiles the plugin (the module's ./pkg) into dir and returns the
// binary's path. moduleRoot is the repository root. With race, the binary
// has the race detector, so that a load test under `go test -race` checks
// the plugin process too, not only the test's client. Build tags (such as
// faultinject) give a binary of their own, named after them.
func Build(moduleRoot, dir string, race bool, tags ...string) (string, error) {
	name := "gpx_flamediff"
	args := []string{"build"}
	if len(tags) > 0 {
		name += "_" + strings.Join(tags, "_")
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	bin := filepath.Join(dir, name)
	args = append(args, "-o", bin)
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./pkg")...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s ./pkg: %v\n%s", strings.Join(args[1:], " "), err, out)
	}
	return bin, nil
}

// Client is one running plugin process.
type Client struct {
	proc *goplugin.Client
	diag grpcplugin.DiagnosticsClient
	res  grpcplugin.ResourceClient
	data grpcplugin.DataClient
}

// Start launches the binary with Grafana's handshake and dispenses the
// diagnostics, resource and data services; the process is killed when
// the test ends. The plugin's log goes to the test log only on failure.
func Start(t testing.TB, binary string) *Client {
	t.Helper()
	return StartEnv(t, binary)
}

// StartEnv is Start with more environment variables (KEY=value) for the
// plugin process, after the test's own.
func StartEnv(t testing.TB, binary string, env ...string) *Client {
	t.Helper()
	cmd := exec.Command(binary)
	// A race-enabled plugin dies at its first race, failing the test's
	// queries, instead of reporting it into a log nobody reads.
	cmd.Env = append(append(os.Environ(), "GORACE=halt_on_error=1"), env...)
	var log lockedBuffer
	t.Cleanup(func() {
		if t.Failed() && log.Len() > 0 {
			t.Logf("plugin %s log:\n%s", binary, log.String())
		}
	})
	proc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  grpcplugin.ProtocolVersion,
			MagicCookieKey:   grpcplugin.MagicCookieKey,
			MagicCookieValue: grpcplugin.MagicCookieValue,
		},
		Plugins: map[string]goplugin.Plugin{
			"diagnostics": &grpcplugin.DiagnosticsGRPCPlugin{},
			"resource":    &grpcplugin.ResourceGRPCPlugin{},
			"data":        &grpcplugin.DataGRPCPlugin{},
		},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error}),
		StartTimeout:     30 * time.Second,
	})
	t.Cleanup(proc.Kill)
	rpc, err := proc.Client()
	if err != nil {
		t.Fatalf("start plugin %s: %v", binary, err)
	}
	return &Client{
		proc: proc,
		diag: dispense[grpcplugin.DiagnosticsClient](t, rpc, "diagnostics"),
		res:  dispense[grpcplugin.ResourceClient](t, rpc, "resource"),
		data: dispense[grpcplugin.DataClient](t, rpc, "data"),
	}
}

// dispense gets one of the plugin's services as its client type.
func dispense[T any](t testing.TB, rpc goplugin.ClientProtocol, name string) T {
	t.Helper()
	raw, err := rpc.Dispense(name)
	if err != nil {
		t.Fatalf("dispense %s: %v", name, err)
	}
	return raw.(T)
}

// Exited reports whether the plugin process has died.
func (c *Client) Exited() bool { return c.proc.Exited() }

// Pid is the plugin process's id.
func (c *Client) Pid() int { return c.proc.ReattachConfig().Pid }

// PeakMemory is the plugin process's peak resident memory so far, in
// bytes (Linux: VmHWM of /proc/PID/status).
func (c *Client) PeakMemory() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Pid()))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var n int64
			_, err := fmt.Sscanf(strings.TrimSpace(kb), "%d kB", &n)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/PID/status")
}

// Settings are a data source instance as Grafana would send it.
type Settings struct {
	UID      string
	JSONData map[string]any
	Secure   map[string]string
	Updated  time.Time
}

// SettingsFromDSN points a data source at the database of a clickhouse-go
// DSN (clickhouse://user:pass@host:port/db), over the native protocol.
func SettingsFromDSN(dsn string) (Settings, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return Settings{}, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{
		UID: "flamediff-test",
		JSONData: map[string]any{
			"host": host, "port": json.Number(port), "protocol": "native",
			"username": u.User.Username(), "defaultDatabase": strings.TrimPrefix(u.Path, "/"),
		},
		Secure:  map[string]string{},
		Updated: time.Now(),
	}
	if p, ok := u.User.Password(); ok && p != "" {
		s.Secure["password"] = p
	}
	return s, nil
}

func (s Settings) pluginContext() *pluginv2.PluginContext {
	raw, err := json.Marshal(s.JSONData)
	if err != nil {
		panic(err) // a map of plain values always encodes
	}
	return backend.ToProto().PluginContext(backend.PluginContext{
		OrgID:    1,
		PluginID: PluginID,
		DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
			UID: s.UID, Type: PluginID, Name: "Flamediff", JSONData: raw,
			DecryptedSecureJSONData: s.Secure, Updated: s.Updated,
		},
	})
}

// Query is one query of a QueryData request: its model JSON and time range.
type Query struct {
	RefID    string
	JSON     string
	From, To time.Time
}

// QueryData sends the queries in one request.
func (c *Client) QueryData(ctx context.Context, s Settings, queries ...Query) (*backend.QueryDataResponse, error) {
	req := &backend.QueryDataRequest{Headers: map[string]string{}}
	for _, q := range queries {
		req.Queries = append(req.Queries, backend.DataQuery{
			RefID: q.RefID, JSON: json.RawMessage(q.JSON), QueryType: "", Interval: time.Second,
			MaxDataPoints: 1000, TimeRange: backend.TimeRange{From: q.From, To: q.To},
		})
	}
	proto := backend.ToProto().QueryDataRequest(req)
	proto.PluginContext = s.pluginContext()
	resp, err := c.data.QueryData(ctx, proto)
	if err != nil {
		return nil, err
	}
	return backend.FromProto().QueryDataResponse(resp)
}

// CheckHealth calls the diagnostics service.
func (c *Client) CheckHealth(ctx context.Context, s Settings) (*backend.CheckHealthResult, error) {
	resp, err := c.diag.CheckHealth(ctx, &pluginv2.CheckHealthRequest{PluginContext: s.pluginContext()})
	if err != nil {
		return nil, err
	}
	return backend.FromProto().CheckHealthResponse(resp), nil
}

// Resource sends GET path (with its query string, e.g. "builds?app=x") and
// returns the status and body.
func (c *Client) Resource(ctx context.Context, s Settings, path string) (int, []byte, error) {
	u, err := url.Parse(path)
	if err != nil {
		return 0, nil, err
	}
	stream, err := c.res.CallResource(ctx, &pluginv2.CallResourceRequest{
		PluginContext: s.pluginContext(), Path: u.Path, Method: "GET", Url: path,
	})
	if err != nil {
		return 0, nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return 0, nil, err
	}
	return int(resp.Code), resp.Body, nil
}

// ModuleRoot finds the repository root above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// lockedBuffer collects the plugin's log lines, which go-plugin writes
// from its own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
