// Package pproftop runs `go tool pprof -top` and `-peek` as a reference for
// tests: the per-function flat and cumulative totals that pprof itself
// computes for one or more profile files, optionally as a difference
// against base files and under pprof's filters, and a function's callers
// and callees.
// Tests of the ingestion formats, the tree engine's functions table and the
// plugin compare their own numbers with it.
package pproftop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Entry is one function's row of `pprof -top`, in the profile's raw unit.
type Entry struct {
	Flat int64 // value of samples whose leaf is the function
	Cum  int64 // value of samples with the function anywhere in the stack, once each
}

// Top returns pprof's per-function flat and cumulative totals, keyed by
// function name, for files merged together; with diffBase, the totals are
// those of files minus those of diffBase (merged), as `-diff_base` prints
// them. Values are exact integers in the unit of the default sample type
// of files[0] (pprof's rule: DefaultSampleType, else the last type).
//
// It runs `go tool pprof` (the go command must be on PATH) with trimming
// off, so every function with a non-zero flat or cum is listed. Rows that
// pprof marks "(inline)" or "(partial-inline)" are keyed by the bare name;
// rows with the same name (same function in different files) are summed.
// flags are more pprof options, such as -focus=REGEXP.
func Top(files, diffBase []string, flags ...string) (map[string]Entry, error) {
	out, err := run("-top", files, diffBase, flags)
	if err != nil {
		return nil, err
	}
	return parseTop(out)
}

// run runs pprof with a report option (-top, -peek=...) and flags on files,
// with trimming off and values printed as raw integers.
func run(report string, files, diffBase, flags []string) ([]byte, error) {
	if len(files) == 0 {
		return nil, errors.New("pproftop: no profile files")
	}
	unit, err := defaultUnit(files[0])
	if err != nil {
		return nil, err
	}
	args := []string{"tool", "pprof", report, "-trim=false", "-nodefraction=0", "-edgefraction=0",
		"-unit=" + unit}
	args = append(args, flags...)
	if len(diffBase) > 0 {
		// go tool pprof honours only the last -diff_base: merge them first.
		base, err := Merge("", diffBase)
		if err != nil {
			return nil, err
		}
		defer os.Remove(base)
		args = append(args, "-diff_base="+base)
	}
	args = append(args, files...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pproftop: go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Merge writes the merge of files, as `go tool pprof -proto FILES` makes
// it, to a new file in dir ("": the system's temporary directory) and
// returns its path.
func Merge(dir string, files []string) (string, error) {
	var ps []*profile.Profile
	for _, file := range files {
		p, err := read(file)
		if err != nil {
			return "", err
		}
		ps = append(ps, p)
	}
	m, err := profile.Merge(ps)
	if err != nil {
		return "", fmt.Errorf("pproftop: merging %s: %w", strings.Join(files, " "), err)
	}
	f, err := os.CreateTemp(dir, "pproftop-merged-*.pb.gz")
	if err != nil {
		return "", fmt.Errorf("pproftop: %w", err)
	}
	if err := errors.Join(m.Write(f), f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("pproftop: %w", err)
	}
	return f.Name(), nil
}

func read(file string) (*profile.Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("pproftop: %w", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("pproftop: %s: %w", file, err)
	}
	return p, nil
}

// defaultUnit is the unit of the sample type pprof reports by default;
// asking pprof for the profile's own unit makes it print raw integers.
func defaultUnit(file string) (string, error) {
	p, err := read(file)
	if err != nil {
		return "", err
	}
	i, err := p.SampleIndexByName("")
	if err != nil || len(p.SampleType) == 0 {
		return "", fmt.Errorf("pproftop: %s: no default sample type", file)
	}
	return p.SampleType[i].Unit, nil
}

// Peek is a function's entry of `pprof -peek`: its own row, and the value
// of each edge from a caller and to a callee, by function name.
type Peek struct {
	Entry
	Callers, Callees map[string]int64
}

// PeekAt returns pprof's -peek entry of each function whose name re
// matches (an anchored regular expression picks one), keyed by name.
func PeekAt(files []string, re string, flags ...string) (map[string]Peek, error) {
	out, err := run("-peek="+re, files, nil, flags)
	if err != nil {
		return nil, err
	}
	return parsePeek(out)
}

// A -peek edge row (value, share, name), and a function's own row.
var (
	peekEdge = regexp.MustCompile(`^\s+(-?\d+)[a-zA-Z]*\s+\S+%\s+\|\s+(.+)$`)
	peekSelf = regexp.MustCompile(`^\s*(-?\d+)[a-zA-Z]*\s+\S+%\s+\S+%\s+(-?\d+)[a-zA-Z]*\s+\S+%\s+\|\s+(.+)$`)
)

// parsePeek reads the blocks between the dashed lines after the heading:
// caller edges, then the function's row, then callee edges.
func parsePeek(out []byte) (map[string]Peek, error) {
	peeks := make(map[string]Peek)
	sc := bufio.NewScanner(bytes.NewReader(out))
	var callers map[string]int64
	var cur *Peek
	var curName string
	flush := func() {
		if cur != nil {
			peeks[curName] = *cur
		}
		cur, callers = nil, map[string]int64{}
	}
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if !inTable {
			inTable = strings.Contains(line, "calls calls% + context")
			callers = map[string]int64{}
			continue
		}
		if strings.HasPrefix(line, "---") {
			flush()
			continue
		}
		if m := peekSelf.FindStringSubmatch(line); m != nil {
			flat, err1 := strconv.ParseInt(m[1], 10, 64)
			cum, err2 := strconv.ParseInt(m[2], 10, 64)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("pproftop: row %q: %w", line, err)
			}
			curName = bareName(strings.TrimSpace(m[3]))
			cur = &Peek{Entry: Entry{Flat: flat, Cum: cum}, Callers: callers, Callees: map[string]int64{}}
			continue
		}
		m := peekEdge.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("pproftop: unexpected -peek row %q", line)
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("pproftop: row %q: %w", line, err)
		}
		name := bareName(strings.TrimSpace(m[2]))
		if cur == nil {
			callers[name] += v
		} else {
			cur.Callees[name] += v
		}
	}
	if !inTable {
		return nil, fmt.Errorf("pproftop: no -peek table in pprof output: %.200q", out)
	}
	return peeks, sc.Err()
}

// bareName drops pprof's inlining marks from a function name.
func bareName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, " (inline)"), " (partial-inline)")
}

// A -top row: flat flat% sum% cum cum% name.
var topRow = regexp.MustCompile(`^\s*(-?\d+)[a-zA-Z]*\s+\S+%\s+\S+%\s+(-?\d+)[a-zA-Z]*\s+\S+%\s+(.+)$`)

// parseTop reads the table that follows the "flat  flat%" heading.
func parseTop(out []byte) (map[string]Entry, error) {
	top := make(map[string]Entry)
	sc := bufio.NewScanner(bytes.NewReader(out))
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if !inTable {
			inTable = strings.HasPrefix(strings.TrimSpace(line), "flat  flat%")
			continue
		}
		m := topRow.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("pproftop: unexpected -top row %q", line)
		}
		flat, err1 := strconv.ParseInt(m[1], 10, 64)
		cum, err2 := strconv.ParseInt(m[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("pproftop: row %q: %w", line, err)
		}
		name := bareName(m[3])
		e := top[name]
		top[name] = Entry{Flat: e.Flat + flat, Cum: e.Cum + cum}
	}
	if !inTable {
		return nil, fmt.Errorf("pproftop: no -top table in pprof output: %.200q", out)
	}
	return top, sc.Err()
}
