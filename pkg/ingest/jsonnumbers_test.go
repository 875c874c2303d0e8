package ingest

import (
	"slices"
	"strings"
	"testing"
)

// readNested reads in, `{"a":{"b":[ints],"c":[ints]},"d":[[ints]...]}`,
// each array of integers scanned by ints and the rest by the token stream.
func readNested(in string) (map[string][]int64, error) {
	s, err := streamJSON(strings.NewReader(in), "x")
	if err != nil {
		return nil, err
	}
	got := map[string][]int64{}
	ints := func(key string) error {
		return s.ints(key, func(n int64) { got[key] = append(got[key], n) })
	}
	err = s.object("doc", func(key string) error {
		switch key {
		case "a":
			return s.object("a", ints)
		case "d":
			return s.array("d", func() error { return ints("d") })
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	return got, err
}

// The token stream goes on where the scan of an array of numbers ended,
// however deep in the document the array was.
func TestNumbersResumeTheTokenStream(t *testing.T) {
	got, err := readNested(`{"a":{"b":[1, -2 ,null,9007199254740993],"c":[]},"e":{"f":[1,{"g":2}]},"d":[[4] , [5,6]]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"b": {1, -2, 0, 9007199254740993}, "d": {4, 5, 6}}
	if len(got) != len(want) || !slices.Equal(got["b"], want["b"]) || !slices.Equal(got["d"], want["d"]) {
		t.Errorf("read %v, want %v", got, want)
	}
}

// A bad element of an array of numbers, or bad JSON after it, is refused
// at its offset.
func TestNumbersRefuseBadElements(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":{"b":[1,01]}}`:                  `x: offset 13: bad JSON: b holds "01", not a number`,
		`{"a":{"b":[1,1.5]}}`:                 `x: offset 13: bad JSON: b holds 1.5, not an int64`,
		`{"a":{"b":[1,9223372036854775808]}}`: `x: offset 13: bad JSON: b holds 9223372036854775808, not an int64`,
		`{"a":{"b":[1,"2"]}}`:                 `x: offset 13: bad JSON: b holds '"', not a number`,
		`{"a":{"b":[1,]}}`:                    `x: offset 13: bad JSON: b holds ']', not a number`,
		`{"a":{"b":[1 2]}}`:                   `x: offset 13: bad JSON: invalid character '2' after array element`,
		`{"a":{"b":[1,2`:                      `x: offset 14: bad JSON: unexpected end of JSON input`,
		`{"a":{"b":[1]]}}`:                    `x: offset 13: bad JSON: invalid character ']' after object key:value pair`,
		`{"a":{"b":[1].5}}`:                   `x: offset 13: bad JSON: invalid character '.' after object key:value pair`,
		`{"a":{"b":[1]}} [`:                   `x: offset 15: bad JSON: data after the top-level value`,
	} {
		if _, err := readNested(in); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}
