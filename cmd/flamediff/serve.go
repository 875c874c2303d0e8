package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/flamediff/flamediff/pkg/plugin"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/web"
)

// serveCmd serves the local web UI (like `go tool pprof -http`) over the
// data source's executor and resources, and the MCP tools at /mcp, until
// interrupted.
func serveCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	addr := fs.String("addr", "127.0.0.1:3001", "listen on `HOST:PORT` (loopback by default: the UI has no login)")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		store, rules, err := dsn.open()
		if err != nil {
			return err
		}
		defer store.Close()
		exec := &query.Executor{Store: store, Rules: rules, Stacks: query.NewStackCache(0)}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/", web.Handler(exec, plugin.Resources(store, plugin.ResourceTimeout), plugin.Status))
		mux.Handle("/mcp", mcpHandler(store, rules)) // docs/MCP.md
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
