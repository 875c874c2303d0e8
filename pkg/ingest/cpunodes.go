package ingest

import (
	"bytes"
)

// nodeReader reads a V8 profile's node table with a jsonScanner, each node
// as encoding/json decodes it into a cpuNode: keys matched case folded,
// the last one given winning, others skipped whatever they hold; null
// leaves an object's or a number's or a string's field as it is, and makes
// a slice or a pointer nil. It spares encoding/json's allocations per
// value, most of a V8 profile's read: strings the nodes repeat (urls,
// function names) are held once, children in blocks.
type nodeReader struct {
	s       *jsonStream
	sc      *jsonScanner
	strings map[string]string
	kids    []int64 // a node's children as read
	arena   arena[int64]
}

// cpuNodes reads the node table that comes next (or null) into nodes, at
// most maxItems of them.
func (s *jsonStream) cpuNodes(nodes *[]cpuNode) error {
	*nodes = nil
	return s.scan("nodes", func(sc *jsonScanner) error {
		r := nodeReader{s: s, sc: sc, strings: map[string]string{}}
		return sc.list(s, "nodes", func(c byte) error {
			*nodes = append(*nodes, cpuNode{})
			return r.node(c, &(*nodes)[len(*nodes)-1])
		})
	})
}

// keyIs reports whether key names the field name, as encoding/json
// matches them.
func keyIs(key []byte, name string) bool {
	return string(key) == name || bytes.EqualFold(key, []byte(name))
}

// node reads a node (c its first byte) into n, which is zero.
func (r *nodeReader) node(c byte, n *cpuNode) error {
	if c == 'n' {
		return r.sc.literal(r.s, "null")
	}
	if c != '{' {
		return r.notA(c, "node", "an object", 1)
	}
	r.sc.next()
	return r.sc.fields(r.s, func(key []byte, c byte) error {
		switch {
		case keyIs(key, "id"):
			return r.integer(c, "id", &n.ID, 2)
		case keyIs(key, "callFrame"):
			return r.callFrame(c, &n.CallFrame)
		case keyIs(key, "children"):
			return r.children(c, &n.Children)
		case keyIs(key, "parent"):
			if c == 'n' {
				n.Parent = nil
				return r.sc.literal(r.s, "null")
			}
			if n.Parent == nil {
				n.Parent = new(int64)
			}
			return r.integer(c, "parent", n.Parent, 2)
		}
		return r.sc.skip(r.s, c, 2)
	})
}

// callFrame reads a node's call frame (c its first byte) into cf.
func (r *nodeReader) callFrame(c byte, cf *cpuCallFrame) error {
	if c == 'n' {
		return r.sc.literal(r.s, "null")
	}
	if c != '{' {
		return r.notA(c, "callFrame", "an object", 2)
	}
	r.sc.next()
	return r.sc.fields(r.s, func(key []byte, c byte) error {
		switch {
		case keyIs(key, "functionName"):
			return r.string(c, "functionName", &cf.FunctionName)
		case keyIs(key, "url"):
			return r.string(c, "url", &cf.URL)
		case keyIs(key, "lineNumber"):
			return r.integer(c, "lineNumber", &cf.LineNumber, 3)
		case keyIs(key, "columnNumber"):
			return r.integer(c, "columnNumber", &cf.ColumnNumber, 3)
		}
		return r.sc.skip(r.s, c, 3)
	})
}

// children reads a node's children (c its first byte) into kids. As
// encoding/json does, a second list of them for the node is read into the
// first one's array, where a null child keeps what the first one put.
func (r *nodeReader) children(c byte, kids *[]int64) error {
	if c == 'n' {
		*kids = nil
		return r.sc.literal(r.s, "null")
	}
	if c != '[' {
		return r.notA(c, "children", "an array", 2)
	}
	r.sc.next()
	before := (*kids)[:cap(*kids)]
	r.kids = r.kids[:0]
	err := r.sc.list(r.s, "children", func(c byte) error {
		var kid int64
		if i := len(r.kids); i < len(before) {
			kid = before[i]
		}
		err := r.integer(c, "children", &kid, 3)
		r.kids = append(r.kids, kid)
		return err
	})
	switch {
	case len(r.kids) == 0:
		*kids = nil
	case len(r.kids) <= len(before):
		*kids = append(before[:0], r.kids...)
	default:
		*kids = r.arena.alloc(len(r.kids))
		copy(*kids, r.kids)
	}
	return err
}

// integer reads an int64 (c its first byte, depth deep) into v, what's;
// null leaves v as it is.
func (r *nodeReader) integer(c byte, what string, v *int64, depth int) error {
	if c == 'n' {
		return r.sc.literal(r.s, "null")
	}
	if c != '-' && (c < '0' || c > '9') {
		return r.notA(c, what, "an int64", depth)
	}
	at := r.sc.at
	if err := r.sc.readNumber(r.s); err != nil {
		return err
	}
	n, ok := parseInt(r.sc.tok)
	if !ok {
		return offsetError(r.s.name, at, "bad JSON: %s is the number %s, not an int64", what, r.sc.tok)
	}
	*v = n
	return nil
}

// string reads a string (c its first byte) into v, what's; null leaves v
// as it is.
func (r *nodeReader) string(c byte, what string, v *string) error {
	if c == 'n' {
		return r.sc.literal(r.s, "null")
	}
	if c != '"' {
		return r.notA(c, what, "a string", 3)
	}
	b, err := r.sc.str(r.s)
	if err != nil {
		return err
	}
	if held, ok := r.strings[string(b)]; ok {
		*v = held
		return nil
	}
	*v = string(b)
	r.strings[*v] = *v
	return nil
}

// notA refuses the value of what, at depth with first byte c, for not
// being want: after reading it, so that, as with encoding/json, an error
// of syntax in it comes first.
func (r *nodeReader) notA(c byte, what, want string, depth int) error {
	at := r.sc.at
	if err := r.sc.skip(r.s, c, depth); err != nil {
		return err
	}
	return offsetError(r.s.name, at, "bad JSON: %s is %s, not %s", what, describeValue(c), want)
}
