package main

import (
	"context"
	"flag"
	"io"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/mcp"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
)

// mcpCmd serves the MCP tools (pkg/mcp) over stdin and stdout until the
// client closes them.
func mcpCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	return func(ctx context.Context, args []string, _ io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		store, rules, err := dsn.open()
		if err != nil {
			return err
		}
		defer store.Close()
		return mcp.New(newExecutor(store, rules), version()).Run(ctx, &mcpsdk.StdioTransport{})
	}
}

// newExecutor is the executor of a long-lived command (serve, mcp): one a
// process, with the process's one stack cache, which every endpoint of
// the process shares.
func newExecutor(store *storage.Store, rules *sysframes.Rules) *query.Executor {
	return &query.Executor{Store: store, Rules: rules, Stacks: loader.NewCache(0)}
}
