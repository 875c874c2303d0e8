// Package chtest gives tests a real ClickHouse server: either the one named by
// FLAMEDIFF_CLICKHOUSE_ADDR or a private server started once per test binary
// in a temporary directory. Each DSN call gets its own fresh database.
package chtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"text/template"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Server is a ClickHouse server process running from a temporary directory.
type Server struct {
	// Addr is host:port of the native protocol.
	Addr string
	// HTTPAddr is host:port of the HTTP interface.
	HTTPAddr string

	dir  string
	cmd  *exec.Cmd
	done chan error // receives the process's exit status once
}

// binaries are the server executables tried in order: Debian's package
// installs /usr/sbin/clickhouse-server, upstream packages ship one
// "clickhouse" binary with a "server" sub-command.
var binaries = [][]string{
	{"clickhouse-server"},
	{"/usr/sbin/clickhouse-server"},
	{"/usr/bin/clickhouse-server"},
	{"clickhouse", "server"},
	{"/usr/bin/clickhouse", "server"},
}

// ErrNoServer is returned by Start when no ClickHouse server binary is
// installed.
var ErrNoServer = errors.New("no ClickHouse server binary found (install Debian's clickhouse-server, " +
	"or set FLAMEDIFF_CLICKHOUSE_ADDR=host:port of a running server's native protocol)")

func findBinary() ([]string, error) {
	for _, b := range binaries {
		if p, err := exec.LookPath(b[0]); err == nil {
			return append([]string{p}, b[1:]...), nil
		}
	}
	return nil, ErrNoServer
}

// startTimeout bounds how long Start waits for a new server to answer.
const startTimeout = 60 * time.Second

// Start launches a private ClickHouse server listening on free loopback
// ports, with its data, logs and config in a new temporary directory, and
// waits until it answers queries. The caller must call Stop. The server
// has a "default" user without password and no interserver port.
func Start(ctx context.Context) (*Server, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	return start(ctx, ports[0], ports[1], "")
}

// start is Start on the given ports; extra is XML added to the config's
// root element (a cluster's remote_servers).
func start(ctx context.Context, tcp, http int, extra string) (*Server, error) {
	dir, err := os.MkdirTemp("", "flamediff-clickhouse-")
	if err != nil {
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	s := &Server{
		Addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp)),
		HTTPAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(http)),
		dir:      dir,
	}
	if err := s.writeConfig(tcp, http, extra); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	if err := s.launch(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// launch runs the server process on the config in s.dir and waits until
// it answers.
func (s *Server) launch(ctx context.Context) error {
	bin, err := findBinary()
	if err != nil {
		return err
	}
	args := append(bin[1:], "--config-file="+filepath.Join(s.dir, "config.xml"))
	s.cmd = exec.Command(bin[0], args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = nil, nil // everything goes to the log files
	s.cmd.SysProcAttr = sysProcAttr()
	s.done = make(chan error, 1)
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("start clickhouse %s: %w", bin[0], err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		s.Kill()
		return err
	}
	return nil
}

// waitReady polls the server until it answers a query, the process exits,
// or the timeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	db, err := clickhouse.Open(&clickhouse.Options{Addr: []string{s.Addr}, DialTimeout: time.Second})
	if err != nil {
		return fmt.Errorf("start clickhouse: %w", err)
	}
	defer db.Close()
	for {
		select {
		case err := <-s.done:
			s.done <- err // let Stop see it too
			return fmt.Errorf("clickhouse server exited during start-up (%v): %s", err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("clickhouse server did not answer on %s: %w: %s", s.Addr, ctx.Err(), s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		if db.Ping(ctx) == nil {
			return nil
		}
	}
}

// logTail returns the end of the server's error log, for start-up errors.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log", "err.log"))
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(error log empty)"
	}
	return string(b)
}

// Stop terminates the server, waits for it to exit and removes its
// directory. It is safe to call more than once.
func (s *Server) Stop() error {
	if s.cmd == nil && s.dir == "" {
		return nil
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.cmd = nil
	dir := s.dir
	s.dir = ""
	return os.RemoveAll(dir)
}

// Kill ends the server process at once, as a crash would, keeping its
// directory so that Restart brings the same data back.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Pause stops the server process (SIGSTOP), as a frozen server would be:
// connections open, nothing answered. Resume continues it.
func (s *Server) Pause() error { return s.signal(stopSignal) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return s.signal(continueSignal) }

func (s *Server) signal(sig os.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("clickhouse is not running")
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts a killed server again on its directory and ports.
func (s *Server) Restart(ctx context.Context) error {
	if s.cmd != nil {
		return errors.New("restart clickhouse: the server is running")
	}
	return s.launch(ctx)
}

// freePorts asks the kernel for n distinct free loopback ports. They are
// released before the server binds them; a collision in between is
// unlikely and shows up as a start-up error naming the port.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// configTemplate is the smallest config that 18.16 and current servers both
// accept: loopback only, no interserver port, paths inside the directory.
var configTemplate = template.Must(template.New("config").Parse(`<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>{{.Dir}}/log/server.log</log>
    <errorlog>{{.Dir}}/log/err.log</errorlog>
    <console>0</console>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>{{.TCP}}</tcp_port>
  <http_port>{{.HTTP}}</http_port>
  <path>{{.Dir}}/data/</path>
  <tmp_path>{{.Dir}}/tmp/</tmp_path>
  <user_files_path>{{.Dir}}/user_files/</user_files_path>
  <format_schema_path>{{.Dir}}/format_schemas/</format_schema_path>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
  <timezone>UTC</timezone>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <users_config>users.xml</users_config>
  <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>7500</flush_interval_milliseconds></query_log>
{{.Extra}}</yandex>
`))

const usersXML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage><max_threads>4</max_threads><log_queries>1</log_queries></default></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

func (s *Server) writeConfig(tcp, http int, extra string) error {
	var b bytes.Buffer
	err := configTemplate.Execute(&b, struct {
		Dir       string
		TCP, HTTP int
		Extra     string
	}{s.dir, tcp, http, extra})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "config.xml"), b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, "users.xml"), []byte(usersXML), 0o644)
}
