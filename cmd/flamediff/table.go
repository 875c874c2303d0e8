package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/tree"
)

// human prints a value of a Grafana unit (frames.GrafanaUnit) the way
// people read profiles: times in ms, sizes in MB, shares in %.
func human(v float64, grafanaUnit string) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	}
	switch grafanaUnit {
	case "ns":
		return fmt.Sprintf("%.2f ms", v/1e6)
	case "µs":
		return fmt.Sprintf("%.2f ms", v/1e3)
	case "ms":
		return fmt.Sprintf("%.2f ms", v)
	case "s":
		return fmt.Sprintf("%.3f s", v)
	case "bytes":
		return fmt.Sprintf("%.2f MB", v/(1<<20))
	case frames.UnitPercent:
		return percent(v)
	}
	return fmt.Sprintf("%.6g", v)
}

// percent prints a share or change with its sign.
func percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100*v)
}

// interval prints a confidence interval of a change.
func interval(low, high float64) string {
	if math.IsNaN(low) || math.IsNaN(high) {
		return "-"
	}
	return percent(low) + " .. " + percent(high)
}

// pval prints a p- or q-value.
func pval(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.2g", p)
}

// writeFunctions prints function rows like `pprof -top`, in the engine's
// order (largest self first; for a diff, significant changes first, then
// by the size of the change), at most top rows (0: all).
func writeFunctions(out io.Writer, rows []tree.Function, diff bool, unit string, top int) error {
	if top > 0 && len(rows) > top {
		rows = rows[:top]
	}
	u := frames.GrafanaUnit(unit)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	if diff {
		fmt.Fprintln(tw, "base\thead\tdelta\t95% CI\tq\t\tfunction")
		for _, r := range rows {
			mark := ""
			if r.Significant {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", human(r.BaseTotal, u), human(r.HeadTotal, u),
				percent(r.Delta), interval(r.DeltaLow, r.DeltaHigh), pval(r.QValue), mark, r.Name)
		}
	} else {
		fmt.Fprintln(tw, "self\ttotal\tfunction")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", human(r.HeadSelf, u), human(r.HeadTotal, u), r.Name)
		}
	}
	return tw.Flush()
}

// writeFrames prints any frames as tables: enum fields as their texts,
// numbers in their field's unit, null as "-".
func writeFrames(out io.Writer, fs data.Frames) error {
	for _, f := range fs {
		rows, err := f.RowLen()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", f.Name)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		names := make([]string, len(f.Fields))
		for i, fld := range f.Fields {
			names[i] = fld.Name
		}
		fmt.Fprintln(tw, strings.Join(names, "\t"))
		for r := range rows {
			cells := make([]string, len(f.Fields))
			for i, fld := range f.Fields {
				cells[i] = cell(fld, r)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	return nil
}

// cell prints row r of a field.
func cell(f *data.Field, r int) string {
	v, ok := f.ConcreteAt(r)
	if !ok {
		return "-"
	}
	unit := ""
	if f.Config != nil {
		unit = f.Config.Unit
	}
	switch v := v.(type) {
	case data.EnumItemIndex:
		if f.Config != nil && f.Config.TypeConfig != nil && f.Config.TypeConfig.Enum != nil && int(v) < len(f.Config.TypeConfig.Enum.Text) {
			return f.Config.TypeConfig.Enum.Text[v]
		}
		return fmt.Sprint(v)
	case float64:
		return human(v, unit)
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}
