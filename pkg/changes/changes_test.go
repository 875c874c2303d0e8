package changes

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Changes
		wantErr string
	}{
		{"full", `{"modified": ["b.F", "a.F"], "added": ["c.G"], "removed": ["d.H"]}`,
			Changes{Modified: []string{"a.F", "b.F"}, Added: []string{"c.G"}, Removed: []string{"d.H"}}, ""},
		{"partial", `{"modified": ["pkg.Func"]}`, Changes{Modified: []string{"pkg.Func"}}, ""},
		{"empty object", `{}`, Changes{}, ""},
		{"unknown key", `{"modfied": ["x"]}`, Changes{}, `unknown field "modfied"`},
		{"not a list", `{"modified": "x"}`, Changes{}, "cannot unmarshal"},
		{"empty name", `{"added": ["a", ""]}`, Changes{}, "added[1] is empty"},
		{"duplicate across lists", `{"modified": ["a"], "removed": ["a"]}`, Changes{}, `"a" listed in modified and again in removed`},
		{"duplicate in list", `{"added": ["a", "a"]}`, Changes{}, `listed in added and again in added`},
		{"trailing data", `{} {}`, Changes{}, "unexpected data after"},
		{"empty input", ``, Changes{}, "empty input"},
		{"truncated", `{"modified": [`, Changes{}, "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	c := Changes{Modified: []string{"a.F"}}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"modified":["a.F"],"added":[],"removed":[]}`; string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
	back, err := Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Modified, c.Modified) || len(back.Added)+len(back.Removed) != 0 {
		t.Errorf("round trip gave %+v", back)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"modified": ["a"], "added": ["b"]}`)
	f.Add(`{"removed": [""]}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted %q but Validate says %v", in, err)
		}
	})
}
