package profile

import "strings"

// Identity is what makes two frames one function across builds: the name
// and the module's identity (ModuleIdentity), never a path a build or a
// machine chose. Interning (Profile.Intern, tree.Frames.Intern) and the
// stored frame key (storage.FrameHash) all use it, so a binary run as
// app-base and as app-head, from two checkouts or from versioned install
// directories is one set of functions. The full module path stays in
// Frame.Module for display and for the system-frame rules.
// docs/SCHEMA.md ("Frame identity") gives the reasons.
type Identity struct{ Name, Module string }

// ProgramModule is the module of the process frame of the program a
// profile is of (perf's first frame, the process name, when that process
// runs the executable profiled: ingest's markProgram). Its name is the
// name the build gave its binary, so its identity is the module alone.
const ProgramModule = "[program]"

// ThreadModule is the module of a thread's frame, the root of its stacks
// when a file is read per thread (ingest's Options.Threads): a marker, so
// that the frame is taken for no function and a thread of one name is one
// frame in every build.
const ThreadModule = "[thread]"

// FrameIdentity returns the identity of the frame (name, module). The
// program's process frame (ProgramModule) is one frame whatever its name.
// A name a profiler made from the module's file name — perf's "[app-base]"
// for an unknown symbol, pprof's "app-base+0x1f00" for an unsymbolized
// address — has that file name replaced by the module's identity, since
// the build chose it too.
func FrameIdentity(name, module string) Identity {
	if module == ProgramModule {
		return Identity{Module: module}
	}
	id := ModuleIdentity(module)
	if base := moduleBase(module); base != "" {
		if rest, ok := moduleNamed(name, base); ok {
			name = "\x00" + id + rest
		}
	}
	return Identity{name, id}
}

// moduleNamed reports whether name is made from the module file name base
// and returns the part that is not: "[base]" or "base+0x...". (A name equal
// to base is not: C programs name functions after themselves, cksum's
// cksum.)
func moduleNamed(name, base string) (string, bool) {
	switch {
	case len(name) == len(base)+2 && name[0] == '[' && name[len(name)-1] == ']' && name[1:len(name)-1] == base:
		return "[]", true
	case strings.HasPrefix(name, base+"+0x"):
		return name[len(base):], true
	}
	return "", false
}

// ModuleIdentity returns what stands for a module across builds, from its
// path alone (so that it holds for every input format and for frames
// stored before it existed):
//   - "" and the modules that name no file ("[kernel.kallsyms]", "[vdso]",
//     "[unknown]", perf's "//anon", Node's "node:internal/main/run_main_module",
//     CPython's "<frozen importlib._bootstrap>") are themselves;
//   - perf's JIT maps (/tmp/perf-PID.map) and jitdump files
//     (jitted-PID-N.so) are "[jit]": the PID changes every run;
//   - a shared library is its file name without directory or version:
//     /usr/lib/x86_64-linux-gnu/libfoo.so.1.2.3, libfoo-1.2.so, libc-2.31.so
//     and libc.so.6 are libfoo.so, libfoo.so, libc.so and libc.so (a
//     soname would keep the major version, which an upgrade of the
//     system's C library, libc-2.31.so to libc.so.6, changes);
//     libfoo.1.dylib is libfoo.dylib, a macOS framework its binary's name,
//     a DLL its lower-cased name; a Linux kernel image (vmlinux-6.1) is
//     "vmlinux";
//   - a script, page, bytecode or source file (app.js, index.html,
//     handler.py, app.jar, util.c: what V8, Chrome's traces and speedscope
//     name as a frame's module) is its file name: two scripts' "(anonymous)"
//     or "run" are two functions, whatever directory the build put them in;
//     a Python package's __init__.py or __main__.py, which every package
//     names alike, keeps its directory, the package's import name
//     (/srv/app/shop/__init__.py is shop/__init__.py);
//   - anything else is an executable, and every executable is one module,
//     "": the build names its binary (app-base, app-head, /opt/app/1.2/app).
//
// A " (deleted)" suffix (a binary replaced while it ran) is ignored.
func ModuleIdentity(module string) string {
	if isMarker(module) {
		return module
	}
	module = strings.TrimSuffix(module, " (deleted)")
	base := moduleBase(module)
	lower := strings.ToLower(base)
	switch {
	case isPerfMap(base), isJitDump(base):
		return "[jit]"
	case strings.HasPrefix(base, "vmlinux"):
		return "vmlinux"
	case strings.HasSuffix(lower, ".dll"):
		return lower
	case base == "__init__.py" || base == "__main__.py":
		if dir := strings.TrimRight(module[:len(module)-len(base)], `/\`); dir != "" {
			return dir[strings.LastIndexAny(dir, `/\`)+1:] + "/" + base
		}
		return base
	case strings.Contains(module, ".framework/"), isScript(lower):
		return base
	}
	if stem, ok := strings.CutSuffix(base, ".dylib"); ok {
		return versionless(stem, '.') + ".dylib"
	}
	for i := strings.Index(base, ".so"); i > 0; {
		if i+3 == len(base) || base[i+3] == '.' && isVersion(base[i+4:]) {
			return versionless(base[:i], '-') + ".so"
		}
		j := strings.Index(base[i+3:], ".so")
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return ""
}

// moduleBase is the file name of a module path ("/" or "\" separated),
// without a " (deleted)" suffix; "" for markers (isMarker).
func moduleBase(module string) string {
	if isMarker(module) {
		return ""
	}
	module = strings.TrimSuffix(module, " (deleted)")
	if strings.Contains(module, "://") { // a script's URL: its query and fragment name no file
		module, _, _ = strings.Cut(module, "?")
		module, _, _ = strings.Cut(module, "#")
	}
	return module[strings.LastIndexAny(module, `/\`)+1:]
}

// isMarker reports whether a module names no file a build chose: "",
// perf's and pprof's bracketed ones ("[kernel.kallsyms]", "[vdso]"),
// perf's "//anon" (anonymous executable memory, JIT code without a map),
// a runtime's built-in code (Node's "node:internal/...", CPython's
// "<frozen importlib._bootstrap>"): the same in every build, and each
// one module of its own.
func isMarker(module string) bool {
	return module == "" || module[0] == '[' || module[0] == '<' ||
		strings.HasPrefix(module, "//") || strings.HasPrefix(module, "node:")
}

// versionless cuts a version that follows sep at the end of stem:
// "libc-2.31" → "libc", "libfoo.1.2" → "libfoo" (sep '.'). After '-' the
// version must have a dot (glibc's libc-2.31), so that the numbers that
// are part of a name stay: ld-linux-x86-64, libLLVM-15, libgtk-3.
func versionless(stem string, sep byte) string {
	if sep == '.' {
		for {
			i := strings.LastIndexByte(stem, '.')
			if i <= 0 || !isVersion(stem[i+1:]) {
				return stem
			}
			stem = stem[:i]
		}
	}
	if i := strings.LastIndexByte(stem, sep); i > 0 && isVersion(stem[i+1:]) && strings.Contains(stem[i+1:], ".") {
		return stem[:i]
	}
	return stem
}

// isVersion reports whether s is digits and dots, starting with a digit.
func isVersion(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// isPerfMap: perf-<pid>.map, the symbol map a JIT writes for perf.
func isPerfMap(base string) bool {
	pid, ok := strings.CutPrefix(base, "perf-")
	if !ok {
		return false
	}
	pid, ok = strings.CutSuffix(pid, ".map")
	return ok && isDigits(pid)
}

// isJitDump: jitted-<pid>-<n>.so, perf inject --jit's per-function files.
func isJitDump(base string) bool {
	rest, ok := strings.CutPrefix(base, "jitted-")
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, ".so")
	pid, n, two := strings.Cut(rest, "-")
	return ok && two && isDigits(pid) && isDigits(n)
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// scriptExtensions are the file endings of scripts, pages, bytecode
// archives and source files (speedscope's and V8's frames name the file a
// function is in): the code of one is told apart from another's by its
// file name.
var scriptExtensions = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx",
	".html", ".htm", ".vue", ".svelte", ".py", ".pyc", ".rb", ".php", ".pl", ".pm", ".lua",
	".jar", ".war", ".class", ".dex", ".wasm", ".java", ".kt", ".scala", ".cs", ".fs",
	".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".rs", ".go", ".swift", ".m", ".mm", ".dart",
	".ex", ".exs", ".erl", ".hs", ".ml", ".clj"}

// isScript reports whether the lower-cased file name base ends like a
// script or bytecode file.
func isScript(base string) bool {
	for _, ext := range scriptExtensions {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return true
		}
	}
	return false
}
