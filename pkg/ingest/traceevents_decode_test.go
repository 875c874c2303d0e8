package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// traceEventJSON is an event as encoding/json decodes it, the reference
// decodeTraceEvent must match.
type traceEventJSON struct {
	Ph    string          `json:"ph"`
	Name  string          `json:"name"`
	Cat   string          `json:"cat"`
	Scope string          `json:"scope"`
	Pid   json.RawMessage `json:"pid"`
	Tid   json.RawMessage `json:"tid"`
	ID    json.RawMessage `json:"id"`
	ID2   struct {
		Local, Global json.RawMessage
	} `json:"id2"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args json.RawMessage `json:"args"`
}

// decodeOne reads text, one whole event, with decodeTraceEvent.
func decodeOne(text []byte) (traceEventText, error) {
	v := jsonWindow{b: text}
	var e traceEventText
	err := decodeTraceEvent(&v, &e)
	if err == nil {
		if _, end := v.space(); end != errShort {
			err = fmt.Errorf("data after the event at %d", v.i)
		}
	}
	return e, err
}

// checkAsJSON checks that decodeTraceEvent reads text as encoding/json
// does: both refuse it, or both give the same fields, bit for bit.
func checkAsJSON(t *testing.T, text []byte) {
	t.Helper()
	var want traceEventJSON
	wantErr := json.Unmarshal(text, &want)
	got, err := decodeOne(text)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", text, err, wantErr)
	}
	if err != nil {
		return
	}
	strs := [][2]string{{got.ph.String(), want.Ph}, {got.name.String(), want.Name}, {got.cat.String(), want.Cat}, {got.scope.String(), want.Scope},
		{string(got.pid), string(want.Pid)}, {string(got.tid), string(want.Tid)}, {string(got.id), string(want.ID)},
		{string(got.local), string(want.ID2.Local)}, {string(got.global), string(want.ID2.Global)}, {string(got.args), string(want.Args)}}
	for k, s := range strs {
		if s[0] != s[1] {
			t.Errorf("%q: field %d is %q, encoding/json's %q", text, k, s[0], s[1])
		}
	}
	if !got.ph.is(want.Ph) || !got.name.is(want.Name) {
		t.Errorf("%q: is disagrees with String", text)
	}
	if math.Float64bits(got.ts) != math.Float64bits(want.Ts) || math.Float64bits(got.dur) != math.Float64bits(want.Dur) {
		t.Errorf("%q: ts %v dur %v, encoding/json's %v and %v", text, got.ts, got.dur, want.Ts, want.Dur)
	}
}

func TestDecodeTraceEventAsEncodingJSON(t *testing.T) {
	deep := func(k int) string { return `{"args":` + strings.Repeat("[", k) + strings.Repeat("]", k) + "}" }
	for _, in := range []string{
		`{}`, `null`, ` { "ph" : "X" , "ts" : 1 , "dur" : 2 } `,
		// keys: the last given wins, matched but for case, escaped, or
		// folding as Unicode does ("ſ" is an "s")
		`{"ph":"X","PH":"B","Ph":"E"}`, `{"\u0070h":"X","n\u0061me":"a"}`, `{"t\u017f":5,"\u017fcope":"s"}`, `{"ts\u0000":5}`,
		`{"identifier":1,"names":"x","p":"y","":1}`,
		// strings as encoding/json decodes them
		`{"name":"a\"b\\c\/d\b\f\n\r\t"}`, `{"name":"\u00e9\ud83d\ude00 é"}`, `{"name":"\ud800x"}`, `{"name":"\ud800\u0041"}`,
		`{"name":"\udc00\ud800"}`, "{\"name\":\"a\xffb\xe2\x82\"}", "{\"cat\":\"\xed\xa0\x80\"}", `{"name":""}`,
		// null leaves a string, a number or id2 as it was
		`{"ph":"X","ph":null,"ts":1,"ts":null,"dur":null}`, `{"id2":{"local":"0x1"},"id2":null}`,
		// numbers: ts and dur as float64s, rounded as strconv rounds
		`{"ts":-0,"dur":0}`, `{"ts":123.456,"dur":1e3}`, `{"ts":1E+2,"dur":0.1e-2}`, `{"ts":12345678901234567890123,"dur":9007199254740993}`,
		`{"ts":-9223372036854775808,"dur":9223372036854775807}`, `{"ts":9223372036854775808}`, `{"ts":1e-400}`, `{"ts":4.9e-324}`,
		`{"ts":1e400}`, `{"ts":"5"}`, `{"ts":true}`, `{"ts":01}`, `{"ts":1.}`, `{"ts":-}`, `{"ts":.5}`, `{"ts":1e}`, `{"ts":+1}`, `{"ts":1.5x}`,
		// raw values of any kind, as written
		`{"pid": "1","tid":[1, 2 ]}`, `{"pid":{"a" : 1},"tid":null,"id":true}`, `{"id":"0x1\u0041"}`, `{"pid":-1.5e3}`,
		`{"id2":{"local":"0x1"},"id2":{"GLOBAL":"0x2"}}`, `{"id2":{"local":1,"x":[1,{"y":null}],"Local":2}}`, `{"id2":5}`, `{"id2":[]}`,
		`{"args":{"data":{"a":[1,2,{"b":"c"}]}},"args":{"name":"main"}}`,
		`{"tts":1,"bp":"e","s":"t","x":[],"y":{},"z":true,"w":false,"v":null,"u":"\u1234"}`,
		// values of the wrong type
		`{"ph":5}`, `{"name":{}}`, `{"cat":[]}`, `{"scope":true}`, `[]`, `"x"`, `5`, `true`,
		// bad JSON
		`{"ph" "X"}`, `{"ph":"X",}`, `{,}`, `{"ph":"X"`, "{\"ph\":\"\x01\"}", `{"ph":"\q"}`, `{"ph":"\u12g4"}`, `{ph:1}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":falsy}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":{"b":1,}}`, `{"a":{1:2}}`,
		`{"a":}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"ph":"X"}}`, `nul`, `{"a":"x`, `{"a":[`, `{"a":"\`, `{"a":"\u00`,
		deep(9999), deep(10000), `{"ph":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}",
	} {
		checkAsJSON(t, []byte(in))
	}
}

// randomTraceEvent writes an event as writers, hand-written files and
// mutations do: fields in any order, some twice, keys in any case or
// escaped, values of every kind (some of the wrong one), escapes and
// bytes past ASCII in strings, white space anywhere.
func randomTraceEvent(r *rand.Rand) []byte {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	space := func() string { return pick("", "", "", " ", "\n\t", "\r ") }
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(6) {
			b.WriteString(pick("a", "Z", "0", " ", "é", "日本", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00x", "\xff", "\xe2\x82", "thread_name"))
		}
		b.WriteByte('"')
		return b.String()
	}
	number := func() string {
		return pick("0", "-0", "1", "17", "-3", "123.456", "0.5", "1e3", "2.5E-2", "1E+2", "9007199254740993", "12345678901234567890123", "1e400")
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch k := r.IntN(8); {
		case k == 0 && depth < 3:
			var parts []string
			for range r.IntN(3) {
				parts = append(parts, space()+str()+space()+":"+space()+value(depth+1))
			}
			return "{" + strings.Join(parts, ",") + space() + "}"
		case k == 1 && depth < 3:
			var parts []string
			for range r.IntN(3) {
				parts = append(parts, space()+value(depth+1))
			}
			return "[" + strings.Join(parts, ",") + space() + "]"
		case k == 2:
			return pick("true", "false", "null")
		case k < 5:
			return number()
		}
		return str()
	}
	typed := func(good func() string) string { // mostly the type a field holds
		if r.IntN(12) == 0 {
			return value(1)
		}
		if r.IntN(10) == 0 {
			return "null"
		}
		return good()
	}
	key := func(k string) string {
		switch r.IntN(8) {
		case 0:
			return strings.ToUpper(k)
		case 1:
			return `\u00` + fmt.Sprintf("%x", k[0]) + k[1:]
		case 2:
			return strings.ReplaceAll(k, "s", "\u017f")
		}
		return k
	}
	fields := []func() string{
		func() string {
			return `"` + key("ph") + `":` + typed(func() string { return `"` + pick("X", "B", "E", "b", "e", "M", "P", "i", "C") + `"` })
		},
		func() string { return `"` + key("name") + `":` + typed(str) },
		func() string { return `"` + key("cat") + `":` + typed(str) },
		func() string { return `"` + key("scope") + `":` + typed(str) },
		func() string { return `"` + key(pick("pid", "tid", "id")) + `":` + value(1) },
		func() string { return `"` + key(pick("ts", "dur")) + `":` + typed(number) },
		func() string { return `"` + key("args") + `":` + value(1) },
		func() string {
			return `"` + key("id2") + `":` + typed(func() string {
				return "{" + space() + `"` + key(pick("local", "global", "other")) + `":` + value(2) + "}"
			})
		},
		func() string { return str() + ":" + value(1) },
	}
	var parts []string
	for range r.IntN(9) {
		parts = append(parts, space()+fields[r.IntN(len(fields))]()+space())
	}
	return []byte(space() + "{" + strings.Join(parts, ",") + "}" + space())
}

// TestDecodeTraceEventGenerated checks decodeTraceEvent against
// encoding/json on generated events, and on them cut short or with a
// byte changed.
func TestDecodeTraceEventGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 49))
	for range 20000 {
		text := randomTraceEvent(r)
		checkAsJSON(t, text)
		cut := text[:r.IntN(len(text))]
		checkAsJSON(t, cut)
		changed := bytes.Clone(text)
		const bytesOfJSON = `{}[]",:\ 0a-e.nu`
		changed[r.IntN(len(changed))] = bytesOfJSON[r.IntN(len(bytesOfJSON))]
		checkAsJSON(t, changed)
		if t.Failed() {
			return
		}
	}
}

// TestReadTraceEventsGenerated reads generated traces of a MiB or so
// (their events across the window's refills) in both forms, checking
// each event against encoding/json's.
func TestReadTraceEventsGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, form := range []string{"object", "array"} {
		var texts [][]byte
		var want []traceEventJSON
		for n := 0; n < 1<<20; {
			text := randomTraceEvent(r)
			if r.IntN(1000) == 0 { // now and then a big args blob
				text = fmt.Appendf(nil, `{"ph":"M","name":"thread_name","args":{"name":"t","blob":"%s"}}`, strings.Repeat("x", r.IntN(200<<10)))
			}
			var e traceEventJSON
			if json.Unmarshal(text, &e) != nil {
				continue
			}
			texts, want, n = append(texts, text), append(want, e), n+len(text)
		}
		file := "[" + string(bytes.Join(texts, []byte(" ,\n"))) + "]"
		if form == "object" {
			file = `{"displayTimeUnit":"ns","traceEvents":` + file + `,"metadata":{"a":[1,{"b":null}]}}`
		}
		t.Logf("%s: %d events, %d bytes", form, len(want), len(file))
		var in io.Reader = strings.NewReader(file)
		if form == "array" { // a read of the input gives a byte
			in = iotest.OneByteReader(in)
		}
		trace, err := readTraceEvents(in, "gen")
		if err != nil {
			t.Fatal(err)
		}
		if len(trace.list) != len(want) {
			t.Fatalf("%s: %d events, want %d", form, len(trace.list), len(want))
		}
		args := map[int]string{}
		for _, a := range trace.args {
			args[a.i] = string(a.text)
		}
		for i, e := range trace.list {
			w, x := trace.where(e), want[i]
			got := []string{trace.name(e), w.Ph, w.Cat, w.Scope, w.Pid, w.Tid, w.ID, w.ID2.Local, w.ID2.Global, fmt.Sprint(e.Ts, e.Dur), args[i]}
			wantArgs := ""
			if x.Ph == "M" || x.Ph == "P" {
				wantArgs = string(x.Args)
			}
			exp := []string{x.Name, x.Ph, x.Cat, x.Scope, string(x.Pid), string(x.Tid), string(x.ID), string(x.ID2.Local), string(x.ID2.Global), fmt.Sprint(x.Ts, x.Dur), wantArgs}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", exp) {
				t.Fatalf("%s: event %d is %q, want %q", form, i, got, exp)
			}
		}
	}
}

// FuzzDecodeTraceEvent checks decodeTraceEvent against encoding/json on
// any input.
func FuzzDecodeTraceEvent(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		f.Add(randomTraceEvent(r))
	}
	f.Add([]byte(`{"PH":"X","t\u017f":1.5,"id2":{"local":"0x1"},"id2":{"GLOBAL":2},"name":"\ud800\u0041","ph":null}`))
	f.Fuzz(func(t *testing.T, text []byte) { checkAsJSON(t, text) })
}
