// Package mcptest calls MCP tools from tests with the MCP SDK's own
// client, as an assistant does, for the tests of pkg/mcp and of the
// commands that serve it.
package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect connects the SDK's client over transport; the session closes
// when the test ends.
func Connect(t testing.TB, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// MaxAnswer bounds a tool's structured answer: what fits a model's
// context beside the conversation.
const MaxAnswer = 16 << 10

// Call calls a tool and decodes its structured answer into out; it fails
// the test on an error, a tool error or an answer over MaxAnswer bytes.
func Call(t testing.TB, s *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, Text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, b)
	}
	if len(b) > MaxAnswer {
		t.Errorf("%s answered %d bytes: not bounded for a model's context", name, len(b))
	}
}

// Text is the text content of a tool's answer (a tool error's message).
func Text(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}
