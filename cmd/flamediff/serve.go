package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flamediff/flamediff/pkg/mcp"
	"github.com/flamediff/flamediff/pkg/plugin"
	"github.com/flamediff/flamediff/pkg/web"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

// serveCmd serves the local web UI (like `go tool pprof -http`) over the
// data source's executor and resources, and the MCP tools at /mcp, until
// interrupted.
func serveCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	addr := fs.String("addr", "127.0.0.1:3001", "listen on `HOST:PORT` (loopback by default; any other address needs a token)")
	var hosts listFlag
	fs.Var(&hosts, "allow-host", "also answer requests that name this `HOST` (repeatable; localhost, 127.0.0.1, [::1] "+
		"and the listen address always)")
	tokenFile := fs.String("token-file", "", "require the bearer token in `FILE` (or $"+tokenEnv+"); needed on a non-loopback --addr")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		token, err := readToken(*tokenFile, tokenEnv)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		defer ln.Close()
		g, err := guard.New(guard.Options{Addr: ln.Addr(), Hosts: hosts, Token: token})
		if errors.Is(err, guard.ErrNoToken) {
			return fmt.Errorf("serve: --addr %s is not a loopback address and the UI has no login: any machine that reaches it "+
				"could read every stored profile; give a token with --token-file FILE or $%s (clients send "+
				"Authorization: Bearer TOKEN, a browser opens the page with ?token=TOKEN once), or listen on 127.0.0.1",
				*addr, tokenEnv)
		}
		if err != nil {
			return usageError{err}
		}
		// one executor and stack cache for the UI and the MCP tools
		exec, err := dsn.executor(true)
		if err != nil {
			return err
		}
		store := exec.Store
		defer store.Close()
		if err := store.CheckTables(ctx); err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/", web.Handler(exec, plugin.Resources(store, plugin.ResourceTimeout), plugin.Status, g))
		// /mcp: the guard's Host check and token; the MCP handler refuses
		// other origins itself (docs/MCP.md)
		mux.Handle("/mcp", g.Site(mcp.Handler(exec, version())))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			<-ctx.Done()
			// ctx is done: the shutdown needs a deadline of its own
			shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown) // an unfinished query is abandoned
		}()
		// Scripts wait for this line: the server accepts connections from now on.
		if _, err := fmt.Fprintf(out, "flamediff serve: http://%s/\n", ln.Addr()); err != nil {
			return err
		}
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// tokenEnv holds serve's bearer token when --token-file is not given.
const tokenEnv = "FLAMEDIFF_TOKEN" // #nosec G101 -- the name of the variable, not a token

// readToken returns the token of file (its first line), else of the
// environment variable env.
func readToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(env)), nil
	}
	b, err := os.ReadFile(file) // #nosec G304 -- the file the user names
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token, _, _ := strings.Cut(string(b), "\n")
	if token = strings.TrimSpace(token); token == "" {
		return "", fmt.Errorf("--token-file %s: the file is empty", file)
	}
	return token, nil
}
