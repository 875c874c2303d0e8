// Package changes models the source changes of a build, as recorded by
// `flamediff changes` for the evolution matrix: which functions were
// modified, added or removed, named as they appear in profile frames.
package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Changes lists the functions a build changed relative to its predecessor.
// Names are frame names (e.g. "compress/flate.(*compressor).deflate" for
// Go, "com.foo.Bar.baz" for Java) so that they match profile frames exactly.
type Changes struct {
	Modified []string `json:"modified"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
}

// Parse reads a changes file: one JSON object with optional keys "modified",
// "added" and "removed", each a list of strings. Unknown keys, empty names,
// trailing data and a name listed twice (in one list or in two) are errors,
// because each hides a bug in whatever produced the file. Lists come back
// sorted.
func Parse(r io.Reader) (Changes, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Changes
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return Changes{}, errors.New("changes: empty input, want a JSON object")
		}
		return Changes{}, fmt.Errorf("changes: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Changes{}, fmt.Errorf("changes: unexpected data after the JSON object at offset %d", dec.InputOffset())
	}
	if err := c.Validate(); err != nil {
		return Changes{}, err
	}
	c.sort()
	return c, nil
}

// Validate reports an empty name or a name listed more than once.
func (c Changes) Validate() error {
	seen := map[string]string{}
	for _, l := range c.lists() {
		for i, name := range l.names {
			if name == "" {
				return fmt.Errorf("changes: %s[%d] is empty", l.key, i)
			}
			if prev, ok := seen[name]; ok {
				return fmt.Errorf("changes: %q listed in %s and again in %s", name, prev, l.key)
			}
			seen[name] = l.key
		}
	}
	return nil
}

type list struct {
	key   string
	names []string
}

func (c Changes) lists() []list {
	return []list{{"modified", c.Modified}, {"added", c.Added}, {"removed", c.Removed}}
}

func (c *Changes) sort() {
	slices.Sort(c.Modified)
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
}

// MarshalJSON writes empty lists as [] rather than null, so the file always
// has all three keys.
func (c Changes) MarshalJSON() ([]byte, error) {
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	type plain Changes // without this method
	return json.Marshal(plain{orEmpty(c.Modified), orEmpty(c.Added), orEmpty(c.Removed)})
}
