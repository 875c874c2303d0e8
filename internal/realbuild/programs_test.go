package realbuild

import (
	"fmt"
	"strings"
)

// The synthetic app: package example.com/app/work does rounds of work over
// a buffer, every part of it a loop of FNV-1a passes over the buffer (a
// unit), so that the tests know how much work each function does. The base
// release spends 8 units a round: parse 4 (tokenize 2 and validate 2, both
// in parse's own time), checksum 2 (in fold, which the compiler inlines),
// render 2 (in its callee encodeStd).
const (
	appModule = "example.com/app"
	workPkg   = appModule + "/work"
	bufSize   = 32 << 10
	rounds    = 1600
)

// units is the source of a loop of n units over b into h.
func units(n int) string {
	return fmt.Sprintf(`for j := 0; j < %d; j++ {
		for _, c := range b {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
`, n)
}

// kernel is the source of a function that does n units in its own time.
func kernel(name string, n int) string {
	return fmt.Sprintf("//go:noinline\nfunc %s(b []byte) uint64 {\n\th := uint64(%d)\n\t%s\treturn h\n}\n\n", name, len(name), units(n))
}

// variant says how a release of the work package differs from the base.
type variant struct {
	refactor bool   // parse's validation split out, a wrapper around the rounds
	validate int    // units of the validation (2 in the base)
	encoder  string // render's callee: encodeStd (2 units), encodeFast (1) or encodeSlow (4)
}

var (
	baseRelease     = variant{validate: 2, encoder: "encodeStd"}
	refactorRelease = variant{refactor: true, validate: 2, encoder: "encodeStd"}
	slowerRelease   = variant{refactor: true, validate: 4, encoder: "encodeStd"}
	cheaperRelease  = variant{validate: 2, encoder: "encodeFast"}
	dearerRelease   = variant{validate: 2, encoder: "encodeSlow"}
)

// encoderUnits is the work of each of render's callees.
var encoderUnits = map[string]int{"encodeStd": 2, "encodeFast": 1, "encodeSlow": 4}

// source is the work package of a release.
func (v variant) source() string {
	var b strings.Builder
	b.WriteString(`// Package work is the app's work: rounds over a buffer.
package work

// Run does rounds of the work over a fixed buffer and returns a hash of it.
func Run(rounds int) uint64 {
	b := make([]byte, ` + fmt.Sprint(bufSize) + `)
	for i := range b {
		b[i] = byte(i * 7)
	}
`)
	if v.refactor {
		b.WriteString("\treturn runRounds(b, rounds)\n}\n\n// runRounds is the loop of Run, split out.\n//\n//go:noinline\nfunc runRounds(b []byte, rounds int) uint64 {\n")
	}
	b.WriteString(`	var h uint64
	for r := 0; r < rounds; r++ {
		h += parse(b)
		h += checksum(b)
		h += render(b)
	}
	return h
}

// parse tokenizes b and validates it.
//
//go:noinline
func parse(b []byte) uint64 {
	h := uint64(1)
	`)
	b.WriteString(units(2))
	if v.refactor {
		b.WriteString("\treturn h + validate(b)\n}\n\n")
		b.WriteString(kernel("validate", v.validate))
	} else {
		b.WriteString("\t" + units(v.validate) + "\treturn h\n}\n\n")
	}
	b.WriteString(`// checksum folds b twice; fold is small enough to be inlined.
//
//go:noinline
func checksum(b []byte) uint64 {
	return fold(b, 3) + fold(b, 5)
}

func fold(b []byte, h uint64) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// render encodes b.
//
//go:noinline
func render(b []byte) uint64 {
	return ` + v.encoder + `(b) + 1
}

`)
	b.WriteString(kernel(v.encoder, encoderUnits[v.encoder]))
	return b.String()
}

// app is the files of the app's module at a release.
func (v variant) app() map[string]string {
	return map[string]string{
		"go.mod":       "module " + appModule + "\n\ngo 1.24\n",
		"work/work.go": v.source(),
		"main.go":      Main([]string{workPkg}, fmt.Sprintf("work.Run(%d)", rounds)),
	}
}
