package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/internal/mcptest"
	"github.com/flamediff/flamediff/pkg/tree"
)

// A client that gives up on compare_builds stops its tree build: the
// SDK's client cancels the call (notifications/cancelled) once the
// engine is filled and admitted, and the server's handler answers the
// cancellation instead of a verdict, its engine bound to the request: a
// Build of it lays out the root alone.
func TestCancelledCompareStopsBuild(t *testing.T) {
	exec := demoExecutor(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// whole is how many whole trees the engine built after its request
	// was cancelled, before a Build gave up (-1: none did).
	whole := make(chan int, 1)
	exec.Admitted = func(request context.Context, b *tree.Builder) {
		cancel()
		<-request.Done() // the cancellation reached the server
		// The context's end reaches the engine on a goroutine of its
		// own: a few Builds at most may come before it.
		for n := range 100 {
			if tr, err := b.Build(tree.Options{}); err != nil || len(tr.Nodes) == 1 {
				whole <- n
				return
			}
		}
		whole <- -1
	}
	server := New(exec, "test")
	answered := make(chan error, 1)
	server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" {
				if r, ok := res.(*mcpsdk.CallToolResult); ok && err == nil && r.IsError {
					err = errors.New(mcptest.Text(r))
				}
				answered <- err
			}
			return res, err
		}
	})
	client, transport := mcpsdk.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	s := mcptest.Connect(t, client)

	_, err = s.CallTool(ctx, &mcpsdk.CallToolParams{Name: "compare_builds", Arguments: diffArgs})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the client's call: %v, want its cancellation", err)
	}
	if got := <-answered; got == nil || !strings.Contains(got.Error(), context.Canceled.Error()) {
		// only Admitted cancels: the call never reached it
		t.Fatalf("the server answered %v, not the cancellation: compare_builds did not go through the pipeline", got)
	}
	if n := <-whole; n < 0 {
		t.Error("the engine built 100 whole trees after its request was cancelled: it is not bound to the request")
	}
}

// The same executor answers the same call in full when nobody cancels.
func TestUncancelledCompareAnswers(t *testing.T) {
	exec := demoExecutor(t)
	var admitted int
	exec.Admitted = func(context.Context, *tree.Builder) { admitted++ }
	var cmp compared
	mcptest.Call(t, inMemory(t, exec), "compare_builds", diffArgs, &cmp)
	if cmp.Result != "FAIL" || admitted != 1 {
		t.Errorf("compare_builds: %s, through the pipeline %d times", cmp.Result, admitted)
	}
}
