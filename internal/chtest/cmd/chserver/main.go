// Command chserver starts a private ClickHouse server on free loopback ports
// in a temporary directory, prints one line "NATIVE_ADDR HTTP_ADDR" (both
// host:port) on stdout, and runs until interrupted (SIGINT or SIGTERM),
// then stops the server and removes its directory. Test scripts use it to
// share one server across a whole suite:
//
//	go build -o /tmp/chserver ./internal/chtest/cmd/chserver
//	/tmp/chserver > /tmp/ch.addr & until [ -s /tmp/ch.addr ]; do sleep 0.2; done
//	FLAMEDIFF_CLICKHOUSE_ADDR=$(cut -d' ' -f1 /tmp/ch.addr) go test ./...
//
// Run the built binary rather than `go run`, so the signal reaches it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/flamediff/flamediff/internal/chtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := chtest.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chserver:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", s.Addr, s.HTTPAddr)
	<-ctx.Done()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "chserver: stop:", err)
		os.Exit(1)
	}
}
