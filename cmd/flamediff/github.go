package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// writeGitHub prints a verdict as GitHub Actions workflow commands: an
// ::error per significant regression culprit and a ::notice per
// improvement, with the culprit's file relative to root and its line, so
// that the job puts them on the pull request's lines. Culprits whose file
// is unknown or outside root are annotations without a file, named by
// function and the file's base name: a build machine's absolute path
// never reaches the log.
func writeGitHub(out io.Writer, v *verdict.Verdict, root string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("--source-root: %w", err)
	}
	var sb strings.Builder
	for _, list := range []struct {
		command string
		rows    []verdict.Culprit
	}{{"error", v.Regressions}, {"notice", v.Improvements}} {
		for _, c := range list.rows {
			props := []string{}
			if rel, ok := relativeTo(root, c.File); ok {
				props = append(props, "file="+escapeProperty(rel))
				if c.Line > 0 {
					props = append(props, fmt.Sprintf("line=%d", c.Line))
				}
			}
			title := fmt.Sprintf("Flamediff: %s %s", c.Kind, c.Function)
			props = append(props, "title="+escapeProperty(title))
			msg := c.Sentence()
			if c.File != "" {
				if _, ok := relativeTo(root, c.File); !ok {
					msg += fmt.Sprintf(" (source %s:%d, outside the source root)", baseName(c.File), c.Line)
				}
			}
			fmt.Fprintf(&sb, "::%s %s::%s\n", list.command, strings.Join(props, ","), escapeData(msg))
		}
	}
	// The verdict is a plain log line: a line break in a function's name
	// must not start a line the runner would read as a command.
	oneLine := strings.NewReplacer("\r", " ", "\n", " ")
	fmt.Fprintf(&sb, "Flamediff: %s: %s\n", v.Result, oneLine.Replace(v.Headline+" "+v.Why))
	_, err = io.WriteString(out, sb.String())
	return err
}

// relativeTo names file relative to root when it lies under it: an
// absolute path under root, or a relative one that does not climb out.
func relativeTo(root, file string) (string, bool) {
	if file == "" {
		return "", false
	}
	rel := file
	if filepath.IsAbs(file) {
		var err error
		if rel, err = filepath.Rel(root, file); err != nil {
			return "", false
		}
	}
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// escapeData escapes a workflow command's message as GitHub's toolkit does
// (actions/toolkit, command.ts): % first, then CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: the message's
// escapes, and : and , which separate properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
