//go:build faultinject

package fault

import "testing"

func TestParse(t *testing.T) {
	m := parse(" tree.sort,,query.render ")
	if len(m) != 2 || !m["tree.sort"] || !m["query.render"] {
		t.Errorf("parse: %v", m)
	}
	old := armed
	armed = map[string]bool{"p": true}
	t.Cleanup(func() { armed = old })
	Point("q")
	defer func() {
		if recover() == nil {
			t.Error("an armed point did not panic")
		}
	}()
	Point("p")
}
