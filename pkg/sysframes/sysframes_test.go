package sysframes

import (
	"testing"

	"github.com/flamediff/flamediff/pkg/tree"
)

func TestIsSystem(t *testing.T) {
	rules, err := New([]string{`^mycorp\.vendor\.`, `/opt/thirdparty/`})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, module string
		want         bool
	}{
		{"do_syscall_64", "[kernel.kallsyms]", true},
		{"tcp_sendmsg_[k]", "", true},
		{"__memcpy_avx_unaligned", "/usr/lib/x86_64-linux-gnu/libc.so.6", true},
		{"_dl_relocate_object", "/lib64/ld-linux-x86-64.so.2", true},
		{"malloc", "libc-2.31.so", true},
		{"java.util.HashMap.get", "", true},
		{"java/lang/Thread.run", "", true},
		{"java.lang.ref.Reference.ReferenceHandler", "[thread]", false}, // a JVM thread's name, read per thread
		{"mycorp.vendor.pool-1", "[thread]", false},
		{"android.os.Looper.loop", "", true},
		{"kotlin.collections.CollectionsKt.map", "", true},
		{"dalvik.system.NativeStart.main", "", true},
		{"objc_msgSend", "/usr/lib/libobjc.A.dylib", true},
		{"_pthread_start", "/usr/lib/system/libsystem_pthread.dylib", true},
		{"-[UIApplication _run]", "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore", true},
		{"CFRunLoopRun", "CoreFoundation", true},
		{"start", "libdyld.dylib", true},
		{"runtime.mallocgc", "/app/server", true},
		{"syscall.Syscall", "", true},
		{"internal/poll.(*FD).Read", "", true},
		{"runtime/pprof.profileWriter", "", true},
		{"mycorp.vendor.json.Parse", "", true},
		{"thirdparty_init", "/opt/thirdparty/libx.so", true},
		{"(garbage collector)", "", true},
		{"(program)", "", true},
		{"(idle)", "", true},
		{"listOnTimeout", "node:internal/timers", true},
		{"readFileSync", "node:fs", true},
		{"_PyEval_EvalFrameDefault", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", true},
		{"PyObject_Call", "python3", true},
		{"_find_and_load", "<frozen importlib._bootstrap>", true},
		{"System.Private.CoreLib!System.Threading.ThreadPoolWorkQueue.Dispatch()", "", true},
		{"Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol.ProcessRequests", "", true},
		{"coreclr!CallDescrWorkerInternal", "", true},
		{"main.main", "/app/server", false},
		{"handleRequest", "server.js", false},
		{"(anonymous)", "app.js", false},
		{"render", "views.py", false},
		{"MyShop!MyShop.Cart.Total()", "", false},
		{"com.example.app.MainActivity.onCreate", "", false},
		{"regexp.Compile", "", false},
		{"-[AppDelegate application:didFinishLaunching:]", "/private/var/containers/App.app/App", false},
		{"render", "/home/me/bin/app", false},
		{"runtimeStats", "", false},
	}
	for _, tt := range tests {
		if got := rules.IsSystem(tt.name, tt.module); got != tt.want {
			t.Errorf("IsSystem(%q, %q) = %v, want %v", tt.name, tt.module, got, tt.want)
		}
	}
}

func TestNewRejectsBadRegexp(t *testing.T) {
	if _, err := New([]string{"ok", "(unclosed"}); err == nil {
		t.Fatal("New accepted an invalid regular expression")
	}
}

func TestForFrames(t *testing.T) {
	rules, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := tree.NewFrames()
	user, sys := f.Intern("main.main", "/app"), f.Intern("runtime.main", "/app")
	isSys := rules.ForFrames(f)
	if isSys(user) || !isSys(sys) {
		t.Errorf("ForFrames: main.main %v, runtime.main %v", isSys(user), isSys(sys))
	}
}
