package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/frames"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// writeFunctions prints function rows like `pprof -top`, in the engine's
// order (largest self first; for a diff, significant changes first, then
// by the size of the change), at most top rows (0: all). The numbers are
// aligned right, so the widest ends its cell: the name (which ends the
// line, unaligned) follows a cell of its own, the diff's mark of a
// significant change, or an empty one.
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", frames.FormatValue(r.BaseTotal, u), frames.FormatValue(r.HeadTotal, u),
				verdict.Percent(r.Delta), verdict.Interval(r.DeltaLow, r.DeltaHigh), verdict.PValue(r.QValue), mark, r.Name)
		}
	} else {
		fmt.Fprintln(tw, "self\ttotal\t\tfunction")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t\t%s\n", frames.FormatValue(r.HeadSelf, u), frames.FormatValue(r.HeadTotal, u), r.Name)
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
		return frames.FormatValue(v, unit)
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}
