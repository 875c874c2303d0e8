package frames

import (
	"math"
	"strconv"
	"strings"
)

// FormatValue prints v in a Grafana unit the way the panel does
// (src/panel/format.ts: Grafana's value formats with 2 decimals), so that
// the CLI's tables and comments read like the panel: 17.40 s, 1.12 GiB.
// Units: ns, µs, ms, s, bytes, percentunit; anything else is Grafana's
// "short" (1.20 K, 3.40 Mil). Not finite: "-". Zero is a plain "0" in
// every unit: "0.00 ns" reads like a rounded measurement, and nothing was
// measured.
func FormatValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if v == 0 {
		return "0"
	}
	switch unit {
	case "ns":
		return byRanges(v, []timeRange{{1e3, 1, " ns"}, {1e6, 1e3, " µs"}, {1e9, 1e6, " ms"}, {6e10, 1e9, " s"},
			{36e11, 6e10, " min"}, {864e11, 36e11, " hour"}, {math.Inf(1), 864e11, " day"}})
	case "µs":
		return byRanges(v, []timeRange{{1e3, 1, " µs"}, {1e6, 1e3, " ms"}, {math.Inf(1), 1e6, " s"}})
	case "ms":
		return byRanges(v, []timeRange{{1e3, 1, " ms"}, {6e4, 1e3, " s"}, {36e5, 6e4, " min"}, {864e5, 36e5, " hour"},
			{31536e6, 864e5, " day"}, {math.Inf(1), 31536e6, " year"}})
	case "s":
		return byRanges(v, []timeRange{{1e-6, 1e-9, " ns"}, {1e-3, 1e-6, " µs"}, {1, 1e-3, " ms"}, {60, 1, " s"},
			{3600, 60, " min"}, {86400, 3600, " hour"}, {604800, 86400, " day"}, {31536e3, 604800, " week"},
			{math.Inf(1), 31556900, " year"}})
	case "bytes":
		return scaled(v, 1024, []string{" B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB", " ZiB", " YiB"})
	case "percentunit":
		return toFixed(100*v) + "%"
	}
	return scaled(v, 1e3, []string{"", " K", " Mil", " Bil", " Tri", " Quadr", " Quint", " Sext", " Sept"})
}

// timeRange: values below limit are shown divided by div, with suffix.
type timeRange struct {
	limit, div float64
	suffix     string
}

func byRanges(v float64, ranges []timeRange) string {
	for _, r := range ranges {
		if math.Abs(v) < r.limit {
			scaled := v / r.div
			if r.div < 1 { // Grafana multiplies by the inverse for fractions of a second
				scaled = v * math.Round(1/r.div)
			}
			if r.div == 1 {
				return toFixed(v) + r.suffix
			}
			return toFixed(scaled) + plural(r.suffix, math.Abs(scaled) > 1)
		}
	}
	return toFixed(v)
}

// plural is Grafana's appendPluralIf: minutes to years take an s above 1.
func plural(suffix string, many bool) string {
	switch suffix {
	case " min", " hour", " day", " week", " year":
		if many {
			return suffix + "s"
		}
	}
	return suffix
}

// scaled is Grafana's scaledUnits: the power of factor below |v| picks the
// suffix.
func scaled(v, factor float64, suffixes []string) string {
	i := 0
	if v != 0 {
		i = int(math.Floor(math.Log(math.Abs(v)) / math.Log(factor)))
	}
	i = max(0, min(i, len(suffixes)-1))
	return toFixed(v/math.Pow(factor, float64(i))) + suffixes[i]
}

// toFixed is Grafana's toFixed with 2 decimals: round half up at the
// second decimal, print the shortest form of the result, pad to 2
// decimals.
func toFixed(v float64) string {
	r := math.Floor(v*100+0.5) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	if math.Abs(r) >= 1e21 {
		return strconv.FormatFloat(r, 'e', -1, 64) // as JavaScript prints it
	}
	s := strconv.FormatFloat(r, 'f', -1, 64)
	dot := strings.IndexByte(s, '.')
	switch {
	case dot < 0:
		return s + ".00"
	case len(s)-dot-1 < 2:
		return s + "0"
	}
	return s
}
