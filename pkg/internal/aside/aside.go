// Package aside runs a function on another goroutine for a reader that
// does two round trips at once (the query's listings, the loader's side
// lines).
package aside

import "fmt"

// Outcome is what a function run aside returned.
type Outcome[T any] struct {
	V   T
	Err error
}

// Run runs f on another goroutine and delivers what it returns. A panic
// in f, which there would kill the process out of the caller's reach, is
// delivered as an error saying what panicked.
func Run[T any](what string, f func() (T, error)) <-chan Outcome[T] {
	done := make(chan Outcome[T], 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- Outcome[T]{Err: fmt.Errorf("%s panicked: %v", what, p)}
			}
		}()
		v, err := f()
		done <- Outcome[T]{v, err}
	}()
	return done
}
