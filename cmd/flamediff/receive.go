package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flamediff/flamediff/pkg/receiver"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

// receiveTokenEnv is the environment variable that may hold receive's bearer
// token.
const receiveTokenEnv = "FLAMEDIFF_RECEIVE_TOKEN" // #nosec G101 -- the name of the variable, not a token

// receiveCmd runs the OTLP/HTTP receiver until interrupted, then stores
// every pending run.
func receiveCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	addr := fs.String("addr", "127.0.0.1:4318", "listen on `HOST:PORT` (loopback by default; any other address needs a token)")
	var o receiver.Options
	fs.DurationVar(&o.Wait, "wait", 10*time.Second, "store a run once its root span came and no span of it for `DURATION`")
	fs.IntVar(&o.MaxPendingSpans, "max-pending-spans", 1_000_000, "spans held for runs not yet stored; over it requests get 429")
	fs.DurationVar(&o.CommitTimeout, "commit-timeout", 2*time.Minute, "give up a commit after `DURATION`, and find ClickHouse down or frozen")
	maxBody := fs.Int("max-body-mib", 16, "largest request body, and what it may inflate to, in `MiB`")
	fs.StringVar(&o.Dir, "dir", defaultReceiveDir(), "keep the write-ahead log of accepted spans, and what the store refuses, in `DIR` "+
		"(one receiver per directory)")
	fs.StringVar(&o.RunAttribute, "run-attribute", "", "group spans into runs by this span or resource `ATTRIBUTE` (default: one trace, one run)")
	var hosts listFlag
	fs.Var(&hosts, "allow-host", "also answer requests that name this `HOST` (repeatable; localhost, 127.0.0.1, [::1] "+
		"and the listen address always)")
	tokenFile := fs.String("token-file", "", "require the bearer token in `FILE` (or $"+receiveTokenEnv+"); needed on a non-loopback --addr")
	return func(ctx context.Context, args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		o.MaxBodyBytes = int64(*maxBody) << 20
		token, err := readToken(*tokenFile, receiveTokenEnv)
		if err != nil {
			return err
		}
		tcp, err := net.ResolveTCPAddr("tcp", *addr)
		if err != nil {
			return usageError{fmt.Errorf("--addr: %w", err)}
		}
		// The guard is made before listening, so that an address it
		// refuses is never bound.
		g, err := guard.New(guard.Options{Addr: tcp, Hosts: hosts, Token: token, Refuse: receiver.Refuse})
		if errors.Is(err, guard.ErrNoToken) {
			return usageError{fmt.Errorf("--addr %s is not loopback: give a bearer token (--token-file or $%s)", *addr, receiveTokenEnv)}
		}
		if err != nil {
			return usageError{err}
		}
		ln, err := net.ListenTCP("tcp", tcp)
		if err != nil {
			return err
		}
		defer ln.Close()
		logger := log.New(os.Stderr, "flamediff receive: ", log.LstdFlags)
		o.Logf = logger.Printf
		store, _, err := dsn.open()
		if err != nil {
			return err
		}
		defer store.Close()
		ping, cancel := context.WithTimeout(ctx, min(5*time.Second, o.CommitTimeout))
		if err := store.Ping(ping); err != nil {
			logger.Printf("ClickHouse does not answer (%v): spans are kept in %s until it does", err, o.Dir)
		} else {
			logger.Printf("ClickHouse answers")
		}
		cancel()
		recv, err := receiver.Open(store, o)
		if err != nil {
			return err
		}
		defer recv.Close()
		if s := recv.Stats(); s.Replayed > 0 {
			logger.Printf("%d spans of %d runs read back from the write-ahead log", s.Replayed, s.PendingRuns)
		}
		srv := &http.Server{Handler: recv.Handler(g), ReadHeaderTimeout: 10 * time.Second}
		runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
		defer stopRun()
		var wg sync.WaitGroup
		wg.Go(func() { recv.Run(runCtx) })
		defer wg.Wait() // the pending runs are stored on every way out
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown) // requests still running after 10 s are cut
		}()
		if _, err := fmt.Fprintf(out, "flamediff receive: http://%s/v1/traces and /v1/profiles\n", ln.Addr()); err != nil {
			stopRun()
			return err
		}
		err = srv.Serve(ln)
		// No request comes any more: store what waits, then report.
		stopRun()
		wg.Wait()
		s := recv.Stats()
		fmt.Fprintf(out, "received %d spans into %d runs (%s; %d late spans not stored), %d profile runs\n",
			s.Spans, s.TraceRuns, s.Summary, s.LateSpans, s.ProfileRuns)
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// defaultReceiveDir is where receive keeps its log unless told:
// $XDG_STATE_HOME/flamediff/receive, else ~/.local/state/flamediff/receive.
func defaultReceiveDir() string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "flamediff-receive")
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "flamediff", "receive")
}
