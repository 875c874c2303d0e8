package ingest

import (
	"fmt"
	"slices"
	"testing"
)

// bigTree is the stack tree the big Gecko files share: stack j's prefix
// is j/10-1 (-1: a root), its frame j mod frames; the answer's stack is
// the last, 5 or 6 deep, with names from name.
func bigTree(stacks, frames int, name func(frame int) string, a *bigAnswer) {
	for q := stacks - 1; ; q = q/10 - 1 {
		a.stack = append(a.stack, name(q%frames))
		if q < 10 {
			break
		}
	}
	slices.Reverse(a.stack)
}

// writeBigGecko writes a raw Gecko profile of about size bytes to path,
// as Firefox writes one: a thread whose stack table (a quarter of the
// bytes) is a tree ten wide over 1,000 native functions, and whose
// samples (the rest, 1 each) pick its stacks.
func writeBigGecko(t testing.TB, path string, size int) bigAnswer {
	const frames = 1000
	stacks, samples := size/4/16, size*3/4/24
	w, done := createBig(t, path)
	fmt.Fprint(w, `{"meta":{"interval":1,"stackwalk":1,"processType":0,"version":24},"libs":[{"name":"libxul.so","breakpadId":"X"}],"threads":[{"name":"GeckoMain","processType":"default",`)
	fmt.Fprint(w, `"markers":{"schema":{"name":0,"startTime":1,"data":2},"data":[[0,1.5,{"type":"GCMajor"}]]},`)
	fmt.Fprint(w, `"samples":{"schema":{"stack":0,"time":1,"eventDelay":2},"data":[`)
	a := bigAnswer{total: int64(samples)}
	for k := range samples {
		s := k * 7919 % stacks
		if s == stacks-1 {
			a.value++
		}
		fmt.Fprintf(w, "%s[%d,%d.5,0]", map[bool]string{true: ",", false: ""}[k > 0], s, 1000+k)
	}
	fmt.Fprint(w, `]},"stackTable":{"schema":{"prefix":0,"frame":1,"category":2},"data":[`)
	for j := range stacks {
		prefix := "null"
		if j >= 10 {
			prefix = fmt.Sprint(j/10 - 1)
		}
		fmt.Fprintf(w, "%s[%s,%d,0]", map[bool]string{true: ",", false: ""}[j > 0], prefix, j%frames)
	}
	fmt.Fprint(w, `]},"frameTable":{"schema":{"location":0,"relevantForJS":1,"implementation":2,"optimizations":3,"line":4,"column":5,"category":6},"data":[`)
	for f := range frames {
		fmt.Fprintf(w, `%s[%d,false,null,null,null,null,0]`, map[bool]string{true: ",", false: ""}[f > 0], f)
	}
	fmt.Fprint(w, `]},"stringTable":[`)
	for f := range frames {
		fmt.Fprintf(w, `%s"fn%d (in libxul.so)"`, map[bool]string{true: ",", false: ""}[f > 0], f)
	}
	fmt.Fprint(w, `]}],"processes":[]}`)
	done()
	bigTree(stacks, frames, func(f int) string { return fmt.Sprintf("fn%d", f) }, &a)
	return a
}

// writeBigProcessed writes a processed Firefox profile (version 70) of
// about size bytes to path: shared tables whose stack table (a quarter
// of the bytes) is a tree ten wide over 1,000 functions of one library,
// and a thread whose samples (the rest, 1 each) pick its stacks.
func writeBigProcessed(t testing.TB, path string, size int) bigAnswer {
	const frames = 1000
	stacks, samples := size/4/12, size*3/4/7
	w, done := createBig(t, path)
	list := func(n int, elem func(i int) string) {
		w.WriteByte('[')
		for i := range n {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(elem(i))
		}
		w.WriteByte(']')
	}
	fmt.Fprint(w, `{"meta":{"preprocessedProfileVersion":70,"interval":1,"markerSchema":[{"name":"GC","display":["marker-chart"]}]},"libs":[],"shared":{"stringArray":`)
	list(frames+1, func(i int) string {
		if i == frames {
			return `"libxul.so"`
		}
		return fmt.Sprintf(`"fn%d"`, i)
	})
	fmt.Fprint(w, `,"sources":{"length":0,"filename":[]},"resourceTable":{"length":1,"name":[1000],"lib":[0]}`)
	fmt.Fprintf(w, `,"funcTable":{"length":%d,"name":`, frames)
	list(frames, func(i int) string { return fmt.Sprint(i) })
	fmt.Fprint(w, `,"isJS":`)
	list(frames, func(int) string { return "false" })
	for _, col := range []string{"resource", "source", "lineNumber"} {
		fmt.Fprintf(w, `,%q:`, col)
		list(frames, func(int) string {
			return map[string]string{"resource": "0", "source": "null", "lineNumber": "null"}[col]
		})
	}
	fmt.Fprintf(w, `},"frameTable":{"length":%d,"func":`, frames)
	list(frames, func(i int) string { return fmt.Sprint(i) })
	fmt.Fprintf(w, `},"stackTable":{"length":%d,"frame":`, stacks)
	list(stacks, func(j int) string { return fmt.Sprint(j % frames) })
	fmt.Fprint(w, `,"prefixOffset":`)
	list(stacks, func(j int) string {
		if j < 10 {
			return "0"
		}
		return fmt.Sprint(j - (j/10 - 1))
	})
	fmt.Fprintf(w, `}},"threads":[{"name":"GeckoMain","markers":{"length":1,"data":[{"type":"GC"}]},"samples":{"length":%d,"weightType":"samples","stack":`, samples)
	a := bigAnswer{total: int64(samples)}
	list(samples, func(k int) string {
		s := k * 7919 % stacks
		if s == stacks-1 {
			a.value++
		}
		return fmt.Sprint(s)
	})
	fmt.Fprint(w, `}}]}`)
	done()
	bigTree(stacks, frames, func(f int) string { return fmt.Sprintf("fn%d", f) }, &a)
	return a
}
