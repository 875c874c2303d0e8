package verdict

// How a verdict is said: the sentences of culprits and moves, and its
// numbers as every output prints them.

import (
	"fmt"
	"math"
	"strings"
)

// Sentence says what moved, in one line: "`Flush` is new, called from
// `Close`; it took over `write`: 45.89% of the base total moved, net
// +0.40% (95% CI ...)".
func (m *Move) Sentence() string {
	var sb strings.Builder
	names := func(parts []MovePart) string {
		var out []string
		for _, p := range parts {
			if p.Self {
				out = append(out, "`"+p.Function+"`'s own time")
			} else {
				out = append(out, "`"+p.Function+"`")
			}
		}
		return strings.Join(out, ", ")
	}
	under := ""
	if m.Caller != "" {
		under = "`" + m.Caller + "`"
	}
	to := m.To[0]
	switch {
	case to.Status == "new" && under != "":
		fmt.Fprintf(&sb, "`%s` is new, called from %s; it took over %s", to.Function, under, names(m.From))
	case to.Status == "new":
		fmt.Fprintf(&sb, "`%s` is new; it took over %s", to.Function, names(m.From))
	case under != "":
		fmt.Fprintf(&sb, "%s took over %s under %s", names(m.To), names(m.From), under)
	default:
		fmt.Fprintf(&sb, "%s took over %s", names(m.To), names(m.From))
	}
	fmt.Fprintf(&sb, ": %s of the base total moved, net %s (95%% CI %s, p %s).", strings.TrimPrefix(Percent(float64(m.Moved)), "+"),
		Percent(float64(m.Net)), Interval(float64(m.NetLow), float64(m.NetHigh)), PValue(float64(m.PValue)))
	return sb.String()
}

// Sentence says what the culprit is, in one line.
func (c *Culprit) Sentence() string {
	change := fmt.Sprintf("%s of the base total (95%% CI %s, q %s)", Percent(float64(c.Delta)),
		Interval(float64(c.DeltaLow), float64(c.DeltaHigh)), PValue(float64(c.QValue)))
	if c.Exact {
		change = Percent(float64(c.Delta)) + " of the base total (exact)"
	}
	if c.Root() {
		dir := "grew"
		if !c.Regression {
			dir = "shrank"
		}
		return fmt.Sprintf("Everything %s in proportion, %s: one change spread over the whole profile, not separate regressions; "+
			"compare with normalize=relative.", dir, change)
	}
	fn := "`" + c.Function + "`"
	var what string
	switch c.Kind {
	case "new":
		what = fn + " is new in head"
	case "removed":
		what = fn + " is gone from head"
		if c.Replaced != "" {
			what = fmt.Sprintf("%s no longer calls `%s`", fn, c.Replaced)
		}
	case "self":
		what = fn + "'s own time " + map[bool]string{true: "grew", false: "shrank"}[c.Regression]
	case "replaced":
		if len(c.NewCallees) > 0 && len(c.GoneCallees) > 0 {
			what = fmt.Sprintf("%s now calls %s instead of %s", fn, CodeList(c.NewCallees), CodeList(c.GoneCallees))
		} else {
			what = "callees were replaced under " + fn
		}
	default:
		what = fn + " " + map[bool]string{true: "grew", false: "shrank"}[c.Regression] + " as a whole (called more or less often, or doing more or less of everything)"
	}
	var sb strings.Builder
	sb.WriteString(what)
	if caller := c.caller(); caller != "" && c.Kind != "replaced" {
		fmt.Fprintf(&sb, ", called from `%s`", caller)
	}
	if n := len(c.OtherSites); n > 0 {
		fmt.Fprintf(&sb, " and %d other call %s", n, plural(n, "site", "sites"))
	}
	if c.Kind == "replaced" || c.Moved && c.Kind != "self" {
		change = "net " + change
	}
	fmt.Fprintf(&sb, ": %s", change)
	if s := float64(c.Share); !math.IsNaN(s) && s > 0 {
		fmt.Fprintf(&sb, ", %.0f%% of the total's change", 100*s)
	}
	if c.Callee != "" && c.Kind != "replaced" && c.Callee != c.Replaced {
		fmt.Fprintf(&sb, ", mostly in `%s`", c.Callee)
	}
	if c.Moved && c.Kind == "self" {
		sb.WriteString(", summed over the work that moved")
	}
	if c.Modified {
		sb.WriteString("; the head build modified it")
	}
	sb.WriteString(".")
	return sb.String()
}

// CodeList prints names as code, comma-separated: "`a`, `b`".
func CodeList(names []string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}

// caller is the frame above the function on its path ("" at the top).
func (c *Culprit) caller() string {
	if len(c.Path) < 2 {
		return ""
	}
	return c.Path[len(c.Path)-2]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Percent prints a share or change with its sign ("-" when not finite, a
// plain "0" for none).
func Percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%+.2f%%", 100*v)
}

// Interval prints a confidence interval of a change.
func Interval(low, high float64) string {
	if math.IsNaN(low) || math.IsNaN(high) {
		return "-"
	}
	return Percent(low) + " .. " + Percent(high)
}

// PValue prints a p- or q-value.
func PValue(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.2g", p)
}
