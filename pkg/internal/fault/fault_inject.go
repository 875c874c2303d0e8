//go:build faultinject

package fault

import (
	"os"
	"strings"
)

// Env names the points to panic at, comma-separated; read once, at start.
const Env = "FLAMEDIFF_FAULT"

var armed = parse(os.Getenv(Env))

// parse reads a comma-separated list of point names.
func parse(s string) map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			m[name] = true
		}
	}
	return m
}

// Point panics when name is one of the points of $FLAMEDIFF_FAULT.
func Point(name string) {
	if armed[name] {
		panic("fault injected at " + name)
	}
}
