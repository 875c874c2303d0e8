package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// writeFoldedFrame prints a stored query's flame graph frame as folded
// stacks, like writeFolded does for local files: each node with a self
// value, `a;b;c self`, or `a;b;c base head` for a diff.
func writeFoldedFrame(out io.Writer, frames data.Frames) error {
	if len(frames) != 1 || frames[0].Name != "flamegraph" {
		return usageError{errors.New("--output folded needs a flamegraph or diff query without variants")}
	}
	f := frames[0]
	field := func(name string) *data.Field {
		if fld, i := f.FieldByName(name); i >= 0 {
			return fld
		}
		return nil
	}
	level, label, self, selfRight := field("level"), field("label"), field("self"), field("selfRight")
	var enum []string
	if c := label.Config; c != nil && c.TypeConfig != nil && c.TypeConfig.Enum != nil {
		enum = c.TypeConfig.Enum.Text
	}
	var sb strings.Builder
	var path []string
	for i := 0; i < level.Len(); i++ {
		depth := int(level.At(i).(int64))
		if depth == 0 {
			continue // the root
		}
		name := fmt.Sprint(label.At(i))
		if idx, ok := label.At(i).(data.EnumItemIndex); ok {
			name = enum[idx]
		}
		path = append(path[:depth-1], name)
		base := self.At(i).(float64)
		switch {
		case selfRight != nil && (base != 0 || selfRight.At(i).(float64) != 0):
			fmt.Fprintf(&sb, "%s %s %s\n", strings.Join(path, ";"), number(base), number(selfRight.At(i).(float64)))
		case selfRight == nil && base != 0:
			fmt.Fprintf(&sb, "%s %s\n", strings.Join(path, ";"), number(base))
		}
	}
	_, err := io.WriteString(out, sb.String())
	return err
}
