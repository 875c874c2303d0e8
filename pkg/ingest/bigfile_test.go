package ingest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/flamediff/flamediff/pkg/profile"
)

// bigAnswer is what a generated big file must read as: the sum of its
// values and the value of one of its stacks.
type bigAnswer struct {
	total int64
	stack []string
	value int64
}

// writeBigCPUProfile writes a V8 CPU profile of about size bytes to path,
// shaped as the (3M samples over 200k nodes in 78 MB): half its
// bytes nodes, a tree ten wide, half samples (1 each) with their time deltas.
func writeBigCPUProfile(t testing.TB, path string, size int) bigAnswer {
	nodes, samples := size/2/175, size/2/11
	w, done := createBig(t, path)
	fmt.Fprint(w, `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[`)
	children := func(q int) { // the ids of node q's children (q -1: the root's)
		for c := 10*q + 10; c < min(10*q+20, nodes); c++ {
			if c > 10*q+10 {
				w.WriteByte(',')
			}
			fmt.Fprint(w, c+2)
		}
	}
	children(-1)
	fmt.Fprint(w, "]}")
	for q := range nodes {
		fmt.Fprintf(w, `,{"id":%d,"callFrame":{"functionName":"fn%d","scriptId":"%d","url":"file:///app/src/mod%d.js","lineNumber":%d,"columnNumber":4},"hitCount":1,"children":[`,
			q+2, q, q%500, q%500, q%1000)
		children(q)
		fmt.Fprint(w, "]}")
	}
	known := nodes - 1 // a leaf, 4 or 5 deep
	a := bigAnswer{total: int64(samples)}
	for q := known; ; q = q/10 - 1 {
		a.stack = append(a.stack, fmt.Sprintf("fn%d", q))
		if q < 10 {
			break
		}
	}
	slices.Reverse(a.stack)
	fmt.Fprint(w, `],"startTime":1000000,"endTime":9000000000,"samples":[`)
	for k := range samples {
		q := k * 7919 % nodes
		if q == known {
			a.value++
		}
		fmt.Fprintf(w, "%s%d", map[bool]string{true: ",", false: ""}[k > 0], q+2)
	}
	fmt.Fprint(w, `],"timeDeltas":[`)
	for k := range samples {
		fmt.Fprintf(w, "%s%d", map[bool]string{true: ",", false: ""}[k > 0], 100+k%900)
	}
	fmt.Fprint(w, "]}")
	done()
	return a
}

// writeBigTrace writes a Chrome trace of about size bytes to path, shaped
// as the (X events on 4 threads, about 105 bytes each): on each
// thread groups of an outer event of 100 µs holding an inner of 40 holding
// a leaf of 10, the outer named by the group's number mod 50.
func writeBigTrace(t testing.TB, path string, size int) bigAnswer {
	groups := size / 3 / 110 / 4
	w, done := createBig(t, path)
	fmt.Fprint(w, `{"traceEvents":[`)
	for tid := 1; tid <= 4; tid++ {
		fmt.Fprintf(w, `{"pid":1,"tid":%d,"ts":0,"ph":"M","cat":"__metadata","name":"thread_name","args":{"name":"T%d"}},`, tid, tid)
	}
	a := bigAnswer{stack: []string{"T1: outer3", "T1: inner3", "T1: leaf"}}
	event := func(tid, ts, dur int, name string) {
		fmt.Fprintf(w, `{"pid":1,"tid":%d,"ts":%d,"ph":"X","cat":"devtools.timeline","name":"%s","dur":%d,"args":{"data":{"frame":"F1"}}}`, tid, ts, name, dur)
	}
	for g := range groups {
		for tid := 1; tid <= 4; tid++ {
			if g > 0 || tid > 1 {
				w.WriteByte(',')
			}
			ts := 1000 + g*100
			event(tid, ts, 100, fmt.Sprintf("outer%d", g%50))
			w.WriteByte(',')
			event(tid, ts+10, 40, fmt.Sprintf("inner%d", g%50))
			w.WriteByte(',')
			event(tid, ts+20, 10, "leaf")
			a.total += 100 * 1000
			if tid == 1 && g%50 == 3 {
				a.value += 10 * 1000
			}
		}
	}
	fmt.Fprint(w, `],"metadata":{"source":"generated","notes":[1,2,{"a":null}]}}`)
	done()
	return a
}

// writeBigSpeedscope writes a speedscope file of about size bytes to
// path, as py-spy writes one: a sampled profile in counts over 1,000
// frames, its samples drawn from 1,000 stacks 3 to 10 deep, weighing 1 to 3.
func writeBigSpeedscope(t testing.TB, path string, size int) bigAnswer {
	const frames, stacks = 1000, 1000
	stack := func(j int) []int {
		ids := make([]int, 3+j%8)
		for d := range ids {
			ids[d] = (j*31 + d*97) % frames
		}
		return ids
	}
	w, done := createBig(t, path)
	fmt.Fprint(w, `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[`)
	for f := range frames {
		fmt.Fprintf(w, `%s{"name":"f%d","file":"/app/mod%d.py","line":%d}`, map[bool]string{true: ",", false: ""}[f > 0], f, f%50, 1+f%300)
	}
	samples := size / 34
	a := bigAnswer{}
	for _, id := range stack(0) {
		a.stack = append(a.stack, fmt.Sprintf("f%d", id))
	}
	fmt.Fprint(w, `]},"profiles":[{"type":"sampled","name":"MainThread pid 1","unit":"none","startValue":0,"endValue":1,"samples":[`)
	for k := range samples {
		ids := stack(k * 7 % stacks)
		fmt.Fprintf(w, "%s[%s]", map[bool]string{true: ",", false: ""}[k > 0], strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ids)), ","), "[]"))
	}
	fmt.Fprint(w, `],"weights":[`)
	for k := range samples {
		weight := int64(1 + k%3)
		a.total += weight
		if k*7%stacks == 0 {
			a.value += weight
		}
		fmt.Fprintf(w, "%s%d", map[bool]string{true: ",", false: ""}[k > 0], weight)
	}
	fmt.Fprint(w, `]}],"name":"generated","activeProfileIndex":0,"exporter":"py-spy@0.3.14"}`)
	done()
	return a
}

// createBig creates path for a big file, returning a buffered writer and
// what flushes and closes it.
func createBig(t testing.TB, path string) (*bufio.Writer, func()) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return w, func() {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// parseBig parses the file at path, checks it gives a, and returns how
// many bytes of heap parsing it held at most above what was held before
// (the heap sampled every millisecond), the file's size and the result's
// (resultBytes).
func parseBig(t testing.TB, path string, f Format, a bigAnswer) (peak, size, result int64) {
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// runtime/metrics' heap objects are MemStats.HeapAlloc, read without
	// stopping the world.
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(heap)
	base := heap[0].Value.Uint64()
	var high uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				metrics.Read(heap)
				high = max(high, heap[0].Value.Uint64())
			}
		}
	})
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	p, err := Parse(file, filepath.Base(path), f)
	close(stop)
	wg.Wait()
	if b, ok := t.(*testing.B); ok { // a benchmark times the read, not the check
		b.StopTimer()
		defer b.StartTimer()
	}
	if err != nil {
		t.Fatal(err)
	}
	var value int64
	want := strings.Join(a.stack, ";")
	for _, s := range p.Samples {
		if strings.Join(p.Names(s.Stack), ";") == want {
			value += s.Value
		}
	}
	if p.Total() != a.total || value != a.value {
		t.Fatalf("%s: total %d, %s %d; want %d and %d", path, p.Total(), want, value, a.total, a.value)
	}
	return int64(high - min(high, base)), info.Size(), resultBytes(p)
}

// bigFormats are the streamed formats' writers of big files (the
// line and chunk formats' in bigfile_more_test.go).
var bigFormats = []struct {
	format Format
	write  func(testing.TB, string, int) bigAnswer
}{
	{CPUProfile, writeBigCPUProfile},
	{TraceEvent, writeBigTrace},
	{Speedscope, writeBigSpeedscope},
	{Gecko, writeBigGecko},
	{Processed, writeBigProcessed},
	{Folded, writeBigFolded},
	{Perf, writeBigPerf},
	{JFR, writeBigJFR},
	{Pprof, writeBigPprof},
}

// resultBytes is what p holds in memory: its samples, their stacks (a
// stack shared by samples once) and its frames with their names.
func resultBytes(p *profile.Profile) int64 {
	n := int64(len(p.Samples)) * int64(unsafe.Sizeof(profile.Sample{}))
	stacks := map[*uint32]bool{}
	for _, s := range p.Samples {
		if len(s.Stack) > 0 && !stacks[&s.Stack[0]] {
			stacks[&s.Stack[0]] = true
			n += int64(len(s.Stack)) * 4
		}
	}
	for _, f := range p.Frames {
		n += int64(unsafe.Sizeof(f)) + int64(len(f.Name)+len(f.Module)+len(f.File))
	}
	return n
}

// heapBound is what reading a file of size bytes into a result of result
// bytes may hold at most: twice the file, twice the result (the garbage
// collector lets the heap grow to twice what is live before it collects)
// and a fixed bound for what grows with neither.
func heapBound(size, result int64) int64 { return 2*size + 2*result + 64<<20 }

// TestBigFilesInBoundedMemory reads a 32 MB file of each streamed format
// and checks its answer and that the heap it held stays within heapBound
// (a whole read and json.Unmarshal held 10x the file, 1.2-1.9x heapBound).
func TestBigFilesInBoundedMemory(t *testing.T) {
	for _, tc := range bigFormats {
		t.Run(string(tc.format), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big")
			a := tc.write(t, path, 32<<20)
			peak, size, result := parseBig(t, path, tc.format, a)
			bound := heapBound(size, result)
			t.Logf("%d MB file, %d MB result: peak heap %d MB (%.1fx the file), bound %d MB", size>>20, result>>20, peak>>20, float64(peak)/float64(size), bound>>20)
			if peak > bound {
				t.Errorf("peak heap %d MB reading a %d MB file: over %d MB", peak>>20, size>>20, bound>>20)
			}
		})
	}
}

// BenchmarkBigFiles reads files of each streamed format at 10 MB and
// 100 MB (and 1 GB with FLAMEDIFF_BENCH_BIG=1), reporting the peak heap
// of a read and its ratio to the file's size.
func BenchmarkBigFiles(b *testing.B) {
	sizes := []int{10 << 20, 100 << 20}
	if os.Getenv("FLAMEDIFF_BENCH_BIG") == "1" {
		sizes = append(sizes, 1<<30)
	}
	for _, tc := range bigFormats {
		for _, size := range sizes {
			b.Run(fmt.Sprintf("%s/%dMB", tc.format, size>>20), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "big")
				a := tc.write(b, path, size)
				var peak, n int64
				for b.Loop() {
					p, s, _ := parseBig(b, path, tc.format, a)
					peak, n = max(peak, p), s
				}
				b.SetBytes(n)
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(peak)/float64(n), "heap/file")
			})
		}
	}
}
