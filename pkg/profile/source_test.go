package profile

import (
	"slices"
	"testing"
)

// profileOf makes a profile of one sample a stack, each frame (name,
// module).
func profileOf(stacks ...[][2]string) *Profile {
	p := &Profile{}
	for _, s := range stacks {
		var ids []uint32
		for _, f := range s {
			ids = append(ids, p.Intern(Frame{Name: f[0], Module: f[1]}))
		}
		p.Samples = append(p.Samples, Sample{Stack: ids, Value: 1, Time: -1})
	}
	return p
}

// identities lists the identity of every frame of p's stacks, root first.
func identities(p *Profile) [][]Identity {
	var out [][]Identity
	for _, s := range p.Samples {
		var ids []Identity
		for _, f := range s.Stack {
			ids = append(ids, FrameIdentity(p.Frames[f].Name, p.Frames[f].Module))
		}
		out = append(out, ids)
	}
	return out
}

// The app's own files are relative to its root: one file at two checkout
// roots is one, two files of one name at one root are two.
func TestIdentifyRootsSources(t *testing.T) {
	app := func(root string) *Profile {
		return profileOf(
			[][2]string{{"(anonymous)", "file://" + root + "/server.js"}, {"handle", "file://" + root + "/routes/index.js"}},
			[][2]string{{"(anonymous)", "file://" + root + "/server.js"}, {"(anonymous)", "file://" + root + "/lib/index.js"}},
			[][2]string{{"parse", "file://" + root + "/node_modules/qs/lib/parse.js"}, {"(anonymous)", "file://" + root + "/node_modules/.pnpm/x@1.0.0/node_modules/x/index.js"}},
		)
	}
	a, b := app("/ci/4711/app"), app("/home/u/checkouts/other")
	a.Identify()
	b.Identify()
	ia, ib := identities(a), identities(b)
	if !slices.EqualFunc(ia, ib, slices.Equal) {
		t.Errorf("one app at two roots: %v and %v", ia, ib)
	}
	want := [][]Identity{
		{{"(anonymous)", "server.js"}, {"handle", "routes/index.js"}},
		{{"(anonymous)", "server.js"}, {"(anonymous)", "lib/index.js"}},
		{{"parse", "qs/lib/parse.js"}, {"(anonymous)", "x/index.js"}},
	}
	if !slices.EqualFunc(ia, want, slices.Equal) {
		t.Errorf("identities %v, want %v", ia, want)
	}
	if f := a.Frames[a.Samples[0].Stack[1]]; f.Module != "routes/index.js" || f.File != "file:///ci/4711/app/routes/index.js" {
		t.Errorf("the app's file: module %q, file %q; want it relative, the file whole", f.Module, f.File)
	}
}

// Without node_modules the root is the deepest directory of all the app's
// files, per origin; a bundle's hash is no part of it.
func TestIdentifyCommonRoot(t *testing.T) {
	p := profileOf(
		[][2]string{{"main", "/srv/build-17/app/main.py"}, {"load", "/srv/build-17/app/pkga/__init__.py"}},
		[][2]string{{"main", "/srv/build-17/app/main.py"}, {"load", "/srv/build-17/app/pkgb/__init__.py"}},
		[][2]string{{"(anonymous)", "http://127.0.0.1:8001/dist-a/assets/main-3F2A9C1B.js"}, {"table", "http://127.0.0.1:8001/dist-a/assets/chunk-ABCD1234.js"}},
	)
	p.Identify()
	want := [][]Identity{
		{{"main", "main.py"}, {"load", "pkga/__init__.py"}},
		{{"main", "main.py"}, {"load", "pkgb/__init__.py"}},
		{{"(anonymous)", "main.js"}, {"table", "chunk.js"}},
	}
	if got := identities(p); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("identities %v, want %v", got, want)
	}
}

// Two programs' main are two functions; the program profiled (under most
// samples) stays one at any path and name.
func TestIdentifyOtherPrograms(t *testing.T) {
	run := func(prog string) *Profile {
		return profileOf(
			[][2]string{{prog, ""}, {"main", "/tmp/b1/" + prog}, {"work", "/tmp/b1/" + prog}},
			[][2]string{{prog, ""}, {"main", "/tmp/b1/" + prog}, {"memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
			[][2]string{{"helper", ""}, {"main", "/usr/local/bin/helper"}},
		)
	}
	a, b := run("app-base"), run("app-head")
	a.Identify()
	b.Identify()
	ia, ib := identities(a), identities(b)
	if ia[0][1] != ib[0][1] || ia[0][1] != (Identity{"main", ""}) {
		t.Errorf("the program's main: %v and %v, want one, of the program", ia[0][1], ib[0][1])
	}
	if ia[2][1] == ia[0][1] || ia[2][1] != ib[2][1] {
		t.Errorf("the helper's main %v beside the program's %v (and %v in the other run): want apart, and one across runs", ia[2][1], ia[0][1], ib[2][1])
	}
	if len(a.Frames) != 6 {
		t.Errorf("%d frames, want 6: %+v", len(a.Frames), a.Frames)
	}
}

// Samples may share a stack (a V8 node's samples, a repeated pprof
// stack): when Identify merges frames, each stack is mapped once.
func TestIdentifySharedStacks(t *testing.T) {
	p := profileOf(
		[][2]string{{"(root)", ""}, {"main", "file:///r/app/main.js"}, {"work", "file:///r/app/lib/work.js"}},
		[][2]string{{"(root)", ""}, {"main", "/r/app/main.js"}},
		[][2]string{{"(root)", ""}, {"leaf", "file:///r/app/lib/leaf.js"}},
	)
	p.Samples = append(p.Samples, p.Samples[2]) // the same stack, sampled again
	p.Identify()
	got := identities(p)
	if len(p.Frames) != 4 {
		t.Fatalf("%d frames %v: want main.js as a URL and a path one", len(p.Frames), p.Frames)
	}
	for _, s := range got[2:] {
		if s[1].Name != "leaf" {
			t.Errorf("a shared stack reads %v, want (root);leaf", s)
		}
	}
}

// RemapFrames maps a stack shared whole, or in part, once.
func TestRemapFramesOnce(t *testing.T) {
	arr := []uint32{0, 1, 2}
	p := &Profile{Samples: []Sample{{Stack: arr[:2]}, {Stack: arr}, {Stack: arr[:2]}, {Stack: []uint32{2, 1}}, {Stack: arr[1:]}}}
	p.RemapFrames([]uint32{1, 2, 0})
	want := [][]uint32{{1, 2}, {1, 2, 0}, {1, 2}, {0, 2}, {2, 0}}
	for i, s := range p.Samples {
		if !slices.Equal(s.Stack, want[i]) {
			t.Errorf("sample %d: %v, want %v", i, s.Stack, want[i])
		}
	}
}
