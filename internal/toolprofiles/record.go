package toolprofiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Recording is the runs a real profiler wrote of a base build and of a
// head build with slow() made slower (its own loop 4x longer, 8x in
// Firefox's).
type Recording struct {
	Format     string // the format's name in Flamediff's table
	SampleType string // the sample type to read, "" for the format's default
	Base, Head string // directories of one file a run
	First      string // the first run's file name, in both
	Slow       string // slow()'s frame name
	SlowAt     string // slow()'s file base name and first line with samples, "prog.c:5"
}

// Record records runs runs a build with callgrind, node --cpu-prof, cProfile, JFR,
// Chromium's tracing (its V8 CPU profile events) and Firefox's profiler
// into dir, three tools at a time (the JVM and Chromium record all their
// runs in one process; callgrind, node and Python take turns), then Firefox alone
// (it starts once a run).
func Record(dir string, runs int) ([]Recording, error) {
	mk := func(parts ...string) (string, error) {
		d := filepath.Join(append([]string{dir}, parts...)...)
		return d, os.MkdirAll(d, 0o750)
	}
	var recs []Recording
	for _, r := range []Recording{
		{Format: "callgrind", First: "run0.callgrind", Slow: "slow", SlowAt: fmt.Sprintf("prog.c:%d", SlowLineC)},
		{Format: "cpuprofile", First: "run0.cpuprofile", Slow: "slow", SlowAt: fmt.Sprintf("app.js:%d", SlowLineJS)},
		{Format: "cprofile", First: "run0.prof", Slow: "slow", SlowAt: fmt.Sprintf("app.py:%d", SlowLinePy)},
		// slow's first line with samples is its call of leaf.
		{Format: "jfr", First: "run0.jfr", Slow: "App.slow", SlowAt: fmt.Sprintf("App:%d", SlowLinesJava[0]+1)},
		{Format: "trace-events", SampleType: "samples", First: "run0.json", Slow: "slow", SlowAt: fmt.Sprintf("page.html:%d", SlowLineJS)},
		{Format: "gecko", First: "run0.json", Slow: "slow", SlowAt: fmt.Sprintf("page.html:%d", SlowLineJS)},
	} {
		var err error
		if r.Base, err = mk(r.Format, "base"); err == nil {
			r.Head, err = mk(r.Format, "head")
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	cDir, err := mk("c")
	if err != nil {
		return nil, err
	}
	bin, err := BuildC(cDir)
	if err != nil {
		return nil, err
	}
	classes, err := mk("java")
	if err == nil {
		err = BuildJava(classes)
	}
	if err != nil {
		return nil, err
	}
	core, err := PlaywrightCore()
	if err != nil {
		return nil, err
	}
	// Firefox's slow() grows 8x: its runs sample every process's startup
	// too (thousands of frames), where a 4x change in one is too small to
	// stand out among them with five runs a side.
	slow := map[string][5]int{"base": {40000, 2e6, 1e6, 2e6, 100000}, "head": {160000, 8e6, 4e6, 16e6, 400000}}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Go(func() {
		for _, side := range []string{"base", "head"} {
			if errs[2] = ChromeTraces(core, filepath.Join(dir, "trace-events", side), "run", repeated(slow[side][1], runs)...); errs[2] != nil {
				return
			}
		}
	})
	wg.Go(func() {
		for _, side := range []string{"base", "head"} {
			if errs[0] = JFRRuns(classes, filepath.Join(dir, "jfr", side), "run", repeated(slow[side][2], runs)...); errs[0] != nil {
				return
			}
		}
	})
	wg.Go(func() {
		for i := range runs {
			for _, side := range []string{"base", "head"} {
				name := fmt.Sprintf("run%d", i)
				_, err := Callgrind(filepath.Join(dir, "callgrind", side), bin, name+".callgrind", slow[side][0])
				if err == nil {
					_, err = CPUProfile(filepath.Join(dir, "cpuprofile", side), name+".cpuprofile", slow[side][1])
				}
				if err == nil {
					_, err = CProfile(filepath.Join(dir, "cprofile", side), name+".prof", slow[side][4])
				}
				if errs[1] = err; err != nil {
					return
				}
			}
		}
	})
	wg.Wait()
	// Firefox records alone: its runs sample every process's start-up,
	// thousands of nodes, and slow() stands out among them only when the
	// runs' noise is low.
	for _, side := range []string{"base", "head"} {
		if errs[3] = FirefoxRuns(filepath.Join(dir, "firefox"), filepath.Join(dir, "gecko", side), "run", repeated(slow[side][3], runs)...); errs[3] != nil {
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// node's and Python's programs lie beside their profiles: only
	// profiles are runs.
	for _, side := range []string{"base", "head"} {
		if err := os.Remove(filepath.Join(dir, "cpuprofile", side, "app.js")); err != nil {
			return nil, err
		}
		if err := os.Remove(filepath.Join(dir, "cprofile", side, "app.py")); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// repeated is runs times n.
func repeated(n, runs int) []int {
	ns := make([]int, runs)
	for i := range ns {
		ns[i] = n
	}
	return ns
}
