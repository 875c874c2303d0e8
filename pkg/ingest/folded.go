package ingest

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// parseFolded reads Brendan Gregg's folded stacks: "root;...;leaf COUNT" per
// line. The count is the last space- or tab-separated token, so frames may
// contain spaces; as in flamegraph.pl exactly one separator precedes it
// ("a;b  3" is the stack "a;b " — perf symbols can end with a space).
// Whitespace after the count is ignored. Each line becomes one sample in file order (repeated stacks
// add up wherever they are summed); blank lines are skipped.
func parseFolded(r io.Reader, name string) (*profile.Profile, error) {
	p := &profile.Profile{SampleType: "samples", Unit: "count"}
	frames := newFrameTable(p)
	var arena stackArena
	sc := newLineScanner(r, name)
	for {
		line, ok := sc.next()
		if !ok {
			break
		}
		line = bytes.TrimRight(line, " \t\r\v\f")
		if len(line) == 0 {
			continue
		}
		sp := bytes.LastIndexAny(line, " \t")
		if sp < 0 {
			return nil, lineError(name, sc.line, "missing count in %q", clip(line))
		}
		count, err := strconv.ParseInt(string(line[sp+1:]), 10, 64)
		if err != nil {
			return nil, lineError(name, sc.line, "bad count %q", clip(line[sp+1:]))
		}
		if count < 0 {
			return nil, lineError(name, sc.line, "negative count %d", count)
		}
		stack := line[:sp] // one separator only: a frame may end with a space
		if len(stack) == 0 {
			return nil, lineError(name, sc.line, "missing stack before count %d", count)
		}
		ids := arena.alloc(bytes.Count(stack, []byte{';'}) + 1)
		for i := range ids {
			frame, rest, _ := bytes.Cut(stack, []byte{';'})
			ids[i] = frames.id(frame, nil)
			stack = rest
		}
		p.Samples = append(p.Samples, profile.Sample{Stack: ids, Value: count, Time: -1})
	}
	if sc.err != nil {
		return nil, sc.err
	}
	if len(p.Samples) == 0 {
		return nil, fileError(name, "no stacks in folded file")
	}
	return p, nil
}

// clip shortens b for an error message.
func clip(b []byte) string {
	const n = 40
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// foldedName makes a frame name printable on a folded line: ';' separates
// frames and a newline ends the line, so they become ':' and ' ' (the same
// repair stackcollapse-perf.pl applies to ';').
var foldedName = strings.NewReplacer(";", ":", "\n", " ", "\r", " ")

// WriteFolded writes p as folded stacks: one "root;...;leaf N" line per
// distinct stack of frame names, N the sum of its samples' values, lines in
// the order each stack was first seen in p.Samples. Frames' modules and
// samples' times are not part of the format. An invalid p (see
// profile.Profile.CheckValid) is an error. Names containing ';' or line
// breaks are written with ':' and spaces instead.
func WriteFolded(w io.Writer, p *profile.Profile) error {
	if err := p.CheckValid(); err != nil {
		return err
	}
	names := make([]string, len(p.Frames))
	for i, f := range p.Frames {
		names[i] = foldedName.Replace(f.Name)
	}
	index := make(map[string]int)
	var stacks []string
	var values []int64
	var b strings.Builder
	for _, s := range p.Samples {
		b.Reset()
		for i, id := range s.Stack {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(names[id])
		}
		k := b.String()
		i, ok := index[k]
		if !ok {
			i = len(stacks)
			index[k] = i
			stacks = append(stacks, k)
			values = append(values, 0)
		}
		values[i] += s.Value
	}
	bw := bufio.NewWriter(w)
	for i, s := range stacks {
		bw.WriteString(s)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(values[i], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
