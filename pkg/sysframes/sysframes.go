// Package sysframes classifies frames as system code (kernel, C library,
// language runtimes, platform frameworks) or user code, for "collapse
// system calls". docs/SYSTEM_FRAMES.md lists the built-in rules.
package sysframes

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/tree"
)

// A rule matches a frame when its text, taken from the field it names,
// matches by its kind.
type rule struct {
	field field
	kind  kind
	text  string
}

type field uint8

const (
	inName       field = iota // the frame (function) name
	inModule                  // the full module path
	inModuleBase              // the last element of the module path
)

type kind uint8

const (
	prefix kind = iota
	suffix
	equal
)

// builtin is the default rule set, by platform. Order does not matter: a
// frame is system code if any rule matches.
var builtin = []rule{
	// Linux: the kernel (perf's module and folded "_[k]" annotation), the C
	// library and dynamic loader, and shared libraries of the system.
	{inModule, prefix, "[kernel"}, // [kernel.kallsyms], [kernel.vmlinux]
	{inModule, equal, "[vdso]"},
	{inModule, equal, "[vsyscall]"},
	{inName, suffix, "_[k]"},
	{inModuleBase, prefix, "libc.so"},
	{inModuleBase, prefix, "libc-"},
	{inModuleBase, prefix, "ld-linux"},
	{inModuleBase, prefix, "ld-musl"},
	{inModuleBase, prefix, "libpthread"},
	{inModule, prefix, "/usr/lib/"},
	{inModule, prefix, "/usr/lib64/"},
	{inModule, prefix, "/lib/"},
	{inModule, prefix, "/lib64/"},

	// Android and the JVM: platform packages, dotted (Java names) and
	// slashed (JVM internal names as async-profiler prints them).
	{inName, prefix, "java."}, {inName, prefix, "java/"},
	{inName, prefix, "javax."}, {inName, prefix, "javax/"},
	{inName, prefix, "jdk."}, {inName, prefix, "jdk/"},
	{inName, prefix, "sun."}, {inName, prefix, "sun/"},
	{inName, prefix, "android."}, {inName, prefix, "android/"},
	{inName, prefix, "kotlin."}, {inName, prefix, "kotlin/"},
	{inName, prefix, "dalvik."}, {inName, prefix, "dalvik/"},

	// iOS and macOS: system libraries and frameworks, the Objective-C
	// dispatcher.
	{inModule, prefix, "/usr/lib/system/"},
	{inModule, prefix, "/System/Library/"},
	{inModuleBase, prefix, "libsystem_"},
	{inModuleBase, prefix, "libdyld"},
	{inModuleBase, equal, "UIKit"},
	{inModuleBase, equal, "UIKitCore"},
	{inModuleBase, equal, "Foundation"},
	{inModuleBase, equal, "CoreFoundation"},
	{inName, prefix, "objc_msgSend"},

	// V8 (Node, Chrome): the pseudo-frames of its CPU profiles, and Node's
	// built-in modules, whose script urls (the module of a .cpuprofile
	// frame) start with "node:" (node:internal/timers, node:fs).
	{inName, equal, "(garbage collector)"},
	{inName, equal, "(program)"},
	{inName, equal, "(idle)"},
	{inName, equal, "(root)"},
	{inModule, prefix, "node:"},

	// CPython: the interpreter's C API in native stacks, its shared
	// library, and frozen bootstrap modules.
	{inName, prefix, "_PyEval_"}, {inName, prefix, "PyEval_"},
	{inName, prefix, "_PyObject_"}, {inName, prefix, "PyObject_"},
	{inName, prefix, "_PyFunction_"}, {inName, prefix, "_Py_"},
	{inModuleBase, prefix, "libpython"},
	{inModule, prefix, "<frozen "},

	// .NET: the base class library and the runtime, in dotnet-trace's
	// "Module!Namespace.Type.Method" names and as modules.
	{inName, prefix, "System."}, {inName, prefix, "Microsoft."},
	{inName, prefix, "coreclr!"}, {inName, prefix, "CoreLib!"},
	{inModuleBase, prefix, "libcoreclr"}, {inModuleBase, prefix, "System.Private.CoreLib"},

	// Go: the runtime, system calls and the standard library's internals.
	{inName, prefix, "runtime."},
	{inName, prefix, "runtime/"},
	{inName, prefix, "syscall."},
	{inName, prefix, "internal/"},
}

// Rules classifies frames: built-in rules plus user regular expressions.
// A Rules is safe for concurrent use.
type Rules struct {
	user []*regexp.Regexp
}

// New returns the built-in rules extended by userRegexps, Go regular
// expressions (RE2 syntax) each matched, unanchored, against a frame's name
// and against its module. An invalid expression is an error naming it.
func New(userRegexps []string) (*Rules, error) {
	r := &Rules{}
	for _, expr := range userRegexps {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("system frame rule %q: %w", expr, err)
		}
		r.user = append(r.user, re)
	}
	return r, nil
}

// IsSystem reports whether the frame (name, module) is system code: a
// built-in rule or a user expression matches it. module may be "". A
// thread's frame (profile.ThreadModule) never is, whatever its name.
func (r *Rules) IsSystem(name, module string) bool {
	if module == profile.ThreadModule {
		return false
	}
	base := path.Base(module)
	for _, ru := range builtin {
		text := name
		switch ru.field {
		case inModule:
			text = module
		case inModuleBase:
			if module == "" {
				continue
			}
			text = base
		}
		if ru.kind == prefix && strings.HasPrefix(text, ru.text) ||
			ru.kind == suffix && strings.HasSuffix(text, ru.text) ||
			ru.kind == equal && text == ru.text {
			return true
		}
	}
	for _, re := range r.user {
		if re.MatchString(name) || module != "" && re.MatchString(module) {
			return true
		}
	}
	return false
}

// ForFrames adapts r to tree.Options.IsSystem for frames interned in f.
func (r *Rules) ForFrames(f *tree.Frames) func(frame uint32) bool {
	return func(id uint32) bool { return r.IsSystem(f.Name(id), f.Module(id)) }
}
