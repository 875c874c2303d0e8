package evolution

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		lang, frame, pkg, class string
	}{
		// Go
		{"go", "compress/flate.(*compressor).deflate", "compress/flate", "compress/flate.compressor"},
		{"go", "compress/flate.byLiteral.Less", "compress/flate", "compress/flate.byLiteral"},
		{"go", "net/http.HandlerFunc.ServeHTTP", "net/http", "net/http.HandlerFunc"},
		{"go", "net/http.Get", "net/http", ""},
		{"go", "main.main", "main", ""},
		{"go", "runtime.mallocgc", "runtime", ""},
		{"go", "net/http.Get (libfoo.so)", "net/http", ""}, // titles (tree.Frames.Title): the name placed, the module its package where the name says none
		{"js", "stringify (qs/lib/stringify.js)", "qs/lib/stringify.js", ""},
		{"js", "Parser.parse (lib/parse.js)", "lib/parse.js", "lib/parse.js:Parser"},
		{"go", "sync.(*Mutex).Lock", "sync", "sync.Mutex"},
		{"go", "time.Time.Add", "time", "time.Time"},
		{"go", "main.myType.method", "main", "main.myType"},
		{"go", "runtime.gcBgMarkWorker.func1", "runtime", ""},
		{"go", "github.com/a/b.(*T).Run.func2.1", "github.com/a/b", "github.com/a/b.T"},
		{"go", "github.com/a/b.(*T).Run-fm", "github.com/a/b", "github.com/a/b.T"},
		{"go", "github.com/a/b.All-range1", "github.com/a/b", ""},
		{"go", "gopkg.in/yaml%2ev3.(*parser).parse", "gopkg.in/yaml%2ev3", "gopkg.in/yaml%2ev3.parser"},
		{"go", "example.com/m.Map[...]", "example.com/m", ""},
		{"go", "example.com/m.(*List[...]).Push", "example.com/m", "example.com/m.List[...]"},
		{"go", "slices.Sort[...]", "slices", ""},
		// Java / Kotlin
		{"java", "com.foo.Bar.baz", "com.foo", "com.foo.Bar"},
		{"java", "com.foo.Bar$Inner.run", "com.foo", "com.foo.Bar$Inner"},
		{"java", "Bar.lambda$x$0", "", "Bar"},
		{"java", "java.lang.Object.<init>", "java.lang", "java.lang.Object"},
		{"java", "java/lang/Thread.run", "java/lang", "java/lang/Thread"},
		{"java", "com/foo/Bar$Inner.run", "com/foo", "com/foo/Bar$Inner"},
		{"kotlin", "com.foo.AppKt.main", "com.foo", "com.foo.AppKt"},
		{"kotlin", "kotlinx.coroutines.DispatchedTask.run", "kotlinx.coroutines", "kotlinx.coroutines.DispatchedTask"},
		// Objective-C / Swift
		{"objc", "-[NSObject foo:]", "", "NSObject"},
		{"objc", "+[Cls bar]", "", "Cls"},
		{"objc", "-[NSString(Extra) trimmed:with:]", "", "NSString"},
		{"swift", "MyApp.ViewController.viewDidLoad()", "MyApp", "MyApp.ViewController"},
		{"swift", "Module.Class.method(_:)", "Module", "Module.Class"},
		{"swift", "Module.helper(x:y:)", "Module", ""},
		{"swift", "closure #1 in Module.Class.method(_:)", "Module", "Module.Class"},
		{"swift", "specialized Module.Box<A>.map<B>(_:)", "Module", "Module.Box<A>"},
		{"swift", "Module.Class.compute(x: Swift.Int) -> Swift.Int", "Module", "Module.Class"},
		{"swift", "$s5MyApp3FooC3baryyF", "", ""},
		{"swift", "_$s5MyApp3FooC3baryyF", "", ""},
		// C++
		{"c++", "ns::Class::method(int) const", "ns", "ns::Class"},
		{"c++", "std::vector<int, std::allocator<int> >::push_back(int&&)", "std", "std::vector<int, std::allocator<int> >"},
		{"c++", "ns::detail::helper(int)", "ns::detail", ""},
		{"c++", "Foo::bar()", "", "Foo"},
		{"c++", "std::sort<int*>(int*, int*)", "std", ""},
		{"c++", "void std::__introsort_loop<int*, long>(int*, int*, long)", "std", ""},
		{"c++", "a::b::Widget::Widget(int)", "a::b", "a::b::Widget"},
		{"c++", "a::b::widget::~widget()", "a::b", "a::b::widget"},
		{"c++", "ns::Cls::run()::{lambda(int)#1}::operator()(int) const", "ns", "ns::Cls"},
		{"c++", "(anonymous namespace)::Impl::go()", "(anonymous namespace)", "(anonymous namespace)::Impl"},
		{"c++", "std::operator<< <char>(std::ostream&, char const*)", "std", ""},
		{"c++", "Matrix::operator()(int, int)", "", "Matrix"},
		{"c++", "ns::Vec::operator<(ns::Vec const&) const", "ns", "ns::Vec"},
		// JavaScript
		{"js", "Parser.parse (app.js:10)", "app.js", "app.js:Parser"},
		{"js", "render (file:///srv/ui/main.js:12:7)", "file:///srv/ui/main.js", ""},
		{"js", "(anonymous) (lib/util.js:3)", "lib/util.js", ""},
		{"js", "Class.method", "", "Class"},
		{"js", "lib/util.js:helper", "lib/util.js", ""},
		// Python
		{"python", "myapp/models.py:save", "myapp/models.py", ""},
		{"python", "myapp/models.py:Model.save", "myapp/models.py", "myapp/models.py:Model"},
		{"python", "handle (server.py:12)", "server.py", ""},
		{"python", "Model.save (myapp/models.py:40)", "myapp/models.py", "myapp/models.py:Model"},
		{"python", "<module> (main.py:1)", "main.py", ""},
		// C and unknown shapes
		{"c", "malloc", "", ""},
		{"c", "do_syscall_64", "", ""},
		{"c", "memcpy.cold", "", ""},
		{"c", "foo.isra.0", "", ""},
		{"unknown", "[unknown]", "", ""},
		{"unknown", "0x7fff12345678", "", ""},
		{"unknown", "[libc.so.6]", "", ""},
		{"unknown", "", "", ""},
		{"unknown", "/usr/lib/libc.so.6", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.frame, func(t *testing.T) {
			for range 2 { // computed, then remembered
				pkg, class, method := Split(tt.frame)
				if pkg != tt.pkg || class != tt.class || method != tt.frame {
					t.Errorf("Split(%q) = (%q, %q, %q), want (%q, %q, %q)", tt.frame, pkg, class, method, tt.pkg, tt.class, tt.frame)
				}
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a::b<c>::d(e)", "-[A b]", "x (y:1)", "a/b.(*c).d", "operator<<", "f(", "::", "a.b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		pkg, class, method := Split(frame)
		if method != frame {
			t.Fatalf("method %q != frame %q", method, frame)
		}
		// A class is named inside its package.
		if pkg != "" && class != "" && !strings.HasPrefix(class, pkg) {
			t.Fatalf("Split(%q): class %q outside package %q", frame, class, pkg)
		}
	})
}

func BenchmarkSplit(b *testing.B) {
	frames := []string{
		"compress/flate.(*compressor).deflate", "com.foo.Bar$Inner.run", "ns::Class::method(int) const",
		"Module.Class.method(_:)", "Parser.parse (app.js:10)", "malloc",
	}
	for b.Loop() {
		for _, f := range frames {
			Split(f)
		}
	}
}
