package tree

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/flamediff/flamediff/pkg/internal/fault"
)

// stopper tells the layout to give up once the context given to
// StopWhen ends; the zero value never does.
type stopper struct{ flag *atomic.Bool }

// stopped is what an abandoned layout panics with; Build recovers it.
type stopped struct{}

// StopWhen makes Build stop within a fraction of a second once ctx ends,
// returning a tree of the root alone: the caller, whose context ended,
// discards it. Call it before Build.
func (b *Builder) StopWhen(ctx context.Context) {
	flag := new(atomic.Bool)
	context.AfterFunc(ctx, func() { flag.Store(true) })
	b.stop = stopper{flag}
}

// check abandons the layout (on any goroutine) once the context ended.
func (s stopper) check() {
	if s.flag != nil && s.flag.Load() {
		panic(stopped{})
	}
}

// recover turns an abandoned layout into a tree of the root alone and
// lets any other panic through.
func (s stopper) recover(t **Tree, frames *Frames) {
	p := recover()
	if p == nil {
		return
	}
	if _, ok := p.(stopped); !ok {
		panic(p)
	}
	*t = &Tree{Frames: frames, Nodes: []Node{{Frame: RootFrame, Size: 1}}}
}

// carried is a panic of a goroutine of the layout, handed to the
// goroutine that waits for it: a panic left on the goroutine of its own
// would kill the process, out of reach of the caller's recover.
type carried struct {
	value any
	stack []byte
}

// carry runs f, catching its panic.
func carry(f func()) (p *carried) {
	defer func() {
		if v := recover(); v != nil {
			p = &carried{v, debug.Stack()}
		}
	}()
	f()
	return nil
}

// OnTwoCores runs first on another core and second on this one, and
// returns when both are done, with the other core's panic rethrown here
// as a *CorePanic; unless worth, when it runs both here. point names the
// other core's fault point. Packages that turn trees into answers use
// it too, so that a panic there reaches the caller the same way.
func OnTwoCores(worth bool, point string, first, second func()) {
	if !worth {
		first()
		second()
		return
	}
	done := make(chan struct{})
	var p *carried
	go func() {
		p = carry(func() {
			fault.Point(point)
			first()
		})
		close(done)
	}()
	second()
	<-done
	p.rethrow()
}

// rethrow panics again, on the waiting goroutine, with what f panicked
// with; an abandoned layout stays recognisable as such.
func (p *carried) rethrow() {
	switch {
	case p == nil:
	case p.value == stopped{}:
		panic(stopped{})
	default:
		panic(&CorePanic{Value: p.value, Stack: p.stack})
	}
}

// CorePanic is what a panic on one of the engine's other cores becomes
// on the goroutine that waits for it: the value it panicked with and
// the stack where it did, for the log (the message stays short).
type CorePanic struct {
	Value any
	Stack []byte
}

func (p *CorePanic) String() string { return fmt.Sprintf("%v (on another core)", p.Value) }
