package query

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A panic of a query's work is its error, and a call that ignores its
// context is given up when the context ends.
func TestGuard(t *testing.T) {
	_, err := Guard(context.Background(), func(context.Context) (int, error) {
		var m map[string]int
		m["x"] = 1 // a real bug: assignment to a nil map
		return 0, nil
	})
	var p *Panic
	if !errors.Is(err, ErrInternal) || !errors.As(err, &p) || !strings.Contains(err.Error(), "nil map") || len(p.Stack) == 0 {
		t.Errorf("panic: %v, want an internal error naming it, with its stack", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	stuck := make(chan struct{})
	defer close(stuck)
	_, err = Guard(ctx, func(context.Context) (int, error) {
		<-stuck // ignores its context, as the driver's handshake does
		return 0, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stuck call: %v, want the deadline", err)
	}
}
