package ingest

import (
	"bytes"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
)

// looksLikeCallgrind: callgrind files start with "# callgrind format" (or,
// older ones, with their "version:"/"events:" header lines).
func looksLikeCallgrind(head []byte) bool {
	if bytes.HasPrefix(head, []byte("# callgrind format")) {
		return true
	}
	return bytes.HasPrefix(head, []byte("version: 1\n")) && bytes.Contains(head, []byte("\ncreator: callgrind"))
}

// cgFunc is a callgrind function: its name and object identify it (as
// callgrind_annotate's "file:function [object]" does, the file left out
// since an inlined file changes it).
type cgFunc struct{ name, object string }

// callgrindParser holds the state of a callgrind file as it is read.
type callgrindParser struct {
	name      string
	events    []string
	event     int // the column read
	positions int // position columns before the costs (line, or instr line)

	// name compression: "(id) name" defines, "(id)" refers; files, functions
	// and objects have id spaces of their own.
	files, fns, objects map[string]string

	funcs    []cgFunc
	funcIDs  map[cgFunc]int
	self     []int64
	file     []string
	line     []int64
	arcs     map[cgArc]int64
	ob, fl   string
	fn       int // current function, -1 before the first fn=
	cob, cfn string
	callee   int   // the function of the pending calls= line's cost, -1 if none
	last     int64 // the previous cost line's first position, for +N/-N/*
	sawEvent bool
}

// parseCallgrind reads valgrind's callgrind output (the format of
// valgrind's manual's "Callgrind Format Specification"): every part of the file, one event
// (--sample-type, default the first of "events:"). Callgrind records each
// function's self cost and each call arc's inclusive cost, not stacks; the
// call graph is expanded into call paths from the functions nobody calls,
// each function's self cost shared among the paths that reach it in
// proportion to the cost that flows along them (the largest remainders
// get the units left), so each function's self cost is exactly
// callgrind_annotate's, and so is its inclusive cost where it has a single
// caller (or its callees do). A call back into a function already on the
// path (recursion) is not followed. Frames are named by function, their
// Module is the object's base name, File the function's source file, Line
// the first line with cost in it.
func parseCallgrind(r io.Reader, name string, o Options) (*profile.Profile, error) {
	cp := &callgrindParser{name: name, files: map[string]string{}, fns: map[string]string{},
		objects: map[string]string{}, funcIDs: map[cgFunc]int{}, arcs: map[cgArc]int64{}, fn: -1, callee: -1,
		positions: 1, event: -1}
	sc := newLineScanner(r, name)
	for {
		line, ok := sc.next()
		if !ok {
			break
		}
		if err := cp.lineOf(bytes.TrimRight(line, " \t\r"), sc.line, o.SampleType); err != nil {
			return nil, err
		}
	}
	if sc.err != nil {
		return nil, sc.err
	}
	if len(cp.events) == 0 {
		return nil, fileError(name, "no events: line in the callgrind file")
	}
	return cp.profile()
}

func (cp *callgrindParser) lineOf(line []byte, n int, sampleType string) error {
	if len(line) == 0 || line[0] == '#' {
		return nil
	}
	if c := line[0]; c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
		return cp.cost(line, n)
	}
	key, value, ok := bytes.Cut(line, []byte("="))
	if !ok || bytes.ContainsAny(key, ": ") {
		k, v, _ := bytes.Cut(line, []byte(":"))
		return cp.header(string(k), string(bytes.TrimSpace(v)), n, sampleType)
	}
	v := string(value)
	var err error
	switch string(key) {
	case "ob":
		cp.ob, err = cp.compressed(cp.objects, v, n)
	case "fl", "fi", "fe":
		var f string
		if f, err = cp.compressed(cp.files, v, n); string(key) == "fl" {
			cp.fl = f
		}
	case "fn":
		var f string
		if f, err = cp.compressed(cp.fns, v, n); err == nil {
			cp.fn = cp.function(cgFunc{f, cp.ob}, cp.fl)
			cp.cob, cp.cfn, cp.callee = "", "", -1
		}
	case "cob":
		cp.cob, err = cp.compressed(cp.objects, v, n)
	case "cfi", "cfl":
		_, err = cp.compressed(cp.files, v, n)
	case "cfn":
		cp.cfn, err = cp.compressed(cp.fns, v, n)
	case "calls":
		if cp.fn < 0 || cp.cfn == "" {
			return lineError(cp.name, n, "calls= outside a function or without cfn=")
		}
		ob := cp.cob
		if ob == "" {
			ob = cp.ob
		}
		cp.callee = cp.function(cgFunc{cp.cfn, ob}, "")
		cp.cob = ""
	case "jump", "jcnd":
	default:
		return lineError(cp.name, n, "unknown callgrind line %q", clip(line))
	}
	return err
}

// header reads a "key: value" line; only events and positions matter.
func (cp *callgrindParser) header(key, value string, n int, sampleType string) error {
	switch key {
	case "events":
		if cp.sawEvent && cp.event >= 0 {
			return nil // a later part repeats the events
		}
		cp.events = strings.Fields(value)
		if len(cp.events) == 0 {
			return lineError(cp.name, n, "no event names")
		}
		cp.event = 0
		if sampleType != "" {
			cp.event = -1
			for i, e := range cp.events {
				if e == sampleType {
					cp.event = i
				}
			}
			if cp.event < 0 {
				return fileError(cp.name, "no sample type %q: this callgrind file has events %v", sampleType, cp.events)
			}
		}
		cp.sawEvent = true
	case "positions":
		cp.positions = len(strings.Fields(value))
		if cp.positions == 0 || cp.positions > 2 {
			return lineError(cp.name, n, "positions %q: want line, instr or instr line", value)
		}
	case "version", "creator", "pid", "thread", "cmd", "part", "desc", "summary", "totals", "event", "timeframe (BB)":
	default:
		return lineError(cp.name, n, "unknown callgrind line %q", clip([]byte(key)))
	}
	return nil
}

// compressed resolves callgrind's name compression.
func (cp *callgrindParser) compressed(names map[string]string, v string, n int) (string, error) {
	if len(v) == 0 || v[0] != '(' {
		return v, nil
	}
	end := strings.IndexByte(v, ')')
	if end < 0 {
		return "", lineError(cp.name, n, "unclosed name id in %q", clip([]byte(v)))
	}
	id, rest := v[1:end], v[end+1:]
	if len(rest) > 0 {
		if rest[0] == ' ' {
			rest = rest[1:]
		}
		names[id] = rest
		return rest, nil
	}
	name, ok := names[id]
	if !ok {
		return "", lineError(cp.name, n, "name id (%s) used before it is defined", id)
	}
	return name, nil
}

func (cp *callgrindParser) function(f cgFunc, file string) int {
	id, ok := cp.funcIDs[f]
	if !ok {
		id = len(cp.funcs)
		cp.funcIDs[f] = id
		cp.funcs = append(cp.funcs, f)
		cp.self = append(cp.self, 0)
		cp.file = append(cp.file, file)
		cp.line = append(cp.line, 0)
	} else if cp.file[id] == "" {
		cp.file[id] = file
	}
	return id
}

// cost reads a cost line: positions, then the events' costs (missing
// trailing ones are 0). After calls= it is the call's inclusive cost.
func (cp *callgrindParser) cost(line []byte, n int) error {
	if cp.fn < 0 || cp.event < 0 {
		return lineError(cp.name, n, "cost line before fn= and events:")
	}
	tokens := bytes.Fields(line)
	if len(tokens) < cp.positions {
		return lineError(cp.name, n, "cost line %q without its positions", clip(line))
	}
	pos, err := cp.position(tokens[0], n)
	if err != nil {
		return err
	}
	var value int64
	if i := cp.positions + cp.event; i < len(tokens) {
		if value, err = strconv.ParseInt(string(tokens[i]), 10, 64); err != nil || value < 0 {
			return lineError(cp.name, n, "bad cost %q", clip(tokens[i]))
		}
	}
	if cp.callee >= 0 {
		if cp.callee != cp.fn {
			a := cgArc{cp.fn, cp.callee}
			if value > math.MaxInt64-cp.arcs[a] {
				return lineError(cp.name, n, "costs add up past the int64 maximum")
			}
			cp.arcs[a] += value
		}
		cp.callee, cp.cfn = -1, ""
		return nil
	}
	if value > math.MaxInt64-cp.self[cp.fn] {
		return lineError(cp.name, n, "costs add up past the int64 maximum")
	}
	cp.self[cp.fn] += value
	if value > 0 && cp.positions == 1 && pos > 0 && (cp.line[cp.fn] == 0 || pos < cp.line[cp.fn]) {
		cp.line[cp.fn] = pos
	}
	return nil
}

// position reads a position token: absolute (decimal or 0x hex), relative
// to the previous one (+N, -N) or the same ("*").
func (cp *callgrindParser) position(t []byte, n int) (int64, error) {
	var v int64
	var err error
	switch {
	case t[0] == '*':
		return cp.last, nil
	case t[0] == '+' || t[0] == '-':
		v, err = strconv.ParseInt(string(t), 10, 64)
		v += cp.last
	case bytes.HasPrefix(t, []byte("0x")):
		var u uint64
		u, err = strconv.ParseUint(string(t[2:]), 16, 64)
		v = int64(u & math.MaxInt64) // #nosec G115 -- an address only orders positions
	default:
		v, err = strconv.ParseInt(string(t), 10, 64)
	}
	if err != nil {
		return 0, lineError(cp.name, n, "bad position %q", clip(t))
	}
	cp.last = v
	return v, nil
}

// profile expands the call graph into call paths and shares each
// function's self cost among its paths (callGraph.samples).
func (cp *callgrindParser) profile() (*profile.Profile, error) {
	p := &profile.Profile{SampleType: cp.events[cp.event], Unit: "count", Exact: true}
	frames := make([]uint32, len(cp.funcs))
	names := make([]string, len(cp.funcs))
	for i, f := range cp.funcs {
		frames[i] = p.Intern(profile.Frame{Name: f.name, Module: f.object, File: cp.file[i], Line: cp.line[i]})
		names[i] = f.name
	}
	g := callGraph{name: cp.name, funcs: names, self: cp.self, arcs: cp.arcs}
	var err error
	if p.Samples, err = g.samples(frames); err != nil {
		return nil, err
	}
	if len(p.Samples) == 0 {
		return nil, fileError(cp.name, "no cost in the callgrind file")
	}
	return p, nil
}
