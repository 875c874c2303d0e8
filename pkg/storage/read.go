package storage

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/ext"
)

// listBytes bounds the values of one IN list or array argument: ClickHouse's
// max_query_size is 256 KiB by default (and a readonly user cannot raise
// it), and a query holds a list's ids at most three times over (its IN
// lists and the key arrays of grouping.keyExpr; docs/SCHEMA.md, "Reads").
const listBytes = 64 << 10

// lists splits vals into lists whose SQL text (cost each, with its
// separator) fits listBytes; a longer value goes alone.
func lists[T any](vals []T, cost func(T) int) [][]T {
	var out [][]T
	lo, size := 0, 0
	for i, v := range vals {
		c := cost(v)
		if i > lo && size+c > listBytes {
			out = append(out, vals[lo:i])
			lo, size = i, 0
		}
		size += c
	}
	if lo < len(vals) {
		out = append(out, vals[lo:])
	}
	return out
}

// nameLists splits names into lists that fit listBytes quoted.
func nameLists(names []string) [][]string {
	return lists(names, func(n string) int { return 2*len(n) + 4 }) // every byte escaped at worst, quotes, comma
}

// idLists splits ingest ids (or hashes) into lists that fit listBytes.
func idLists(ids []uint64) [][]uint64 {
	return lists(ids, func(uint64) int { return 22 }) // 20 digits at most, comma, space
}

// grouping maps the runs of a read to the caller's groups. The server
// groups by a key per ingest id; keys[k] lists the caller's groups that
// key k feeds. When no run is in two groups the key is the group itself,
// so ClickHouse sums each group (far fewer rows than per run).
type grouping struct {
	app    string
	ids    []uint64 // distinct ingest ids
	stacks []uint64 // distinct stacks of ids[i] (Run.Stacks)
	summed []bool   // Run.StacksSummed of ids[i]
	key    []uint32 // server key of ids[i]
	keys   [][]int  // groups per server key
}

func newGrouping(groups [][]Run) (*grouping, error) {
	g := &grouping{}
	groupsOf := map[uint64][]int{}
	for gi, runs := range groups {
		for _, r := range runs {
			if r.IngestID == 0 {
				return nil, fmt.Errorf("run %s/%s/%s has no ingest id (take runs from Store.Runs)", r.App, r.Build, r.Run)
			}
			if g.app == "" {
				g.app = r.App
			} else if r.App != g.app {
				return nil, fmt.Errorf("runs of two apps (%q and %q) in one read", g.app, r.App)
			}
			if _, ok := groupsOf[r.IngestID]; !ok {
				g.ids = append(g.ids, r.IngestID)
				g.stacks = append(g.stacks, r.Stacks)
				g.summed = append(g.summed, r.StacksSummed)
			}
			groupsOf[r.IngestID] = append(groupsOf[r.IngestID], gi)
		}
	}
	if len(g.ids) == 0 {
		return nil, ErrNoRuns
	}
	shared := false
	for _, gs := range groupsOf {
		shared = shared || len(gs) > 1
	}
	if shared { // one key per run, fanned out to each of its groups
		for i, id := range g.ids {
			g.key = append(g.key, uint32(i)) // #nosec G115 -- an index of the query's runs: far below 2^32
			g.keys = append(g.keys, groupsOf[id])
		}
		return g, nil
	}
	for gi := range groups {
		g.keys = append(g.keys, []int{gi})
	}
	for _, id := range g.ids {
		g.key = append(g.key, uint32(groupsOf[id][0])) // #nosec G115 -- a group index, below the query's few selections
	}
	return g, nil
}

// perIngest reports whether every server key stands for one ingest (one
// run per group, or runs shared between groups).
func (g *grouping) perIngest() bool {
	seen := make([]bool, len(g.keys))
	for _, k := range g.key {
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// parts splits g into groupings of one id list each (idLists), keeping
// the server keys: a key's ingests may then be in several parts.
func (g *grouping) parts() []*grouping {
	ls := idLists(g.ids)
	if len(ls) == 1 {
		return []*grouping{g}
	}
	out := make([]*grouping, len(ls))
	lo := 0
	for i, ids := range ls {
		hi := lo + len(ids)
		out[i] = &grouping{app: g.app, ids: ids, stacks: g.stacks[lo:hi], summed: g.summed[lo:hi], key: g.key[lo:hi], keys: g.keys}
		lo = hi
	}
	return out
}

// keyExpr is the SQL of the server key, with its bound arguments.
func (g *grouping) keyExpr() (string, []any) {
	return "toUInt32(transform(ingest_id, ?, ?, 0))", []any{g.ids, g.key}
}

// scanRows runs a grouped query and calls row for each result row with
// its server key, failing with ErrTooManyRows past the cap.
func (s *Store) scanRows(ctx context.Context, what, query string, args []any, dest []any, row func(key uint32) error) error {
	rows, err := s.conn.Query(ctx, query, append(args, s.maxRows+1)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var key uint32
	dest = append([]any{&key}, dest...)
	n := 0
	for rows.Next() {
		if n++; n > s.maxRows {
			return fmt.Errorf("%s: %w: more than %d rows; select fewer runs or raise the cap", what, ErrTooManyRows, s.maxRows)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := row(key); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// EachRun makes each run a group of its own, for per-run reads
// (StackValues, Timeline).
func EachRun(runs []Run) [][]Run {
	groups := make([][]Run, len(runs))
	for i := range runs {
		groups[i] = runs[i : i+1 : i+1]
	}
	return groups
}

// reads splits groups into reads, each a list of places in groups: in the
// order of their runs' ingest ids, as many at a time as their rows (at
// most rows(run) for each run) fit Options.MaxRows. The run stacks and
// samples tables are ordered by ingest id, so that each read spans about
// one key range of them: one read per build instead selects a few
// granules all over the table, reading up to 3x the rows it returns. A
// group over the cap on its own is a read of its own (which fails with
// ErrTooManyRows).
func (s *Store) reads(groups [][]Run, rows func(Run) uint64) [][]int {
	first := func(g []Run) uint64 {
		if len(g) == 0 {
			return 0
		}
		return slices.MinFunc(g, func(a, b Run) int { return cmp.Compare(a.IngestID, b.IngestID) }).IngestID
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(first(groups[a]), first(groups[b])) })
	size := func(g int) (n uint64) {
		for _, r := range groups[g] {
			n += rows(r)
		}
		return n
	}
	maxRows := uint64(s.maxRows) // #nosec G115 -- a positive cap
	var out [][]int
	for len(order) > 0 {
		n, total := 1, size(order[0])
		for n < len(order) && total+size(order[n]) <= maxRows {
			total += size(order[n])
			n++
		}
		out, order = append(out, order[:n:n]), order[n:]
	}
	return out
}

// pick lists groups[at[0]], groups[at[1]], ...
func pick(groups [][]Run, at []int) [][]Run {
	out := make([][]Run, len(at))
	for i, g := range at {
		out[i] = groups[g]
	}
	return out
}

// eachRead calls read with each read of groups (see reads), a list of
// ingests (grouping.parts) at a time: the places in groups its grouping's
// groups stand for, and the grouping.
func (s *Store) eachRead(groups [][]Run, rows func(Run) uint64, what string, read func(at []int, g *grouping) error) error {
	for _, at := range s.reads(groups, rows) {
		all, err := newGrouping(pick(groups, at))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, g := range all.parts() {
			if err := read(at, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashTable is an external table of one UInt64 column h.
func hashTable(name string, hashes []uint64) (*ext.Table, error) {
	t, err := ext.NewTable(name, ext.Column("h", "UInt64"))
	if err != nil {
		return nil, err
	}
	if _, err := t.Block().Columns[0].Append(hashes); err != nil {
		return nil, err
	}
	return t, nil
}

// collect scans every row with one, closing rows.
func collect[T any](rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}, what string, one func(scan func(...any) error) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := one(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
