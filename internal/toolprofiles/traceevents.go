package toolprofiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// NodeTrace runs NodeApp (written to dir/app.js) with Node's trace events
// (V8's and Node's categories: compiles, garbage collections, sync file
// system calls) and returns the trace, dir/name.
func NodeTrace(dir, name string, slowN int) (string, error) {
	app := filepath.Join(dir, "app.js")
	if err := os.WriteFile(app, []byte(NodeApp), 0o600); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	return out, run(dir, "node", "--trace-event-categories", "v8,node,node.fs.sync", "--trace-event-file-pattern", out, app, strconv.Itoa(slowN))
}

// PageApp is NodeApp's program as a web page, its slow() argument the
// page's fragment; SlowLineJS is slow()'s line in it too.
const PageApp = `<script>function leaf(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) } return s }
function fast() { return leaf(2e6) }
function slow(n) { let s = leaf(2e6); for (let i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25 } return s }
function work(n) { let t = 0; for (let k = 0; k < 20; k++) { t += fast() + slow(n) } return t }
</script>
`

// chromeRecorder records, for each argument, a trace of page.html's
// work(n) in Debian's Chromium with playwright-core, V8's CPU profiler on
// as DevTools' Performance panel has it (CDP Tracing.start).
const chromeRecorder = `const [core, chromiumPath, dir, name, ...ns] = process.argv.slice(2);
const { chromium } = require(core);
(async () => {
  // V8 inlines nothing, so slow() is a frame of its own in every run (see PageCPUProfiles).
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--js-flags=--no-turbo-inlining --no-maglev-inlining'],
  });
  const page = await browser.newPage();
  for (let i = 0; i < ns.length; i++) {
    // The page loaded afresh a run: each run's code is compiled and
    // inlined anew, as in a run of its own.
    await page.goto('about:blank');
    await page.goto('file://' + dir + '/page.html');
    await browser.startTracing(page, { path: dir + '/' + name + i + '.json', categories: ['devtools.timeline', 'v8.execute', 'disabled-by-default-v8.cpu_profiler'] });
    await page.evaluate(n => work(n), Number(ns[i]));
    await browser.stopTracing();
  }
  await browser.close();
})().catch(e => { console.error(e); process.exit(1); });
`

// ChromeTraces records a trace a run of PageApp in one headless Chromium,
// dir/NAME0.json, NAME1.json, ... for slowNs; playwrightCore is the
// playwright-core package's directory.
func ChromeTraces(playwrightCore, dir, name string, slowNs ...int) error {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return err
	}
	for file, text := range map[string]string{"page.html": PageApp, "record.js": chromeRecorder} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600); err != nil {
			return err
		}
	}
	args := []string{filepath.Join(dir, "record.js"), playwrightCore, chromium, dir, name}
	for _, n := range slowNs {
		args = append(args, strconv.Itoa(n))
	}
	err = run(dir, "node", args...)
	for _, file := range []string{"page.html", "record.js"} {
		err = errors.Join(err, os.Remove(filepath.Join(dir, file)))
	}
	return err
}

// traceEvent is what the references read of a trace event.
type traceEvent struct {
	Ph, Name, Cat, Scope string
	Pid, Tid             json.RawMessage
	ID                   json.RawMessage
	ID2                  struct{ Local, Global json.RawMessage }
	Ts, Dur              float64
	Args                 struct {
		Name string
		Data struct {
			CPUProfile struct {
				Nodes []struct {
					ID        int64
					CallFrame struct{ FunctionName, URL string }
				}
				Samples []int64
			}
		}
	}
}

func readTrace(file string) ([]traceEvent, error) {
	b, err := os.ReadFile(file) // #nosec G304 -- the tests' own recording
	if err != nil {
		return nil, err
	}
	var doc struct{ TraceEvents []traceEvent }
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.TraceEvents) == 0 {
		return nil, fmt.Errorf("%s: %v (%d events)", file, err, len(doc.TraceEvents))
	}
	return doc.TraceEvents, nil
}

// TraceSelfTimes sums a trace's duration events' self time in
// nanoseconds, keyed "thread: name" (the thread's name, else its
// process's) or "category: name" for nestable async events (b/e, a track
// per category, scope and id), by sweeping each time line: every stretch
// between two events' boundaries goes to the innermost event open over it
// (the last to start, the shortest of those). Events are taken in time
// order; a begin never ended ends with the trace's last event, an end
// with no begin is left out.
func TraceSelfTimes(file string) (map[string]int64, error) {
	events, err := readTrace(file)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Ts < events[j].Ts })
	type thread struct{ pid, tid string }
	type span struct {
		name       string
		start, end int64
	}
	names, processes := map[thread]string{}, map[string]string{}
	spans := map[thread][]span{}
	open := map[thread][]int{}
	ns := func(us float64) int64 { return int64(us * 1000) }
	var last int64
	for _, e := range events {
		last = max(last, ns(e.Ts)+ns(e.Dur))
		th := thread{string(e.Pid), string(e.Tid)}
		if e.Ph == "b" || e.Ph == "e" {
			id := "id " + string(e.ID) + string(e.ID2.Global)
			if len(e.ID2.Local) > 0 {
				id = "local " + string(e.Pid) + string(e.ID2.Local)
			}
			th = thread{"async", e.Cat + "/" + e.Scope + "/" + id}
			names[th] = e.Cat
		}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				names[th] = e.Args.Name
			} else if e.Name == "process_name" {
				processes[th.pid] = e.Args.Name
			}
		case "X":
			spans[th] = append(spans[th], span{e.Name, ns(e.Ts), ns(e.Ts) + ns(e.Dur)})
		case "B", "b":
			open[th] = append(open[th], len(spans[th]))
			spans[th] = append(spans[th], span{e.Name, ns(e.Ts), -1})
		case "E", "e":
			o := open[th]
			k := len(o) - 1
			for e.Ph == "e" && k >= 0 && spans[th][o[k]].name != e.Name {
				k--
			}
			if k >= 0 {
				spans[th][o[k]].end = ns(e.Ts)
				open[th] = append(o[:k:k], o[k+1:]...)
			}
		}
	}
	for th, ss := range spans {
		for k := range ss {
			if ss[k].end < 0 {
				spans[th][k].end = last
			}
		}
	}
	self := map[string]int64{}
	for th, ss := range spans {
		label := names[th]
		if label == "" {
			label = processes[th.pid]
		}
		if label == "" {
			label = "thread"
		}
		var points []int64
		for _, s := range ss {
			points = append(points, s.start, s.end)
		}
		sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
		for i := 0; i+1 < len(points); i++ {
			lo, hi := points[i], points[i+1]
			inner := -1
			for k, s := range ss {
				// Of events with one interval, the later in the file is inner.
				if s.start <= lo && s.end >= hi && (inner < 0 || s.start > ss[inner].start ||
					s.start == ss[inner].start && s.end <= ss[inner].end) {
					inner = k
				}
			}
			if inner >= 0 && hi > lo {
				self[label+": "+ss[inner].name] += hi - lo
			}
		}
	}
	return self, nil
}

// TraceSamples counts the samples of a trace's V8 CPU profiles (Profile
// and ProfileChunk events) per function, keyed "function url"
// ("(anonymous)" for V8's unnamed functions).
func TraceSamples(file string) (map[string]int64, error) {
	events, err := readTrace(file)
	if err != nil {
		return nil, err
	}
	type node struct{ profile, id string }
	frames := map[node]string{}
	perNode := map[node]int64{}
	for _, e := range events {
		if e.Ph != "P" || e.Name != "ProfileChunk" {
			continue
		}
		p := string(e.Pid) + "/" + string(e.ID)
		for _, n := range e.Args.Data.CPUProfile.Nodes {
			fn := n.CallFrame.FunctionName
			if fn == "" {
				fn = "(anonymous)"
			}
			frames[node{p, strconv.FormatInt(n.ID, 10)}] = fn + " " + n.CallFrame.URL
		}
		for _, id := range e.Args.Data.CPUProfile.Samples {
			perNode[node{p, strconv.FormatInt(id, 10)}]++
		}
	}
	counts := map[string]int64{}
	for n, c := range perNode {
		counts[frames[n]] += c
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("%s: no CPU profile samples", file)
	}
	return counts, nil
}

// PlaywrightCore finds the npm package playwright-core in the module's
// node_modules (npm install puts it there).
func PlaywrightCore() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	p := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "node_modules", "playwright-core")
	if _, err := os.Stat(filepath.Join(p, "package.json")); err != nil {
		return "", fmt.Errorf("no playwright-core: run npm install: %v", err)
	}
	return p, nil
}

// pageProfiler records, round by round, a V8 CPU profile of each page's
// call (a JavaScript expression) in one headless Chromium through the
// DevTools protocol (CDP Profiler.start and Profiler.stop), as DevTools'
// JavaScript profiler does: dir/NAME-RR.cpuprofile.
const pageProfiler = `const [core, chromiumPath, dir, call, runs, ...pages] = process.argv.slice(2);
const { chromium } = require(core);
const fs = require('fs');
(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--js-flags=--no-turbo-inlining --no-maglev-inlining'] });
  const page = await browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  for (let r = 0; r < Number(runs); r++) {
    for (let i = 0; i < pages.length; i += 2) {
      // The page loaded afresh a run: its code compiled anew, as in a visit.
      await page.goto('about:blank');
      await page.goto(pages[i + 1]);
      await cdp.send('Profiler.start');
      await page.evaluate(call);
      const { profile } = await cdp.send('Profiler.stop');
      fs.writeFileSync(dir + '/' + pages[i] + '-' + String(r).padStart(2, '0') + '.cpuprofile', JSON.stringify(profile));
    }
  }
  await browser.close();
})().catch(e => { console.error(e); process.exit(1); });
`

// PageCPUProfiles records runs V8 CPU profiles of call (a JavaScript
// expression the page defines) on each page (name → URL) in one headless
// Chromium, the pages interleaved round by round, into dir; it returns
// each page's files in run order. playwrightCore is the playwright-core
// package's directory. V8 inlines nothing (--no-turbo-inlining,
// --no-maglev-inlining): inlined into its caller in some runs and not in
// others, a library function's time moved to the page's loop, and a
// release that made escapeHtml twice as fast once read as the whole page
// shrinking in proportion. Every function is its own frame, as in an
// interpreter's profile.
func PageCPUProfiles(playwrightCore, dir, call string, runs int, pages map[string]string) (map[string][]string, error) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "profile-pages.js")
	if err := os.WriteFile(script, []byte(pageProfiler), 0o600); err != nil {
		return nil, err
	}
	args := []string{script, playwrightCore, chromium, dir, call, strconv.Itoa(runs)}
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	files := map[string][]string{}
	for _, name := range names {
		args = append(args, name, pages[name])
		for r := range runs {
			files[name] = append(files[name], filepath.Join(dir, fmt.Sprintf("%s-%02d.cpuprofile", name, r)))
		}
	}
	return files, errors.Join(run(dir, "node", args...), os.Remove(script))
}
