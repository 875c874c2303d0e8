package toolprofiles

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// FirefoxPage is NodeApp as a web page: its script runs as the page
// loads, slow's argument in the page. SlowLineJS is slow()'s line in it too
// (the script starts on the page's first line). Then hold() keeps the page
// loading until FirefoxHoldMs after navigation began: every thread of
// Firefox is sampled for as long as it runs, idle or not, so a run of the
// slower build would otherwise be longer in all of them; held, base and
// head runs last as long, and hold() gives back what slow() takes.
const FirefoxPage = `<!doctype html><script>function leaf(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) } return s }
function fast() { return leaf(2e6) }
function slow(n) { let s = leaf(2e6); for (let i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25 } return s }
function hold(ms) { let k = 0; while (performance.now() < ms) { k++ } return k }
const n = %d
let t = 0
for (let k = 0; k < 20; k++) { t += fast() + slow(n) }
document.title = String(t > 0) + hold(%d)
</script>
`

// FirefoxHoldMs is how long FirefoxPage loads, in milliseconds since its
// navigation began: longer than its work takes in the slower build.
const FirefoxHoldMs = 4000

// FirefoxRuns records a run for each of slowNs with Firefox's own
// profiler: a headless Firefox a run loads FirefoxPage from home/page.html
// (home is Firefox's working directory; one address for the runs of both
// builds, so that the page's frames are the same in all), takes a screenshot once it has loaded and quits, and the profiler,
// started with Firefox (MOZ_PROFILER_STARTUP), writes its raw Gecko profile
// at shutdown to dir/NAMEi.json. It samples the JS stacks (and the native
// code they are in) of each process's main thread every millisecond; all runs share one
// Firefox profile directory, whose extensions' ids are then the same.
func FirefoxRuns(home, dir, name string, slowNs ...int) error {
	if err := os.MkdirAll(filepath.Join(home, "profile"), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "profile", "user.js"), []byte(firefoxPrefs), 0o600); err != nil {
		return err
	}
	page := filepath.Join(home, "page.html")
	for i, n := range slowNs {
		if err := os.WriteFile(page, []byte(fmt.Sprintf(FirefoxPage, n, FirefoxHoldMs)), 0o600); err != nil {
			return err
		}
		out := filepath.Join(dir, fmt.Sprintf("%s%d.json", name, i))
		cmd := exec.Command("firefox-esr", "--headless", "--no-remote", "--profile", filepath.Join(home, "profile"), // #nosec G204 -- the tests' own tools
			"--screenshot", filepath.Join(home, "shot.png"), "file://"+page)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "MOZ_PROFILER_STARTUP=1", "MOZ_PROFILER_SHUTDOWN="+out,
			"MOZ_PROFILER_STARTUP_FEATURES=js", "MOZ_PROFILER_STARTUP_FILTERS=GeckoMain",
			"MOZ_PROFILER_STARTUP_INTERVAL=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("firefox-esr: %v: %s", err, b)
		}
		if _, err := os.Stat(out); err != nil {
			return fmt.Errorf("firefox-esr wrote no profile: %v", err)
		}
	}
	return nil
}

// firefoxPrefs keep a run to what the page needs: one content process, no
// prelaunched ones, no extension process, no start-up chores, so that the
// profile's other threads (each sampled all run long, idle or not) add
// little besides the page's work.
const firefoxPrefs = `user_pref("fission.autostart", false);
user_pref("dom.ipc.processCount", 1);
user_pref("dom.ipc.processPrelaunch.enabled", false);
user_pref("extensions.webextensions.remote", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("app.normandy.enabled", false);
user_pref("browser.safebrowsing.update.enabled", false);
`

// geckoJS is a JS frame's location in a raw Gecko profile, "name
// (url:line:column)[source]".
var geckoJS = regexp.MustCompile(`^(.*) \((.+?):([0-9]+)(?::([0-9]+))?\)$`)

// GeckoSelf sweeps a raw Gecko profile's tables, its child processes'
// too, and counts each sample for the function of its stack's leaf, keyed
// by name: a JS frame's function name, "name (in lib)"'s name, a label
// as it is (a source index "[n]" after a location left out); an unsymbolicated address ("0x...") is passed over for its
// caller, and a sample of such addresses only (under Gecko's "(root)"
// label or none) counts for "(unsymbolicated code)".
func GeckoSelf(file string) (map[string]int64, error) {
	b, err := os.ReadFile(file) // #nosec G304 -- the tests' own file
	if err != nil {
		return nil, err
	}
	self := map[string]int64{}
	return self, geckoSelf(b, self)
}

var geckoAddress = regexp.MustCompile(`^0x[[:xdigit:]]+$`)

func geckoSelf(b []byte, self map[string]int64) error {
	var g struct {
		Threads []struct {
			Samples, StackTable, FrameTable struct {
				Schema map[string]int
				Data   [][]any
			}
			StringTable []string
		}
		Processes []json.RawMessage
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return err
	}
	name := func(loc string) (string, bool) {
		if geckoAddress.MatchString(loc) {
			return "", false
		}
		if i := strings.LastIndex(loc, " (in "); i > 0 && strings.HasSuffix(loc, ")") {
			return loc[:i], true
		}
		if i := strings.LastIndexByte(loc, '['); i > 0 && strings.HasSuffix(loc, "]") {
			if _, err := strconv.Atoi(loc[i+1 : len(loc)-1]); err == nil {
				loc = loc[:i] // the source index
			}
		}
		if m := geckoJS.FindStringSubmatch(loc); m != nil {
			return m[1], true
		}
		return loc, true
	}
	for _, th := range g.Threads {
		stackCol, prefixCol, frameCol := th.Samples.Schema["stack"], th.StackTable.Schema["prefix"], th.StackTable.Schema["frame"]
		locCol := th.FrameTable.Schema["location"]
		for _, s := range th.Samples.Data {
			stack, ok := s[stackCol].(float64)
			if !ok {
				continue
			}
			leaf := "(unsymbolicated code)"
			for ok {
				row := th.StackTable.Data[int(stack)]
				frame := th.FrameTable.Data[int(row[frameCol].(float64))]
				if n, named := name(th.StringTable[int(frame[locCol].(float64))]); named {
					leaf = n
					break
				}
				stack, ok = row[prefixCol].(float64)
			}
			if leaf == "(root)" { // Gecko's root label, which stacks leave out
				leaf = "(unsymbolicated code)"
			}
			self[leaf]++
		}
	}
	for _, p := range g.Processes {
		if err := geckoSelf(p, self); err != nil {
			return err
		}
	}
	return nil
}
