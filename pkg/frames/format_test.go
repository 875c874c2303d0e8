package frames

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// FormatValue prints what the panel's formatValue prints
// (src/panel/format.test.ts checks the panel against the same table,
// testdata/format/values.json, taken from Grafana's value formats).
func TestFormatValueMatchesThePanel(t *testing.T) {
	b, err := os.ReadFile("../../testdata/format/values.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Unit  string  `json:"unit"`
		Value float64 `json:"value"`
		Text  string  `json:"text"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if got := FormatValue(c.Value, c.Unit); got != c.Text {
			t.Errorf("FormatValue(%v, %q) = %q, the panel prints %q", c.Value, c.Unit, got, c.Text)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		if got := FormatValue(v, "ns"); got != "-" {
			t.Errorf("FormatValue(%v) = %q", v, got)
		}
	}
}
