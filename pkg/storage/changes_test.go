package storage

import (
	"context"
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/pkg/changes"
)

func TestChangesRoundTrip(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	save := func(build string, c changes.Changes) {
		t.Helper()
		if err := s.SaveChanges(ctx, "a", build, c); err != nil {
			t.Fatal(err)
		}
	}
	save("1.0", changes.Changes{Modified: []string{"old.F"}})
	save("1.0", changes.Changes{Modified: []string{"pkg.(*T).M", `it's "q"`}, Added: []string{"ünï.F"}}) // newest wins
	save("1.1", changes.Changes{Removed: []string{"gone.F"}})
	empty := []string{}
	tests := []struct {
		name   string
		builds []string
		want   map[string]changes.Changes
	}{
		{"all", nil, map[string]changes.Changes{
			"1.0": {Modified: []string{"pkg.(*T).M", `it's "q"`}, Added: []string{"ünï.F"}, Removed: empty},
			"1.1": {Modified: empty, Added: empty, Removed: []string{"gone.F"}},
		}},
		{"one build", []string{"1.1", "9.9"}, map[string]changes.Changes{
			"1.1": {Modified: empty, Added: empty, Removed: []string{"gone.F"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Changes(ctx, "a", tt.builds)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if err := s.SaveChanges(ctx, "a", "1.0", changes.Changes{Added: []string{""}}); err == nil {
		t.Error("an empty function name was accepted")
	}
	if err := s.SaveChanges(ctx, "", "1.0", changes.Changes{}); err == nil {
		t.Error("an empty app was accepted")
	}
}
