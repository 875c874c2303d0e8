package frames

import "github.com/grafana/grafana-plugin-sdk-go/data"

// Keys of Meta.Custom on a sandwich's trees: MetaSandwich is "callers" or
// "callees", MetaFunction the function they are of.
const (
	MetaSandwich = "sandwich"
	MetaFunction = "function"
)

// Sandwich marks a flame graph frame as one of a function's two trees:
// part is "callers" or "callees".
func Sandwich(f *data.Frame, part, function string) *data.Frame {
	custom := f.Meta.Custom.(map[string]any)
	custom[MetaSandwich], custom[MetaFunction] = part, function
	return f
}

// Warn adds a warning notice to f (none when text is ""): why an answer
// has no stack, or shows a tree other than the one asked for.
func Warn(f *data.Frame, text string) *data.Frame {
	if text == "" {
		return f
	}
	if f.Meta == nil {
		f.Meta = &data.FrameMeta{}
	}
	f.Meta.Notices = append(f.Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: text})
	return f
}
