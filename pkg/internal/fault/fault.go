//go:build !faultinject

// Package fault marks the places where the plugin recovers a panic of a
// query's work (another core of the engine, the stack reader, the query
// goroutine), so that tests can drive a real panic through the built
// binary and check that it becomes that query's error and the process
// lives on. Production builds have no hook: Point is empty and inlined
// away. A binary built with -tags faultinject panics at the points named
// by $FLAMEDIFF_FAULT (fault_inject.go).
package fault

// Point panics in a faultinject build when name is armed; here it does
// nothing.
func Point(name string) {}
