package realbuild

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flamediff/flamediff/internal/chtest"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// runsPerSide is the number of runs a side (8), fewer with -short.
func runsPerSide() int {
	if testing.Short() {
		return 5
	}
	return 8
}

// claimSlack is what a culprit may claim beyond pprof's flat change of its
// subtree and its own confidence interval: the gate's smallest regression,
// 1% of the base total, far below the moves the tests make (25% to 100%).
const claimSlack = verdict.DefaultMinBaseShare

// fixture is the synthetic app's releases, built and run once for all the
// tests: the base release built with -trimpath and copied to two
// versioned directories under two names, and every other release built in
// a checkout of its own without -trimpath, its binary named after it. Runs
// are interleaved across all of them.
type fixture struct {
	files map[string][]string // profiles by binary: aa-base, aa-head (the same binary), refactor, slower, cheaper, dearer
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  string
	// fixDir holds what the fixtures build and run, for the whole package
	// (a test's TempDir goes with the test that happened to build them).
	fixDir string
)

func TestMain(m *testing.M) {
	chtest.Main(m, Cleanup, func() {
		if fixDir != "" {
			os.RemoveAll(fixDir)
		}
	})
}

func app(t *testing.T) fixture {
	t.Helper()
	fixOnce.Do(func() {
		ft := &onceT{T: t}
		fix = buildApp(ft)
	})
	if fixErr != "" {
		t.Fatal("building and running the app:", fixErr)
	}
	return fix
}

// onceT is the testing.TB of a fixture made once for all tests: its
// failure fails every test that uses it, and its directories last until
// the package's tests end.
type onceT struct{ *testing.T }

func (o *onceT) Fatal(args ...any) {
	fixErr = fmt.Sprint(args...)
	o.T.Fatal(args...)
}

func (o *onceT) Fatalf(format string, args ...any) {
	fixErr = fmt.Sprintf(format, args...)
	o.T.Fatalf(format, args...)
}

func (o *onceT) TempDir() string {
	var err error
	if fixDir == "" {
		if fixDir, err = os.MkdirTemp("", "realbuild"); err != nil {
			o.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp(fixDir, "")
	if err != nil {
		o.Fatal(err)
	}
	return dir
}

func buildApp(t testing.TB) fixture {
	root := t.TempDir()
	base := filepath.Join(Write(t, baseRelease.app()), "app")
	Build(t, filepath.Dir(base), base, "-trimpath") // as CI jobs build
	// Installed in versioned directories under two names.
	bins := map[string]string{
		"aa-base": filepath.Join(root, "releases", "1.0.0", "app-base"),
		"aa-head": filepath.Join(root, "releases", "1.0.1", "app-head"),
	}
	Install(t, base, bins["aa-base"])
	Install(t, base, bins["aa-head"])
	for name, v := range map[string]variant{"refactor": refactorRelease, "slower": slowerRelease, "cheaper": cheaperRelease, "dearer": dearerRelease} {
		var flags []string
		if v.refactor {
			flags = append(flags, "-gcflags="+workPkg+"=-l") // fold is no longer inlined
		}
		dir := Write(t, v.app()) // a checkout of its own, built without -trimpath
		bins[name] = filepath.Join(root, "releases", name, "app-"+name)
		Build(t, dir, bins[name], flags...)
	}
	return fixture{files: RunInterleaved(t, t.TempDir(), runsPerSide(), bins, GoProfile, ".pb.gz")}
}

// checkClaims fails when a culprit claims more than the cost change it
// explains: the flat (self) changes of the functions of its subtree, as
// pprof shows them, beyond its confidence interval and claimSlack.
func checkClaims(t *testing.T, v *verdict.Verdict, flat *Flat) {
	t.Helper()
	for _, c := range Culprits(v) {
		in := slices.Collect(maps.Keys(flat.Change)) // the root's subtree: every function
		if !c.Root() {
			in = flat.Subtree(t, c.Function)
		}
		explained := flat.Share(in...)
		half := (float64(c.DeltaHigh) - float64(c.DeltaLow)) / 2
		if math.Abs(float64(c.Delta)) > math.Abs(explained)+half+claimSlack {
			t.Errorf("%s culprit %s claims %+.2f%% (±%.2f%%) of the base total; pprof's flat change of its subtree is %+.2f%%",
				c.Kind, c.Function, 100*float64(c.Delta), 100*half, 100*explained)
		}
	}
}

// oneSided is the share of a diff's folded stacks (`a;b;c base head`)
// that only one side has, of both sides' values: 0 when every stack of
// head meets its stack in base.
func oneSided(t *testing.T, folded string) float64 {
	t.Helper()
	var alone, all float64
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("folded diff line %q", line)
		}
		var base, head float64
		if _, err := fmt.Sscan(f[len(f)-2], &base); err != nil {
			t.Fatalf("folded diff line %q: %v", line, err)
		}
		if _, err := fmt.Sscan(f[len(f)-1], &head); err != nil {
			t.Fatalf("folded diff line %q: %v", line, err)
		}
		all += base + head
		if base == 0 || head == 0 {
			alone += base + head
		}
	}
	return alone / all
}

// alone lists the largest stacks of a folded diff that one side only has.
func alone(folded string) string {
	type stack struct {
		line  string
		value float64
	}
	var stacks []stack
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		f := strings.Fields(line)
		var base, head float64
		if len(f) < 3 {
			continue
		}
		fmt.Sscan(f[len(f)-2], &base)
		fmt.Sscan(f[len(f)-1], &head)
		if base == 0 || head == 0 {
			stacks = append(stacks, stack{line, base + head})
		}
	}
	slices.SortFunc(stacks, func(a, b stack) int { return cmp.Compare(b.value, a.value) })
	var b strings.Builder
	for i, s := range stacks {
		if i == 10 {
			fmt.Fprintf(&b, "... and %d more\n", len(stacks)-10)
			break
		}
		b.WriteString(s.line + "\n")
	}
	return b.String()
}

// moveInto returns the move of v (its moved list) in which function took
// work over, or nil.
func moveInto(v *verdict.Verdict, function string) *verdict.Move {
	for i, m := range v.Moved {
		for _, p := range m.To {
			if p.Function == function {
				return &v.Moved[i]
			}
		}
	}
	return nil
}

// find returns the culprits of v whose function is one of names.
func find(v *verdict.Verdict, names ...string) []verdict.Culprit {
	var out []verdict.Culprit
	for _, c := range Culprits(v) {
		for _, n := range names {
			if c.Function == n {
				out = append(out, c)
			}
		}
	}
	return out
}
