package profile

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// sourceIdentity returns what stands for a script or source file across
// builds and installs (docs/SCHEMA.md, "Frame identity"), and whether that
// identity is settled by the path alone. A path is settled when a package
// manager's or runtime's directory anchors it (the part below the last
// node_modules/, site-packages/, dist-packages/, lib/pythonX.Y/, a gem's
// gems/name-1.2.3/ as name/), when it is relative (a source map's
// webpack://app/./src/x.js, a file ingest made relative to the app's root:
// Profile.Identify, or a script run by a relative path) or names a jar.
// An absolute path with no anchor is the app's own file at a root that only
// the whole profile tells: its identity falls back to its file name, which
// is what runs stored before Identify existed were compared by (a
// Python package's __init__.py keeps its directory, shop/__init__.py). A
// bundler's content hash (main-3F2A9C1B.js, main.81be07c2.js) is no part
// of a bundle's name.
func sourceIdentity(module string) (string, bool) {
	p, abs := sourcePath(module)
	dir, base := path.Split(p)
	base = unhashed(base)
	if strings.HasSuffix(strings.ToLower(base), ".jar") {
		return versionless(strings.TrimSuffix(base, base[len(base)-4:]), '-') + base[len(base)-4:], true
	}
	if rest, ok := anchored(dir); ok {
		return rest + base, true
	}
	if !abs {
		return dir + base, true
	}
	if base == "__init__.py" || base == "__main__.py" { // every package names it alike: keep the package
		return path.Base(dir) + "/" + base, false
	}
	return base, false
}

// sourcePath is module as a slash-separated path, and whether it is
// absolute: a URL's path without its origin, query and fragment (an
// http(s) or file URL is absolute; a source map's webpack://app/./x.js is
// relative to its namespace, app), Windows separators as slashes, no
// "./" or "../" of a relative path left.
func sourcePath(module string) (string, bool) {
	p := strings.ReplaceAll(module, `\`, "/")
	if scheme, rest, ok := strings.Cut(p, "://"); ok && scheme != "" && !strings.Contains(scheme, "/") {
		rest, _, _ = strings.Cut(rest, "?")
		rest, _, _ = strings.Cut(rest, "#")
		_, rest, _ = strings.Cut(rest, "/") // the host, or a source map's namespace
		switch strings.ToLower(scheme) {
		case "http", "https", "file":
			return "/" + rest, true
		}
		p = rest
	}
	if len(p) > 1 && p[1] == ':' { // C:/build/app.js
		return p[2:], true
	}
	if strings.HasPrefix(p, "/") {
		return p, true
	}
	p = path.Clean("/" + p)[1:]
	return p, false
}

// anchored returns the part of the directory dir (ending in "/") below a
// package manager's or runtime's directory, and whether there is one:
// npm, yarn and pnpm install a package under node_modules/name/ (pnpm's
// node_modules/.pnpm/name@1.2.3/node_modules/name/, whose last
// node_modules/ is the one), pip under site-packages/ or Debian's
// dist-packages/, CPython's standard library is lib/pythonX.Y/, a gem
// gems/name-1.2.3/ (name/ without its version).
func anchored(dir string) (string, bool) {
	dir = "/" + dir
	best, rest := -1, ""
	for _, a := range []string{"/node_modules/", "/site-packages/", "/dist-packages/"} {
		if i := strings.LastIndex(dir, a); i > best {
			best, rest = i, dir[i+len(a):]
		}
	}
	for i := len(dir) - 1; i > best; i-- {
		if dir[i] != '/' {
			continue
		}
		seg := dir[i+1:]
		seg = seg[:strings.IndexByte(seg, '/')+1]
		before := dir[:i+1]
		if v, ok := strings.CutPrefix(seg, "python"); ok && strings.HasSuffix(before, "/lib/") && isVersion(strings.TrimSuffix(v, "/")) {
			best, rest = i, dir[i+1+len(seg):]
			break
		}
		if strings.HasSuffix(before, "/gems/") {
			if j := strings.LastIndexByte(seg, '-'); j > 0 && isVersion(seg[j+1:len(seg)-1]) {
				best, rest = i, seg[:j]+"/"+dir[i+1+len(seg):]
				break
			}
		}
	}
	return rest, best >= 0
}

// unhashed cuts a bundler's content hash from a script's file name:
// esbuild's and Vite's name-HASH.js, webpack's name.HASH.js, where HASH is
// 8 to 64 letters, digits, "_" or "-" with a digit in it or both cases of
// letters (a word is no hash: main-polyfill.js stays), or esbuild's 8
// upper-case base32 letters, which a fifth of its hashes are without a
// digit (main-PZBEMRTZ.js).
func unhashed(base string) string {
	ext := path.Ext(base)
	switch strings.ToLower(ext) {
	case ".js", ".mjs", ".cjs", ".css", ".wasm":
	default:
		return base
	}
	stem := base[:len(base)-len(ext)]
	i := strings.LastIndexAny(stem, "-.")
	if i <= 0 || !isHash(stem[i+1:]) {
		return base
	}
	return stem[:i] + ext
}

func isHash(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	var digit, upper, lower bool
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c != '_' && c != '-':
			return false
		}
	}
	return digit || upper && lower || upper && !lower && len(s) == 8 && !strings.ContainsAny(s, "_-")
}

// Identify settles what only the whole profile tells about its frames'
// identities, and is what every reader of runs does last (ingest.Check):
//   - the app's own source files (absolute paths no package directory
//     anchors, sourceIdentity) become relative to the app's root, in
//     Module (File keeps the path whole): the directory that holds the
//     app's node_modules, else the deepest directory that holds all of the
//     app's files (per origin, for URLs), so that one file at two checkout
//     roots is one and two files of one name at one root are two;
//   - executables other than the program profiled (the one under the most
//     samples) get the module "[name]", their file name: two programs'
//     main are two functions, while the program stays one at any path and
//     name (ModuleIdentity's "").
//
// Frames that become one identity are merged, as Intern merges them.
func (p *Profile) Identify() {
	rewrite := make([]string, len(p.Frames))
	changed := p.rootSources(rewrite)
	changed = p.otherPrograms(rewrite) || changed
	if !changed {
		return
	}
	old := p.Frames
	p.Frames, p.index = nil, nil
	ids := make([]uint32, len(old))
	for i, f := range old {
		if m := rewrite[i]; m != "" {
			if f.File == "" && !strings.HasPrefix(m, "[") {
				f.File = f.Module
			}
			f.Module = m
		}
		ids[i] = p.Intern(f)
	}
	p.RemapFrames(ids)
}

// rootSources writes into rewrite the relative module of each frame in an
// app's own source file (Identify) and reports whether there was one.
func (p *Profile) rootSources(rewrite []string) bool {
	type file struct {
		origin, path string
		frames       []int
	}
	files := map[string]*file{}
	roots := map[string]string{} // per origin: the directory that holds the app's node_modules
	for i, f := range p.Frames {
		if f.Module == "" || isMarker(f.Module) || !isScript(strings.ToLower(moduleBase(f.Module))) {
			continue
		}
		pth, abs := sourcePath(f.Module)
		if _, settled := sourceIdentity(f.Module); settled {
			if j := strings.Index(pth, "/node_modules/"); abs && j >= 0 {
				o := origin(f.Module)
				if cur, ok := roots[o]; !ok || j+1 < len(cur) {
					roots[o] = pth[:j+1]
				}
			}
			continue
		}
		fl := files[f.Module]
		if fl == nil {
			fl = &file{origin: origin(f.Module), path: pth}
			files[f.Module] = fl
		}
		fl.frames = append(fl.frames, i)
	}
	if len(files) == 0 {
		return false
	}
	common := map[string]string{}
	for _, fl := range files {
		dir := fl.path[:strings.LastIndexByte(fl.path, '/')+1]
		if cur, ok := common[fl.origin]; ok {
			dir = commonDir(cur, dir)
		}
		common[fl.origin] = dir
	}
	for _, fl := range files {
		root, ok := roots[fl.origin]
		if !ok || !strings.HasPrefix(fl.path, root) {
			root = common[fl.origin]
		}
		for _, i := range fl.frames {
			rewrite[i] = strings.TrimPrefix(fl.path, root)
		}
	}
	return true
}

// origin is a URL's scheme and host ("" for a file path): the files of
// two servers have roots of their own.
func origin(module string) string {
	scheme, rest, ok := strings.Cut(module, "://")
	if !ok || strings.EqualFold(scheme, "file") {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host
}

// commonDir is the longest directory ("/"-terminated) that both a and b
// are in.
func commonDir(a, b string) string {
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			n = i + 1
		}
	}
	return a[:n]
}

// otherPrograms writes into rewrite "[name]" for each frame of an
// executable other than the program profiled (Identify) and reports
// whether there was one.
func (p *Profile) otherPrograms(rewrite []string) bool {
	exe := make([]string, len(p.Frames)) // each frame's executable's file name, "" if none
	names := map[string]bool{}
	for i, f := range p.Frames {
		if _, abs := sourcePath(f.Module); abs && !isMarker(f.Module) && ModuleIdentity(f.Module) == "" {
			exe[i] = moduleBase(f.Module)
			names[exe[i]] = true
		}
	}
	if len(names) < 2 {
		return false
	}
	under := map[string]int64{}
	seen := map[string]bool{}
	for _, s := range p.Samples {
		clear(seen)
		for _, id := range s.Stack {
			if e := exe[id]; e != "" && !seen[e] {
				seen[e] = true
				under[e] += s.Value
			}
		}
	}
	program := ""
	for _, e := range slices.Sorted(maps.Keys(names)) {
		if program == "" || under[e] > under[program] {
			program = e
		}
	}
	for i, e := range exe {
		if e != "" && e != program {
			rewrite[i] = "[" + e + "]"
		}
	}
	return true
}
