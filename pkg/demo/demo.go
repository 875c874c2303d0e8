// Package demo generates the realistic demo data set that `flamediff seed`
// loads for the dev stack and the provisioned dashboards: two apps, twelve
// builds of ten runs each, with one real regression (and one improvement)
// and the source changes that explain them.
package demo

import (
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
)

// Shape of the data set.
const (
	Builds           = 12
	RunsPerBuild     = 10
	samplesPerWeight = 25                    // samples per unit of stack weight: more work, more samples
	samplePeriod     = 10 * time.Millisecond // a 100 Hz CPU profiler
	startupFraction  = 0.1                   // share of a run spent starting up
)

// Epoch is the time of the first demo build.
var Epoch = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)

// Run is one generated run.
type Run struct {
	Build, Run string
	Start      time.Time
	Profile    *profile.Profile
}

// Build is one generated build with its runs and source changes.
type Build struct {
	Name                     string
	Time                     time.Time
	Commit                   string
	Modified, Added, Removed []string
	Runs                     []Run
}

// App is one generated app.
type App struct {
	Name   string
	Builds []Build
}

// stackSpec is one stack of an app's call tree. Its weight is the stack's
// share of samples while builds [from, to) are current; startup stacks only
// run in the first part of a run, which makes first-seen order meaningful.
type stackSpec struct {
	path     string
	module   string // module of the leaf frame, for system-frame rules
	weight   float64
	from, to int // build indexes; to = 0 means "until the last build"
	startup  bool
}

// change is a source change recorded with a build.
type change struct {
	build          int
	kind, function string
}

type appSpec struct {
	name    string
	stacks  []stackSpec
	changes []change
}

// The regression: from build 7 the checkout service compiles a regexp for
// every discount rule.
var checkout = appSpec{
	name: "checkout-service",
	stacks: []stackSpec{
		{path: "main.main;checkout/config.Load;encoding/json.Unmarshal;encoding/json.(*decodeState).object", weight: 3, startup: true},
		{path: "main.main;checkout/config.Load;os.ReadFile;syscall.Syscall", weight: 1, startup: true},
		{path: "main.main;checkout/db.Connect;net.(*Dialer).DialContext;syscall.Syscall", weight: 1, startup: true},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;encoding/json.Unmarshal;encoding/json.(*decodeState).object", weight: 9},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/cart.(*Cart).Total;checkout/pricing.ApplyDiscounts;checkout/pricing.(*Rule).Match", weight: 12},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/cart.(*Cart).Total;checkout/pricing.ApplyDiscounts;regexp.MustCompile;regexp.compile;regexp/syntax.Parse", weight: 14, from: 7},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/cart.(*Cart).Total;checkout/pricing.ApplyDiscounts;regexp.(*Regexp).MatchString", weight: 4, from: 7},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/cart.(*Cart).Total;checkout/tax.Compute", weight: 6},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/db.(*Store).LoadCart;database/sql.(*DB).QueryContext;syscall.Syscall", weight: 10},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;checkout/db.(*Store).SaveOrder;database/sql.(*DB).ExecContext;syscall.Syscall", weight: 7},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;encoding/json.Marshal;encoding/json.(*encodeState).marshal", weight: 5},
		{path: "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;checkout/api.(*Server).handleCheckout;runtime.mallocgc", weight: 4},
		{path: "net/http.(*conn).serve;net/http.(*conn).readRequest;bufio.(*Reader).ReadLine;syscall.Syscall", weight: 5},
		{path: "runtime.gcBgMarkWorker;runtime.gcDrain;runtime.scanobject", weight: 6},
		{path: "checkout/metrics.(*Reporter).loop;checkout/metrics.(*Reporter).flush;net/http.(*Client).Do;syscall.Syscall", weight: 1.5},
	},
	changes: []change{
		{3, "modified", "checkout/tax.Compute"},
		{7, "modified", "checkout/pricing.ApplyDiscounts"},
		{7, "added", "checkout/pricing.(*Rule).Pattern"},
		{10, "modified", "checkout/metrics.(*Reporter).flush"},
	},
}

// The improvement: from build 5 the iOS app decodes images with a faster codec.
var iosApp = appSpec{
	name: "ios-app",
	stacks: []stackSpec{
		{path: "start;main;UIApplicationMain;-[AppDelegate application:didFinishLaunchingWithOptions:];AppCore.Config.load();Foundation.JSONDecoder.decode", module: "/System/Library/Frameworks/Foundation.framework/Foundation", weight: 3, startup: true},
		{path: "start;main;UIApplicationMain;-[AppDelegate application:didFinishLaunchingWithOptions:];AppCore.Database.open();sqlite3_open_v2", module: "/usr/lib/libsqlite3.dylib", weight: 2, startup: true},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoSources0;FeedKit.FeedViewController.viewDidLoad();FeedKit.FeedLoader.load(completion:);Foundation.URLSession.dataTask", module: "/System/Library/Frameworks/Foundation.framework/Foundation", weight: 6},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoSources0;FeedKit.FeedViewController.tableView(_:cellForRowAt:);FeedKit.FeedCell.configure(with:);ImageKit.ImageDecoder.decode(_:);ImageKit.PNGCodec.inflate(_:)", weight: 18, to: 5},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoSources0;FeedKit.FeedViewController.tableView(_:cellForRowAt:);FeedKit.FeedCell.configure(with:);ImageKit.ImageDecoder.decode(_:);ImageKit.HEICCodec.decode(_:)", weight: 9, from: 5},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoSources0;FeedKit.FeedViewController.tableView(_:cellForRowAt:);FeedKit.FeedCell.configure(with:);-[UILabel setText:];objc_msgSend", module: "/usr/lib/libobjc.A.dylib", weight: 7},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoObservers;CA::Transaction::commit();CA::Layer::layout_and_display_if_needed(CA::Transaction*)", module: "/System/Library/Frameworks/QuartzCore.framework/QuartzCore", weight: 12},
		{path: "start;main;UIApplicationMain;CFRunLoopRun;__CFRunLoopDoSources0;FeedKit.FeedStore.save(_:);AppCore.Database.write(_:);sqlite3_step", module: "/usr/lib/libsqlite3.dylib", weight: 5},
		{path: "_dispatch_worker_thread2;_dispatch_root_queue_drain;AnalyticsKit.Tracker.flush();Foundation.JSONEncoder.encode", module: "/System/Library/Frameworks/Foundation.framework/Foundation", weight: 3},
		{path: "_dispatch_worker_thread2;_dispatch_root_queue_drain;mach_msg_trap", module: "/usr/lib/system/libsystem_kernel.dylib", weight: 4},
	},
	changes: []change{
		{5, "modified", "ImageKit.ImageDecoder.decode(_:)"},
		{5, "added", "ImageKit.HEICCodec.decode(_:)"},
		{5, "removed", "ImageKit.PNGCodec.inflate(_:)"},
		{9, "modified", "FeedKit.FeedCell.configure(with:)"},
	},
}

// Generate builds the whole demo data set; the same seed gives the same data.
func Generate(seed int64) []App {
	rng := rand.New(rand.NewSource(seed)) // #nosec G404 -- demo data must repeat for a seed; nothing secret
	return []App{checkout.generate(rng), iosApp.generate(rng)}
}

func (a appSpec) generate(rng *rand.Rand) App {
	app := App{Name: a.name}
	for b := 0; b < Builds; b++ {
		build := Build{
			Name:   fmt.Sprintf("1.%d.0", b),
			Time:   Epoch.Add(time.Duration(b) * 24 * time.Hour),
			Commit: fmt.Sprintf("%040x", rng.Uint64()),
		}
		for _, c := range a.changes {
			if c.build != b {
				continue
			}
			switch c.kind {
			case "modified":
				build.Modified = append(build.Modified, c.function)
			case "added":
				build.Added = append(build.Added, c.function)
			case "removed":
				build.Removed = append(build.Removed, c.function)
			}
		}
		for r := 0; r < RunsPerBuild; r++ {
			start := build.Time.Add(time.Duration(r) * 5 * time.Minute)
			build.Runs = append(build.Runs, Run{
				Build:   build.Name,
				Run:     fmt.Sprintf("run-%02d", r+1),
				Start:   start,
				Profile: a.run(b, start, rng),
			})
		}
		app.Builds = append(app.Builds, build)
	}
	return app
}

// run samples one run: every sample picks a stack by weight among those
// live in build b (startup stacks only early in the run), with per-run
// noise so that run details show a realistic spread.
func (a appSpec) run(b int, start time.Time, rng *rand.Rand) *profile.Profile {
	p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Start: start}
	var live []stackSpec
	var stacks [][]uint32
	var weights []float64
	for _, s := range a.stacks {
		if b < s.from || (s.to > 0 && b >= s.to) {
			continue
		}
		frames := strings.Split(s.path, ";")
		ids := make([]uint32, len(frames))
		for i, f := range frames {
			module := ""
			if i == len(frames)-1 {
				module = s.module
			}
			ids[i] = p.Intern(profile.Frame{Name: f, Module: module})
		}
		live = append(live, s)
		stacks = append(stacks, ids)
		weights = append(weights, s.weight*(1+0.08*rng.NormFloat64()))
	}
	var work float64
	for _, w := range weights {
		work += w
	}
	n := int(samplesPerWeight * work * (1 + 0.02*rng.NormFloat64()))
	for i := 0; i < n; i++ {
		early := float64(i) < startupFraction*float64(n)
		k := pick(rng, live, weights, early)
		p.Samples = append(p.Samples, profile.Sample{
			Stack: stacks[k],
			Value: int64(samplePeriod),
			Time:  int64(i) * int64(samplePeriod),
		})
	}
	p.Duration = time.Duration(n) * samplePeriod
	return p
}

// pick draws a stack index by weight; startup stacks run only early.
func pick(rng *rand.Rand, live []stackSpec, weights []float64, early bool) int {
	var sum float64
	for i, s := range live {
		if early || !s.startup {
			sum += weights[i]
		}
	}
	x := rng.Float64() * sum
	last := 0
	for i, s := range live {
		if early || !s.startup {
			last = i
			if x < weights[i] {
				return i
			}
			x -= weights[i]
		}
	}
	return last
}
