package profile

import (
	"strings"
	"testing"
)

// Module paths as profilers write them (pprof mappings of Go and C
// programs, perf script DSOs, OTLP mapping file names) and what stands for
// them across builds.
func TestModuleIdentity(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		// the executable, at any path and under any name
		{"/tmp/TestX123/001/app-base", ""},
		{"/tmp/TestX123/002/app-head", ""},
		{"/opt/app/1.2/app", ""},
		{"/home/ci/builds/4711/checkout/bin/server (deleted)", ""},
		{"/tmp/go-build2839/b001/exe/main", ""},
		{`C:\build\app.exe`, ""},
		{"/usr/bin/python3.11", ""},
		{"", ""},
		// the kernel, vdso and perf's markers are themselves
		{"[kernel.kallsyms]", "[kernel.kallsyms]"},
		{"[vdso]", "[vdso]"},
		{"[unknown]", "[unknown]"},
		{"[anon:Mem]", "[anon:Mem]"},
		{"//anon", "//anon"},
		{"/usr/lib/debug/boot/vmlinux-6.1.0-13-amd64", "vmlinux"},
		// shared libraries: the file name without its version
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so"},
		{"/lib/x86_64-linux-gnu/libc-2.31.so", "libc.so"},
		{"/lib/x86_64-linux-gnu/libpthread-2.31.so", "libpthread.so"},
		{"/lib64/ld-linux-x86-64.so.2", "ld-linux-x86-64.so"},
		{"/lib/x86_64-linux-gnu/ld-2.31.so", "ld.so"},
		{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "libstdc++.so"},
		{"/opt/app/1.2/lib/libfoo.so.1.2.3", "libfoo.so"},
		{"/opt/app/1.3/lib/libfoo.so.1.2.4", "libfoo.so"},
		{"/usr/lib/llvm-15/lib/libLLVM-15.so.1", "libLLVM-15.so"},
		{"/usr/lib/x86_64-linux-gnu/libgtk-3.so.0.2404.29", "libgtk-3.so"},
		{"/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", "_json.cpython-311-x86_64-linux-gnu.so"},
		{"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "libjvm.so"},
		{"/usr/lib/libSystem.B.dylib", "libSystem.B.dylib"},
		{"/usr/local/lib/libssl.1.1.dylib", "libssl.dylib"},
		{"/System/Library/Frameworks/Foundation.framework/Versions/C/Foundation", "Foundation"},
		{`C:\Windows\System32\KERNEL32.DLL`, "kernel32.dll"},
		{"/usr/lib/libfoo.sox", ""}, // not a library: ".so" must end the name or precede a version
		// JIT code: the PID changes every run
		{"/tmp/perf-12345.map", "[jit]"},
		{"/tmp/perf-99.map", "[jit]"},
		{"/home/ci/.debug/jit/java-jit-20260101.XXabc/jitted-12345-42.so", "[jit]"},
		{"/tmp/perf-x.map", ""},
		// scripts are their file name: two scripts' functions of one name stay apart
		{"/home/ci/builds/4711/app/handlers.js", "handlers.js"},
		{"/srv/app-1.2/src/util.py", "util.py"},
		// every Python package has an __init__.py: its directory is the package
		{"/srv/app-1.2/src/pkg_a/__init__.py", "pkg_a/__init__.py"},
		{`C:\app\pkg_b\__main__.py`, "pkg_b/__main__.py"},
		{"__init__.py", "__init__.py"},
		{"app.jar", "app.jar"},
		{"https://example.com/static/page.html", "page.html"},
		{"https://cdn.example/assets/app.js?v=1.3#main", "app.js"},
		{"file:///opt/app/1.2/app.js", "app.js"},
		{"/src/demo/util.c", "util.c"},
		{"/usr/lib/node_modules/npm/lib/cli.MJS", "npm/lib/cli.MJS"},
		// a package is its path below its package manager's directory
		{"file:///ci/4711/app/node_modules/qs/lib/stringify.js", "qs/lib/stringify.js"},
		{"/home/u/app/node_modules/.pnpm/qs@6.11.0/node_modules/qs/lib/stringify.js", "qs/lib/stringify.js"},
		{"/w/app/.yarn/unplugged/qs-npm-6.11.0-abc/node_modules/qs/lib/stringify.js", "qs/lib/stringify.js"},
		{"/home/u/app/node_modules/express/index.js", "express/index.js"},
		{`C:\ci\app\node_modules\fast-json-stringify\index.js`, "fast-json-stringify/index.js"},
		{"/tmp/venv1/lib/python3.11/site-packages/requests/__init__.py", "requests/__init__.py"},
		{"/usr/lib/python3/dist-packages/requests/__init__.py", "requests/__init__.py"},
		{"/usr/lib/python3.11/json/__init__.py", "json/__init__.py"},
		{"/opt/venv/lib/python3.12/json/decoder.py", "json/decoder.py"},
		{"/var/lib/gems/3.1.0/gems/rack-2.2.8/lib/rack/utils.rb", "rack/lib/rack/utils.rb"},
		{"/home/ci/.m2/repository/com/x/foo/1.2.3/foo-1.2.3.jar", "foo.jar"},
		// a bundle without its content hash, a source map's source as the map names it
		{"http://127.0.0.1:8001/assets/main-3F2A9C1B.js", "main.js"},
		{"https://cdn.example/static/js/main.81be07c2.js", "main.js"},
		{"http://127.0.0.1:8001/assets/index-BxKxYvQa.js", "index.js"},
		{"http://127.0.0.1:8001/assets/main-polyfill.js", "main-polyfill.js"},
		{"webpack://app/./lib/table.js", "lib/table.js"},
		{"webpack:///lib/table.js", "lib/table.js"},
		{"http://127.0.0.1:8001/assets/main-PZBEMRTZ.js", "main.js"},
		{"http://127.0.0.1:8001/assets/vendor-POLYFILLS.js", "vendor-POLYFILLS.js"},
		// relative paths, as a profiler or Profile.Identify wrote them, are themselves
		{"lib/handlers.js", "lib/handlers.js"},
		{"./src/../lib/x.py", "lib/x.py"},
		{".js", ""}, // no name before the ending: not a script
		// a runtime's built-in code is itself: two built-ins' "(anonymous)" stay apart
		{"node:internal/main/run_main_module", "node:internal/main/run_main_module"},
		{"node:internal/per_context/primordials", "node:internal/per_context/primordials"},
		{"<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>"},
	} {
		if got := ModuleIdentity(tt.path); got != tt.want {
			t.Errorf("ModuleIdentity(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// Names a profiler made from the module's file name follow the module.
func TestFrameIdentity(t *testing.T) {
	same := [][2]Frame{
		{{Name: "main.main", Module: "/a/app-base"}, {Name: "main.main", Module: "/b/app-head"}},
		{{Name: "app-base", Module: ProgramModule}, {Name: "app-head", Module: ProgramModule}},                         // perf's process frame of the program
		{{Name: "[app-base]", Module: "/a/app-base"}, {Name: "[app-head]", Module: "/b/app-head"}},                     // perf's unknown symbol
		{{Name: "app-base+0x1f00", Module: "/a/app-base"}, {Name: "app-head+0x1f00", Module: "/b/app-head"}},           // pprof's unsymbolized address
		{{Name: "[libfoo.so.1.2]", Module: "/x/libfoo.so.1.2"}, {Name: "[libfoo.so.1.3]", Module: "/y/libfoo.so.1.3"}}, // an upgraded library
		{{Name: "memcpy", Module: "/lib/x86_64-linux-gnu/libc-2.31.so"}, {Name: "memcpy", Module: "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
	}
	for _, s := range same {
		if a, b := FrameIdentity(s[0].Name, s[0].Module), FrameIdentity(s[1].Name, s[1].Module); a != b {
			t.Errorf("%+v and %+v: identities %q and %q, want one", s[0], s[1], a, b)
		}
	}
	apart := [][2]Frame{
		{{Name: "memcpy", Module: "/usr/lib/libc.so.6"}, {Name: "memcpy", Module: "/a/app"}},
		{{Name: "app-base+0x1f00", Module: "/a/app-base"}, {Name: "app-head+0x2f00", Module: "/b/app-head"}},
		{{Name: "[libfoo.so.1]", Module: "/x/libfoo.so.1"}, {Name: "[libbar.so.1]", Module: "/x/libbar.so.1"}},
		{{Name: "f", Module: "[kernel.kallsyms]"}, {Name: "f", Module: ""}},
		{{Name: "[anon]", Module: "//anon"}, {Name: "[app]", Module: "/a/app"}},            // perf's unknown symbols of JIT code and of the executable
		{{Name: "app", Module: ""}, {Name: "app", Module: ProgramModule}},                  // another process's frame is its name
		{{Name: "cksum", Module: "/usr/bin/cksum"}, {Name: "sum", Module: "/usr/bin/sum"}}, // functions named after their binaries
	}
	for _, s := range apart {
		if a, b := FrameIdentity(s[0].Name, s[0].Module), FrameIdentity(s[1].Name, s[1].Module); a == b {
			t.Errorf("%+v and %+v: one identity %q, want two", s[0], s[1], a)
		}
	}
}

// A module's identity does not depend on its directory, nor on the
// " (deleted)" of a binary replaced while it ran; no path makes it panic.
func FuzzModuleIdentity(f *testing.F) {
	for _, s := range []string{"app-base", "libc-2.31.so", "libfoo.so.1.2.3", "perf-123.map", "jitted-1-2.so", "[vdso]", "libssl.1.1.dylib", "KERNEL32.DLL", "vmlinux-6.1", "x.so.", ".so"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) {
		if base == "" || base[0] == '[' || strings.ContainsAny(base, `/\`) || strings.HasSuffix(base, " (deleted)") {
			return
		}
		id := ModuleIdentity("/opt/app/1.2/" + base)
		if other := ModuleIdentity(`C:\builds\7\` + base + " (deleted)"); other != id {
			t.Errorf("%q: identity %q in one directory, %q in another", base, id, other)
		}
		if a, b := FrameIdentity("["+base+"]", "/a/"+base), FrameIdentity("["+base+"]", "/b/c/"+base); a != b {
			t.Errorf("%q: made names differ by directory: %q, %q", base, a, b)
		}
	})
}
