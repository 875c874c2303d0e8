package ingest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// The big files of the formats read a line or a chunk at a time: folded
// stacks, `perf script` text and JFR recordings; and pprof's protobuf,
// read as a stream.

// bigTextStack is stack j of 1,000 distinct stacks 4 to 11 deep that
// the text writers cycle through.
func bigTextStack(j int) []string {
	s := []string{"main"}
	for d := 1; d < 4+j%8; d++ {
		s = append(s, fmt.Sprintf("pkg%d.fn%d", (j+d)%40, (j*7+d*13)%1000))
	}
	return s
}

// writeBigFolded writes folded stacks of about size bytes to path: line k
// is stack k mod 1,000 with the count 1 + k mod 5.
func writeBigFolded(t testing.TB, path string, size int) bigAnswer {
	w, done := createBig(t, path)
	a := bigAnswer{stack: bigTextStack(3)}
	line := strings.Join(a.stack, ";")
	for k, n := 0, 0; n < size; k++ {
		j, count := k%1000, 1+k%5
		s := strings.Join(bigTextStack(j), ";")
		m, _ := fmt.Fprintf(w, "%s %d\n", s, count)
		n += m
		a.total += int64(count)
		if s == line {
			a.value += int64(count)
		}
	}
	done()
	return a
}

// writeBigPerf writes `perf script` output of about size bytes to path:
// sample k is stack k mod 1,000 of the process svc, leaf first as perf
// prints it, its period 1 + k mod 5 (the value stackcollapse-perf.pl
// sums), the process name the root.
func writeBigPerf(t testing.TB, path string, size int) bigAnswer {
	w, done := createBig(t, path)
	a := bigAnswer{stack: append([]string{"svc"}, bigTextStack(3)...)}
	for k, n := 0, 0; n < size; k++ {
		j, period := k%1000, 1+k%5
		m, _ := fmt.Fprintf(w, "svc 4242/%d [00%d] %d.%06d: %d cpu-clock:u: \n", 4242+k%8, k%4, 1000+k/1000, k%1000*1000, period)
		n += m
		s := bigTextStack(j)
		for d := len(s) - 1; d >= 0; d-- {
			m, _ = fmt.Fprintf(w, "\t%16x %s+0x%x (/usr/bin/svc)\n", 0x400000+d*16, s[d], d)
			n += m
		}
		w.WriteByte('\n')
		a.total += int64(period)
		if j == 3 {
			a.value += int64(period)
		}
	}
	done()
	return a
}

// writeBigJFR writes a JFR recording of about size bytes to path: the
// JDK's recording testdata/formats/app.jfr, its chunks repeated (a
// recording is its chunks one after another). Its answer is what the
// JDK's own `jfr print --events jdk.ExecutionSample` reads in the
// recording (57 samples, 32 of them in App.main;App.work;App.slow),
// times the copies.
func writeBigJFR(t testing.TB, path string, size int) bigAnswer {
	rec, err := os.ReadFile("../../testdata/formats/app.jfr")
	if err != nil {
		t.Fatal(err)
	}
	w, done := createBig(t, path)
	copies := max(1, size/len(rec))
	for range copies {
		w.Write(rec)
	}
	done()
	return bigAnswer{total: int64(57 * copies), stack: []string{"App.main", "App.work", "App.slow"}, value: int64(32 * copies)}
}

// writeBigPprof writes a pprof protobuf of about size bytes to path, as
// Go's writer orders it (samples, mappings, locations, functions, then
// the strings): sample k is stack k*7919 mod 1,000 of 1,000 functions,
// weighing 1 + k mod 5 nanoseconds of cpu (and 1 sample), with a label
// as profilers that keep a sample a moment write it.
func writeBigPprof(t testing.TB, path string, size int) bigAnswer {
	w, done := createBig(t, path)
	field := func(num protowire.Number, body []byte) {
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		w.Write(protowire.AppendBytes(b, body))
	}
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}
	// The strings: "", samples, count, cpu, nanoseconds, tid, then fn0..fn999.
	const fnString = 6
	field(1, varint(varint(nil, 1, 1), 2, 2))
	field(1, varint(varint(nil, 1, 3), 2, 4))
	stack := func(j int) []uint64 { // location ids (= function ids + 1), leaf first
		ids := []uint64{1}
		for d := 1; d < 4+j%8; d++ {
			ids = append(ids, uint64(2+(j*7+d*13)%999))
		}
		slices.Reverse(ids)
		return ids
	}
	a := bigAnswer{}
	for _, id := range slices.Backward(stack(3)) {
		a.stack = append(a.stack, fmt.Sprintf("fn%d", id-1))
	}
	var packed, sample []byte
	for k, n := 0, 0; n < size; k++ {
		j, v := k*7919%1000, 1+k%5
		packed = packed[:0]
		for _, id := range stack(j) {
			packed = protowire.AppendVarint(packed, id)
		}
		sample = protowire.AppendBytes(protowire.AppendTag(sample[:0], 1, protowire.BytesType), packed)
		sample = protowire.AppendBytes(protowire.AppendTag(sample, 2, protowire.BytesType), protowire.AppendVarint([]byte{1}, uint64(v)))
		sample = protowire.AppendBytes(protowire.AppendTag(sample, 3, protowire.BytesType), varint(varint(nil, 1, 5), 3, uint64(k%64)))
		field(2, sample)
		n += len(sample) + 3
		a.total += int64(v)
		if j == 3 {
			a.value += int64(v)
		}
	}
	field(3, varint(varint(varint(nil, 1, 1), 2, 0x400000), 3, 0x800000))
	for f := range 1000 {
		line := varint(varint(nil, 1, uint64(f+1)), 2, uint64(10+f))
		field(4, protowire.AppendBytes(protowire.AppendTag(varint(varint(varint(nil, 1, uint64(f+1)), 2, 1), 3, uint64(0x400000+16*f)), 4, protowire.BytesType), line))
	}
	for f := range 1000 {
		field(5, varint(varint(varint(nil, 1, uint64(f+1)), 2, uint64(fnString+f)), 5, uint64(10+f)))
	}
	for _, s := range []string{"", "samples", "count", "cpu", "nanoseconds", "tid"} {
		field(6, []byte(s))
	}
	for f := range 1000 {
		field(6, fmt.Appendf(nil, "fn%d", f))
	}
	done()
	return a
}
