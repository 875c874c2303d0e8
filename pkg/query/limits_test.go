package query

import (
	"errors"
	"testing"

	"github.com/flamediff/flamediff/pkg/storage"
)

// TestAdmit: the default budget (640 MB) admits a diff of 100 runs a side
// over 50,000 stacks, every stack in every run (10M rows, issue 30), and
// refuses twice as many runs, or 10 runs of 5M stacks, naming the setting.
func TestAdmit(t *testing.T) {
	runs := func(n int, stacks uint64) []storage.Run {
		out := make([]storage.Run, n)
		for i := range out {
			out[i].Stacks = stacks
		}
		return out
	}
	e := &Executor{MaxMemory: 640 << 20}
	if err := e.admit(runs(200, 50_000)); err != nil {
		t.Errorf("100 runs a side of 50,000 stacks: %v", err)
	}
	for _, rs := range [][]storage.Run{runs(400, 50_000), runs(10, 5_000_000)} {
		if err := e.admit(rs); !errors.Is(err, ErrTooBig) {
			t.Errorf("%d runs of %d stacks: %v, want ErrTooBig", len(rs), rs[0].Stacks, err)
		}
	}
	if err := (&Executor{}).admit(runs(400, 50_000)); err != nil {
		t.Errorf("no budget: %v", err)
	}
}
