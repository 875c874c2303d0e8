package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/toolprofiles"
	"github.com/flamediff/flamediff/pkg/profile"
)

// threadTotals sums a profile's values by its stacks' root frames, which
// must all be thread frames.
func threadTotals(t *testing.T, p *profile.Profile) map[string]int64 {
	t.Helper()
	totals := map[string]int64{}
	for _, s := range p.Samples {
		f := p.Frames[s.Stack[0]]
		if f.Module != profile.ThreadModule {
			t.Fatalf("root frame %+v is no thread", f)
		}
		totals[f.Name] += s.Value
	}
	return totals
}

// With threads, the samples of each thread sit under its frame, as the
// format's own account of its threads gives them: the JDK's `jfr print`
// for a JFR recording, the threads' sample tables of a Gecko profile (raw
// or processed), a
// speedscope file's profiles; without, no thread frame. A format that has
// no threads refuses to be read per thread.
func TestThreads(t *testing.T) {
	file := func(name string) string { return filepath.Join("..", "..", "testdata", "formats", name) }
	read := func(name string, o Options) *profile.Profile {
		t.Helper()
		data, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if name == "py-spy.speedscope.json" { // a thread a profile, as dotnet-trace names them
			text = strings.Replace(strings.Replace(text, `"name":"py-spy"`, `"name":"MainThread"`, 1), `"name":"py-spy"`, `"name":"worker"`, 1)
		}
		p, err := o.Parse(strings.NewReader(text), name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	jfr, err := toolprofiles.JFRThreads(file("app.jfr"))
	if err != nil {
		t.Fatal(err)
	}
	var gecko struct {
		Threads []struct {
			Name    string
			Samples struct{ Data [][]any }
		}
	}
	data, err := os.ReadFile(file("prog.gecko.json"))
	if err == nil {
		err = json.Unmarshal(data, &gecko)
	}
	if err != nil {
		t.Fatal(err)
	}
	geckoThreads := map[string]int64{}
	for _, th := range gecko.Threads {
		geckoThreads[th.Name] += int64(len(th.Samples.Data))
	}
	var processed struct {
		Threads []struct {
			Name    string
			Samples struct{ Stack []*int64 } // weightType samples, no weight column: 1 a sampled stack
		}
	}
	data, err = os.ReadFile(file("prog.processed.json"))
	if err == nil {
		err = json.Unmarshal(data, &processed)
	}
	if err != nil {
		t.Fatal(err)
	}
	processedThreads := map[string]int64{}
	for _, th := range processed.Threads {
		for _, stack := range th.Samples.Stack {
			if stack != nil {
				processedThreads[th.Name]++
			}
		}
	}
	for name, want := range map[string]map[string]int64{
		"app.jfr":                jfr,
		"prog.gecko.json":        geckoThreads,
		"prog.processed.json":    processedThreads,
		"py-spy.speedscope.json": {"MainThread": 34, "worker": 11},
	} {
		p := read(name, Options{Threads: true})
		got := threadTotals(t, p)
		if len(got) != len(want) {
			t.Errorf("%s: threads %v, want %v", name, got, want)
		}
		for th, v := range want {
			if got[th] != v {
				t.Errorf("%s: thread %s: %d, want %d", name, th, got[th], v)
			}
		}
		plain := read(name, Options{})
		if plain.Total() != p.Total() {
			t.Errorf("%s: total %d per thread, %d without", name, p.Total(), plain.Total())
		}
		for _, f := range plain.Frames {
			if f.Module == profile.ThreadModule {
				t.Errorf("%s: thread frame %q without threads", name, f.Name)
			}
		}
	}
	for _, name := range []string{"app.cpuprofile", "prog.callgrind"} {
		data, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Options{Threads: true}).Parse(strings.NewReader(string(data)), name); err == nil || !strings.Contains(err.Error(), "carries no threads") {
			t.Errorf("%s per thread: %v", name, err)
		}
	}
}
