package plugin

import (
	"math"
	"runtime/debug"
	"sync"
)

// memoryBudgets keeps the process's soft memory limit (Go's
// SetMemoryLimit) at the sum of what its live data source instances may
// hold, each its queries' memory and its stack cache: Grafana runs one
// plugin process for every data source of the type (and, for a few
// seconds after a settings change, the old instance beside the new one),
// each instance with its own query gate and cache. Below that sum the
// garbage collector lets the heap grow to twice what the queries hold;
// a limit of what they may hold keeps it near that. A limit the process
// started with (GOMEMLIMIT) stays the least.
type memoryBudgets struct {
	mu     sync.Mutex
	floor  int64
	claims map[*Datasource]int64
}

var budgets = newMemoryBudgets(debug.SetMemoryLimit(-1))

// newMemoryBudgets starts from the process's limit (math.MaxInt64: none).
func newMemoryBudgets(start int64) *memoryBudgets {
	if start == math.MaxInt64 {
		start = 0
	}
	return &memoryBudgets{floor: start, claims: map[*Datasource]int64{}}
}

// claim records what instance d may hold, and returns the limit set.
func (m *memoryBudgets) claim(d *Datasource, n int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims[d] = n
	return m.apply()
}

// release forgets d's claim (a disposed instance), and returns the limit
// set.
func (m *memoryBudgets) release(d *Datasource) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.claims, d)
	return m.apply()
}

func (m *memoryBudgets) apply() int64 {
	var sum int64
	for _, n := range m.claims {
		sum += n
	}
	limit := max(m.floor, sum)
	if limit == 0 { // no instance and no limit to start with
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}
