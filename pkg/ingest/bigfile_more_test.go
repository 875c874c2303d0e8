package ingest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The big files of the formats read a line or a chunk at a time: folded
// stacks, `perf script` text and JFR recordings.

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
