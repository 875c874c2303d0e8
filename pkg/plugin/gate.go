package plugin

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// gate admits a bounded number of queries of one data source instance at
// a time: each holds up to two ClickHouse connections and an engine in
// memory. The others wait their turn, up to a limit, and are then told
// the data source is busy — instead of the pool's "acquire conn timeout"
// or the process running out of memory.
type gate struct {
	slots chan struct{}
	wait  time.Duration
}

func newGate(n int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, n), wait: wait}
}

// enter waits for a slot; call the returned function to give it back.
// waiting becomes true when the query has to wait, and false again only
// when it gets its turn before its deadline: a caller that sees its
// deadline pass while waiting is true knows the query never ran.
func (g *gate) enter(ctx context.Context, waiting *atomic.Bool) (func(), error) {
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	default:
	}
	waiting.Store(true)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		if ctx.Err() == context.DeadlineExceeded { // the turn came too late to run
			<-g.slots
			return nil, g.late()
		}
		waiting.Store(false)
		return func() { <-g.slots }, nil
	case <-t.C:
		return nil, fmt.Errorf("%w: %d queries running, this one waited %v for its turn", errBusy, cap(g.slots), g.wait)
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded { // the cause is the load, not the query
			return nil, g.late()
		}
		return nil, ctx.Err()
	}
}

// late is the error of a query whose deadline passed while it waited.
func (g *gate) late() error {
	return fmt.Errorf("%w: %d queries running, this one waited until its deadline (queryTimeout) for its turn", errBusy, cap(g.slots))
}
