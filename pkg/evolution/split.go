package evolution

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Split places a frame in the package / class / method hierarchy of the
// evolution matrix, by the naming convention of the language that produced
// it. method is always the frame itself (frames are what profiles and
// change files name); class and pkg are "" when the convention has none.
// A class name includes its package, so that names are unique:
//
//	Go       compress/flate.(*compressor).deflate  compress/flate, compress/flate.compressor
//	         main.main                             main, -
//	         pkg.F.func1, pkg.(*T).M-fm            like pkg.F, pkg.(*T).M (closures, wrappers)
//	JVM      com.foo.Bar$Inner.run                 com.foo, com.foo.Bar$Inner
//	         Bar.lambda$x$0                        -, Bar
//	         java/lang/Thread.run (async-profiler) java/lang, java/lang/Thread
//	ObjC     -[NSString(Extra) foo:]               -, NSString
//	Swift    Module.Class.method(_:)               Module, Module.Class
//	         closure #1 in Module.Class.method()   Module, Module.Class
//	C++      ns::Class::method(int) const          ns, ns::Class
//	         std::vector<int>::push_back(int&&)    std, std::vector<int>
//	         ns::detail::helper(int)               ns::detail, -
//	JS/Py    Class.method (file.js:10)             file.js, file.js:Class
//	         func (module.py:12), module.py:func   module.py, -
//
// The first segment starting with an upper-case letter (or holding a '$')
// is taken as the class in dotted names, since packages are lower case by
// convention in Java, Kotlin and Go; without one the first segment is the
// package and the rest before the method the class. A C++ scope is a class
// when it has template arguments, starts upper-case or names a constructor;
// other scopes are namespaces and form the package.
//
// Unknown shapes, plain C functions, compiler-local C symbols (foo.cold,
// foo.isra.0), addresses and mangled Swift ($s...) give ("", "", frame).
func Split(frame string) (pkg, class, method string) {
	if p, ok := splits.get(frame); ok {
		return p.pkg, p.class, frame
	}
	// A title (tree.Frames.Title) places its name; its module, where the
	// name says no package, is the package, as a script's file is.
	name, module := frame, ""
	if i := strings.LastIndex(frame, " ("); i > 0 && strings.HasSuffix(frame, ")") && !strings.ContainsAny(frame[i+2:len(frame)-1], " ():") {
		name, module = frame[:i], frame[i+2:len(frame)-1]
	}
	for _, c := range conventions {
		if m := c.match.FindStringSubmatch(name); m != nil {
			pkg, class = c.split(name, m)
			break
		}
	}
	if pkg == "" && module != "" {
		pkg = module
		if class != "" {
			class = module + ":" + class
		}
	}
	splits.put(frame, placed{pkg, class})
	return pkg, class, frame
}

// placed is a frame's package and class.
type placed struct{ pkg, class string }

// splits remembers Split's answers: every flame graph's package field and
// every evolution matrix split the same few thousand frames again, at a
// few regular expressions each (13 ms of a 20k-node diff). It holds at
// most splitMemo frames and starts over when full.
var splits = splitCache{m: map[string]placed{}}

const splitMemo = 1 << 16

type splitCache struct {
	mu sync.RWMutex
	m  map[string]placed
}

func (c *splitCache) get(frame string) (placed, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.m[frame]
	return p, ok
}

func (c *splitCache) put(frame string, p placed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= splitMemo {
		c.m = map[string]placed{}
	}
	c.m[strings.Clone(frame)] = p // not the buffer frame may be cut from
}

// conventions are tried in order; the first whose pattern matches decides.
// The order matters: Objective-C selectors and script locations contain
// ':' that C++ must not see, C++ and Swift may contain dots that the
// dotted rule would misread, and the Go and JVM path forms must come before
// the generic dotted form.
var conventions = []struct {
	name  string
	match *regexp.Regexp
	split func(frame string, groups []string) (pkg, class string)
}{
	{"objc", regexp.MustCompile(`^[-+]\[([^\s(\]]+)(?:\([^)]*\))? [^\]]+\]$`),
		func(_ string, m []string) (string, string) { return "", m[1] }},
	{"swift-mangled", regexp.MustCompile(`^_?\$[sS]|^_T0`), unknown},
	{"located", regexp.MustCompile(`^(.*\S) \(([^()]*?[^():]):\d+(?::\d+)?\)$`),
		func(_ string, m []string) (string, string) { return m[2], scriptClass(m[2], m[1]) }},
	{"script", regexp.MustCompile(`^([^\s:]+\.(?:py|js|mjs|cjs|jsx|ts|tsx|rb|php)):([^:\s][^:]*)(?::\d+)?$`),
		func(_ string, m []string) (string, string) { return m[1], scriptClass(m[1], m[2]) }},
	{"c-local", regexp.MustCompile(`^[A-Za-z_]\w*(?:\.(?:cold|hot|part|isra|constprop|lto_priv|llvm|localalias|\d+))+$`), unknown},
	{"c++", regexp.MustCompile(`::`), cppSplit},
	{"swift", regexp.MustCompile(`^(?:(?:implicit )?closure #\d+ in |specialized |partial apply for |merged |static |@objc )*` +
		`([A-Za-z_]\w*(?:\.[A-Za-z_][\w<>, ]*)*)\.[\w<>, ]+\((?:[\w ]*:.*)?\)`), swiftSplit},
	{"jvm-path", regexp.MustCompile(`^((?:[\w$]+/)*[\w$]+)/([A-Z][\w$]*|[\w]+\$[\w$]*)\.[\w$<>]+$`),
		func(_ string, m []string) (string, string) { return m[1], m[1] + "/" + m[2] }},
	{"go", regexp.MustCompile(`^[^\s/(][^\s(]*/[^\s/]*\.|\.\(\*|\[\.\.\.\]|\.(?:func|gowrap|deferwrap)\d+(?:\.\d+)*$|-fm$|-range\d+$`), goSplit},
	{"dotted", regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$<][\w$<>]*)+$`), dottedSplit},
}

func unknown(string, []string) (string, string) { return "", "" }

// scriptClass is "file:Class" for a "Class.method" function in file.
func scriptClass(file, fn string) string {
	if i := strings.LastIndexByte(fn, '.'); i > 0 {
		return file + ":" + fn[:i]
	}
	return ""
}

var goSuffix = regexp.MustCompile(`(?:\.(?:func|gowrap|deferwrap)\d+(?:\.\d+)*|-fm|-range\d+)+$`)

// goSplit: the package is the import path up to the first dot after its
// last slash (the linker escapes other dots in that element as %2e); then
// an optional receiver type "(*T)." or "T." before the function name.
func goSplit(frame string, _ []string) (string, string) {
	s := goSuffix.ReplaceAllString(frame, "")
	dot := strings.IndexByte(s[strings.LastIndexByte(s, '/')+1:], '.')
	if dot < 0 {
		return "", ""
	}
	dot += strings.LastIndexByte(s, '/') + 1
	pkg, rest := s[:dot], s[dot+1:]
	if strings.HasPrefix(rest, "(*") {
		if end := strings.Index(rest, ")."); end > 0 {
			return pkg, pkg + "." + rest[2:end]
		}
		return pkg, ""
	}
	if i := indexTop(rest, "."); i > 0 {
		return pkg, pkg + "." + rest[:i]
	}
	return pkg, ""
}

func dottedSplit(frame string, _ []string) (string, string) {
	segs := splitTop(frame, ".")
	scopes := segs[:len(segs)-1]
	for i, s := range scopes {
		if startsUpper(s) || strings.ContainsRune(s, '$') {
			return strings.Join(scopes[:i], "."), strings.Join(scopes, ".")
		}
	}
	if len(scopes) == 1 {
		return scopes[0], ""
	}
	return scopes[0], strings.Join(scopes, ".")
}

// swiftSplit: Module.Type...method(labels): the first segment is the module.
func swiftSplit(_ string, m []string) (string, string) {
	scopes := splitTop(m[1], ".")
	if len(scopes) == 1 {
		return scopes[0], ""
	}
	return scopes[0], m[1]
}

// cppSplit strips the argument list and return type, splits the qualified
// name at top-level "::", and decides whether the innermost scope is a
// class or a namespace.
func cppSplit(frame string, _ []string) (string, string) {
	parts := splitTop(cppName(frame), "::")
	fn, scopes := parts[len(parts)-1], parts[:len(parts)-1]
	// A local class or lambda belongs to the function that declares it.
	for i, s := range scopes {
		if open := strings.IndexByte(s, '('); open > 0 && strings.HasSuffix(s, ")") {
			fn, scopes = s[:open], scopes[:i]
			break
		}
	}
	if len(scopes) == 0 {
		return "", ""
	}
	last := scopes[len(scopes)-1]
	base, _, templated := strings.Cut(last, "<")
	if templated || startsUpper(base) || fn == base || fn == "~"+base {
		return strings.Join(scopes[:len(scopes)-1], "::"), strings.Join(scopes, "::")
	}
	return strings.Join(scopes, "::"), ""
}

// cppName reduces "ret ns::C<T>::f(args) const" to "ns::C<T>::f".
func cppName(s string) string {
	s = strings.TrimSuffix(s, " [clone .cold]")
	for _, q := range []string{" const", " volatile", " &&", " &", " noexcept"} {
		s = strings.TrimSuffix(s, q)
	}
	if strings.HasSuffix(s, ")") {
		if i := lastIndexTop(s, "("); i > 0 {
			s = s[:i]
		}
	}
	if i := lastIndexTop(s, " "); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

// eachTop calls yield with every index of s outside brackets ((), [], {},
// <>), skipping the symbol of a C++ operator name ("operator<<",
// "operator()"), until yield returns false.
func eachTop(s string, yield func(i int) bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "operator") {
			j := i + len("operator")
			if strings.HasPrefix(s[j:], "()") || strings.HasPrefix(s[j:], "[]") {
				j += 2
			}
			for j < len(s) && strings.IndexByte("<>=!+-*/%^&|~,", s[j]) >= 0 {
				j++
			}
			if strings.HasPrefix(s[j:], " <") { // "operator<< <char>": template arguments follow
				j++
			}
			i = j - 1
			continue
		}
		switch s[i] {
		case '(', '[', '{', '<':
			if depth == 0 && !yield(i) {
				return
			}
			depth++
			continue
		case ')', ']', '}', '>':
			depth--
			if depth < 0 {
				depth = 0
			}
			continue
		}
		if depth == 0 && !yield(i) {
			return
		}
	}
}

// splitTop splits s at top-level occurrences of sep.
func splitTop(s, sep string) []string {
	var parts []string
	start := 0
	eachTop(s, func(i int) bool {
		if i >= start && strings.HasPrefix(s[i:], sep) {
			parts = append(parts, s[start:i])
			start = i + len(sep)
		}
		return true
	})
	return append(parts, s[start:])
}

// indexTop is the first top-level index of sep in s, or -1.
func indexTop(s, sep string) int {
	at := -1
	eachTop(s, func(i int) bool {
		if strings.HasPrefix(s[i:], sep) {
			at = i
			return false
		}
		return true
	})
	return at
}

// lastIndexTop is the last top-level index of sep in s, or -1.
func lastIndexTop(s, sep string) int {
	at := -1
	eachTop(s, func(i int) bool {
		if strings.HasPrefix(s[i:], sep) {
			at = i
		}
		return true
	})
	return at
}
