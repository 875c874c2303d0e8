package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// scannedNodes is list, a node table, as readCPUProfile reads it.
func scannedNodes(list []byte) ([]cpuNode, error) {
	return readNodes(list, (*jsonStream).cpuNodes)
}

// decodedNodes is list as encoding/json decodes it, a node at a time into
// a cpuNode (decodeList): how the node table was read before the scanner.
func decodedNodes(list []byte) ([]cpuNode, error) {
	return readNodes(list, func(s *jsonStream, nodes *[]cpuNode) error {
		return decodeList(s, "nodes", "nodes", nodes)
	})
}

// readNodes reads the document list, named x, with read.
func readNodes(list []byte, read func(*jsonStream, *[]cpuNode) error) ([]cpuNode, error) {
	s, err := streamJSON(bytes.NewReader(list), "x")
	if err != nil {
		return nil, err
	}
	var nodes []cpuNode
	if err := read(s, &nodes); err != nil {
		return nil, err
	}
	return nodes, s.end()
}

// checkAsDecoded checks that the scanner reads list as encoding/json does:
// the same nodes (an empty list of children as none), or an error both.
// It returns the scanner's error.
func checkAsDecoded(t *testing.T, list []byte) error {
	t.Helper()
	got, err := scannedNodes(list)
	want, jsonErr := decodedNodes(list)
	if (err == nil) != (jsonErr == nil) {
		t.Fatalf("%q: scanned with error %v, decoded with error %v", list, err, jsonErr)
	}
	if e := (*Error)(nil); err != nil && (!errors.As(err, &e) || e.Offset < 0) {
		t.Fatalf("%q: error %v without its offset", list, err)
	}
	if err != nil {
		return err
	}
	for _, nodes := range [][]cpuNode{got, want} {
		for i := range nodes {
			if len(nodes[i].Children) == 0 {
				nodes[i].Children = nil
			}
		}
	}
	if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: scanned %+v, decoded %+v", list, got, want)
	}
	return nil
}

// Nodes read as encoding/json reads them: keys in any order and case, the
// last one winning, unknown ones skipped whatever they hold, nulls, string
// escapes and bad UTF-8, the extreme int64s.
func TestNodesReadAsEncodingJSON(t *testing.T) {
	for _, list := range nodeTables {
		t.Run(list, func(t *testing.T) {
			if err := checkAsDecoded(t, []byte(list)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// nodeTables are node tables whose reading takes care: TestNodesReadAsEncodingJSON's, and
// FuzzCPUNodes' seeds.
var nodeTables = []string{
	`[]`, `null`, `[null]`, ` [ { } , {"id" : 2 } ] `,
	`[{"id":1,"callFrame":{"functionName":"f","scriptId":"3","url":"file:///a.js","lineNumber":4,"columnNumber":-1},"hitCount":7,"children":[2,3],"positionTicks":[{"line":5,"ticks":2}]}]`,
	`[{"children":[2],"callFrame":{"columnNumber":2,"url":"u","functionName":"g"},"id":9}]`,
	`[{"ID":1,"CALLFRAME":{"FunctionName":"f","URL":"u","linenumber":3},"Children":[4],"PARENT":7}]`,
	`[{"id":1,"id":2,"callFrame":{"url":"a","lineNumber":3},"callFrame":{"functionName":"f"},"callFrame":null}]`,
	`[{"id":1,"id":null,"callFrame":{"url":"a","url":null,"functionName":null}}]`,
	`[{"parent":3,"parent":null},{"parent":null,"parent":4,"parent":5}]`,
	`[{"children":null},{"children":[]},{"children":[1,null,3]}]`,
	`[{"children":[1,2,3],"children":[9],"children":[null,null,null,null]}]`,
	`[{"children":[1,2,3,4,5],"children":[],"children":[null,null]}]`,
	`[{"id":-9223372036854775808,"callFrame":{"lineNumber":9223372036854775807,"columnNumber":-0}}]`,
	`[{"callFrame":{"functionName":"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r\u0000","url":"\ud800 \udc00 \ud83dx \ude00\ud83d"}}]`,
	`[{"callFrame":{"functionName":"\u0041\u00E9\uD83D\uDE00","url":"é😀"}}]`,
	"[{\"callFrame\":{\"functionName\":\"a\xffb\xc3(\xed\xa0\x80\",\"url\":\"\xe2\x82\\n\xf0\"}}]",
	`[{"\u0069d":5,"callFrame":{"function\u004eame":"f"}}]`,
	`[{"x":{"y":[1,{"z":[true,false,null,"s\"]"]},-1.5e+10,0.25E-3,1e9999]},"id":3,"w":[[],{}],"v":"}"}]`,
	`[{"hitCount":1.5,"positionTicks":"x","deoptReason":"","callFrame":{"scriptId":null,"codeType":"JS","lineNumber":2}}]`,
	`[{"id":1},null,{"id":2}]`,
	"[{\"id\":1,\r\n\t\"children\" :\t[ 2 ,3 ]\n}]",
}

// What the escapes and the bad UTF-8 of a name decode to.
func TestNodeNamesDecoded(t *testing.T) {
	list := "[{\"callFrame\":{\"functionName\":\"\\u00e9\\ud83d\\ude00\\n\\\\ \\ud800x\",\"url\":\"a\xffb\"}}]"
	nodes, err := scannedNodes([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	cf := nodes[0].CallFrame
	if cf.FunctionName != "é😀\n\\ \uFFFDx" || cf.URL != "a\uFFFDb" {
		t.Errorf("read %q and %q", cf.FunctionName, cf.URL)
	}
}

// A node that is not what encoding/json takes is refused where it is
// wrong, as encoding/json refuses it.
func TestNodesRefuseBadInput(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for list, want := range map[string]string{
		`[{"id":"1"}]`:                              `x: offset 7: bad JSON: id is a string, not an int64`,
		`[{"id":1.5}]`:                              `x: offset 7: bad JSON: id is the number 1.5, not an int64`,
		`[{"id":9223372036854775808}]`:              `x: offset 7: bad JSON: id is the number 9223372036854775808, not an int64`,
		`[{"id":true}]`:                             `x: offset 7: bad JSON: id is a boolean, not an int64`,
		`[{"children":[1,{}]}]`:                     `x: offset 16: bad JSON: children is an object, not an int64`,
		`[{"children":{}}]`:                         `x: offset 13: bad JSON: children is an object, not an array`,
		`[{"callFrame":[]}]`:                        `x: offset 14: bad JSON: callFrame is an array, not an object`,
		`[{"callFrame":{"url":7}}]`:                 `x: offset 21: bad JSON: url is a number, not a string`,
		`[{"callFrame":{"url":"a` + "\x01" + `"}}]`: `x: offset 23: bad JSON: invalid character '\x01' in string literal`,
		`[{"callFrame":{"url":"a\x"}}]`:             `x: offset 24: bad JSON: invalid character 'x' in string escape code`,
		`[{"callFrame":{"url":"\u12g4"}}]`:          `x: offset 26: bad JSON: invalid character 'g' in \u hexadecimal character escape`,
		`[1]`:                                       `x: offset 1: bad JSON: node is a number, not an object`,
		`[{"id":1,}]`:                               `x: offset 9: bad JSON: invalid character '}' looking for beginning of object key string`,
		`[{"id" 1}]`:                                `x: offset 7: bad JSON: invalid character '1' after object key`,
		`[{"id":1 "x":2}]`:                          `x: offset 9: bad JSON: invalid character '"' after object key:value pair`,
		`[{"id":1} {"id":2}]`:                       `x: offset 10: bad JSON: invalid character '{' after array element`,
		`[{"x":tru}]`:                               `x: offset 9: bad JSON: invalid character '}' in literal true (expecting 'e')`,
		`[{"id":-}]`:                                `x: offset 8: bad JSON: invalid character '}' in numeric literal`,
		`[{"x":01}]`:                                `x: offset 7: bad JSON: invalid character '1' after object key:value pair`,
		`[{"x":+1}]`:                                `x: offset 6: bad JSON: invalid character '+' looking for beginning of value`,
		`[{"x":` + deep + `}]`:                      `x: offset 10005: bad JSON: exceeded max depth`,
		`[{"id":1`:                                  `x: offset 8: bad JSON: unexpected end of JSON input`,
		`[{"callFrame":{"url":"ab`:                  `x: offset 24: bad JSON: unexpected end of JSON input`,
	} {
		err := checkAsDecoded(t, []byte(list))
		if err == nil || err.Error() != want {
			t.Errorf("%.40q: error %v, want %s", list, err, want)
		}
	}
}

// randomNodes writes a node table of random nodes: the fields a node may
// have, in any order and case, given twice, null or of the wrong type now
// and then, among unknown fields holding any JSON, in random white space;
// bad is true for a table with a byte of it changed.
func randomNodes(r *rand.Rand, bad bool) []byte {
	var b bytes.Buffer
	space := func() { b.WriteString([]string{"", "", "", " ", "\n\t", "\r\n "}[r.IntN(6)]) }
	key := func(k string) {
		if k != "" && r.IntN(8) == 0 {
			k = strings.ToUpper(k[:1]) + k[1:]
		}
		space()
		fmt.Fprintf(&b, "%q", k)
		space()
		b.WriteByte(':')
		space()
	}
	var value func(depth int)
	value = func(depth int) {
		switch n := r.IntN(10); {
		case n == 0 && depth < 4:
			b.WriteByte('{')
			for i := range r.IntN(3) {
				if i > 0 {
					b.WriteByte(',')
				}
				key(randomString(r))
				value(depth + 1)
			}
			b.WriteByte('}')
		case n == 1 && depth < 4:
			b.WriteByte('[')
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				space()
				value(depth + 1)
			}
			b.WriteByte(']')
		case n < 4:
			b.WriteString(`"` + randomString(r) + `"`)
		case n < 8:
			b.WriteString(randomNumber(r))
		default:
			b.WriteString([]string{"null", "true", "false"}[r.IntN(3)])
		}
	}
	integer := func() {
		if r.IntN(40) == 0 {
			value(2)
		} else {
			b.WriteString(randomNumber(r))
		}
	}
	str := func() {
		if r.IntN(40) == 0 {
			value(3)
		} else {
			b.WriteString(`"` + randomString(r) + `"`)
		}
	}
	members := func(fields map[string]func()) {
		b.WriteByte('{')
		names := []string{"x", "hitCount"}
		for k := range fields {
			names = append(names, k, k)
		}
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for i, k := range names[:r.IntN(len(names)+1)] {
			if i > 0 {
				b.WriteByte(',')
			}
			key(k)
			if f, ok := fields[k]; ok && r.IntN(40) > 0 {
				f()
			} else {
				value(2)
			}
			space()
		}
		b.WriteByte('}')
	}
	node := map[string]func(){
		"id": integer, "parent": integer,
		"children": func() {
			b.WriteByte('[')
			for i := range r.IntN(5) {
				if i > 0 {
					b.WriteByte(',')
				}
				integer()
			}
			b.WriteByte(']')
		},
		"callFrame": func() {
			members(map[string]func(){"functionName": str, "url": str, "lineNumber": integer, "columnNumber": integer})
		},
	}
	b.WriteByte('[')
	for i := range r.IntN(6) {
		if i > 0 {
			b.WriteByte(',')
		}
		space()
		members(node)
	}
	b.WriteByte(']')
	out := b.Bytes()
	if bad {
		const bytes = "{}[],:\"\\ 0-.e\x01\xffnu"
		out[r.IntN(len(out))] = bytes[r.IntN(len(bytes))]
	}
	return out
}

// randomString is a string's text between its quotes: plain, escaped,
// surrogates paired or not, bad UTF-8.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "fn", "é", "😀", `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\uDBFF\uDFFF`, "\xff", "\xed\xa0\x80", "\xe2\x82", `\u0000`}
	var s strings.Builder
	for range r.IntN(5) {
		s.WriteString(parts[r.IntN(len(parts))])
	}
	return s.String()
}

// randomNumber is an integer, small or at the edges of int64's range, or
// now and then one that is not an int64.
func randomNumber(r *rand.Rand) string {
	if r.IntN(20) == 0 {
		return []string{"9223372036854775808", "-9223372036854775809", "1.5", "2e3", "-0.0E-1", "123456789012345678901234567890"}[r.IntN(6)]
	}
	return []string{"0", "-0", "7", "-12", "1048576", "-9223372036854775808", "9223372036854775807"}[r.IntN(7)]
}

// Random node tables, good and bad, read as encoding/json reads them.
func TestRandomNodesReadAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 8))
	for i := range 20000 {
		checkAsDecoded(t, randomNodes(r, i%3 == 0))
	}
}

// Nodes are found by id alike whether the ids run about 1 to the node
// count, as V8's do (looked up in a slice), or anywhere (in a map); an id
// given twice is refused either way.
func TestNodeIDsAnywhere(t *testing.T) {
	doc := func(root, a, b int64) string {
		return fmt.Sprintf(`{"nodes":[{"id":%d,"callFrame":{"functionName":"(root)"},"children":[%d]},`+
			`{"id":%d,"callFrame":{"functionName":"a"},"children":[%d]},{"id":%d,"callFrame":{"functionName":"b"}}],`+
			`"samples":[%d,%d,%d],"timeDeltas":[1,1,1]}`, root, a, a, b, b, a, b, b)
	}
	for _, ids := range [][3]int64{{1, 2, 3}, {3, 1, 2}, {0, 6, 2}, {1, 2, 1000}, {-1, 0, 7}, {math.MinInt64, math.MaxInt64, 5}} {
		p, err := Parse(strings.NewReader(doc(ids[0], ids[1], ids[2])), "x", CPUProfile)
		if err != nil {
			t.Fatalf("ids %v: %v", ids, err)
		}
		var stacks []string
		for _, s := range p.Samples {
			stacks = append(stacks, strings.Join(p.Names(s.Stack), ";"))
		}
		if want := []string{"a", "a;b", "a;b"}; !reflect.DeepEqual(stacks, want) {
			t.Errorf("ids %v: stacks %q, want %q", ids, stacks, want)
		}
		_, err = Parse(strings.NewReader(doc(ids[0], ids[1], ids[1])), "x", CPUProfile)
		if want := fmt.Sprintf("x: node id %d given twice", ids[1]); err == nil || err.Error() != want {
			t.Errorf("ids %v: error %v, want %s", ids, err, want)
		}
	}
}
