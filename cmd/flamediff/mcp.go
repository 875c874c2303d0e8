package main

import (
	"context"
	"flag"
	"io"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flamediff/flamediff/pkg/mcp"
)

// mcpCmd serves the MCP tools (pkg/mcp) over stdin and stdout until the
// client closes them.
func mcpCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	return func(ctx context.Context, args []string, _ io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		exec, err := dsn.executor(true)
		if err != nil {
			return err
		}
		defer exec.Store.Close()
		return mcp.New(exec, version()).Run(ctx, &mcpsdk.StdioTransport{})
	}
}
