package changes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// FromGitDiff derives the changes between two revisions of the Go sources in
// the git repository at repoDir (any directory inside the work tree):
//
//   - changed line ranges of every *.go file (git diff -U0 from to, renames
//     seen as delete + add, since a move changes the import path) are
//     mapped, with go/parser, to the functions and methods whose
//     declaration (from the func keyword to the closing brace; doc
//     comments excluded) they touch, on the old side and on the new side;
//   - a touched function that exists in both revisions is modified, one
//     only in `to` is added, one only in `from` is removed.
//
// Names are those Go profiles give frames: "path/pkg.Func",
// "path/pkg.(*Type).Method", "path/pkg.Type.Method", "path/pkg.Func[...]"
// for generic code, "main.Func" in package main and "path/pkg_test.Func" in
// external test packages. The import path comes from the nearest go.mod
// (at that revision) plus the directory, with dots in its last element
// escaped as %2e the way the Go linker does. Closures are attributed to the
// function that encloses them (their frames are "pkg.Func.func1"); init
// functions are left out because their frame names (pkg.init.0, ...)
// depend on the order of every file of the package.
//
// A file that does not parse, a Go file without a go.mod above it and an
// unknown revision are errors.
func FromGitDiff(repoDir, from, to string) (Changes, error) {
	for _, rev := range []string{from, to} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return Changes{}, fmt.Errorf("changes: bad revision %q", rev)
		}
	}
	g := &gitRepo{dir: repoDir, modules: map[string]string{}}
	root, err := g.run("rev-parse", "--show-toplevel")
	if err != nil {
		return Changes{}, err
	}
	g.dir = strings.TrimSpace(string(root))
	for _, rev := range []string{from, to} {
		if _, err := g.run("rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
			return Changes{}, fmt.Errorf("changes: unknown revision %q", rev)
		}
	}
	diff, err := g.run("-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff",
		"--no-renames", "-U0", from, to, "--", "*.go")
	if err != nil {
		return Changes{}, err
	}
	files, err := parseDiff(diff)
	if err != nil {
		return Changes{}, err
	}

	before, after := map[string]bool{}, map[string]bool{} // every function of the diffed files
	touched := map[string]bool{}
	for _, f := range files {
		for _, side := range []struct {
			rev, path string
			lines     []lineRange
			all       map[string]bool
		}{{from, f.oldPath, f.oldLines, before}, {to, f.newPath, f.newLines, after}} {
			if side.path == "" {
				continue // file absent on this side
			}
			funcs, err := g.functions(side.rev, side.path)
			if err != nil {
				return Changes{}, err
			}
			for _, fn := range funcs {
				side.all[fn.name] = true
				if slices.ContainsFunc(side.lines, fn.lines.overlaps) {
					touched[fn.name] = true
				}
			}
		}
	}

	var c Changes
	for name := range touched {
		switch {
		case before[name] && after[name]:
			c.Modified = append(c.Modified, name)
		case after[name]:
			c.Added = append(c.Added, name)
		default:
			c.Removed = append(c.Removed, name)
		}
	}
	c.sort()
	return c, nil
}

type gitRepo struct {
	dir     string
	modules map[string]string // "rev:dir" → import path, see importPath
}

func (g *gitRepo) run(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", g.dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("changes: git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// show returns a file at a revision, or ok == false if it does not exist.
func (g *gitRepo) show(rev, file string) (data []byte, ok bool, err error) {
	if _, err := g.run("cat-file", "-e", rev+":"+file); err != nil {
		return nil, false, nil
	}
	data, err = g.run("cat-file", "blob", rev+":"+file)
	return data, err == nil, err
}

// importPath is the import path of the package in dir at rev, from the
// nearest go.mod in dir or above.
func (g *gitRepo) importPath(rev, dir string) (string, error) {
	key := rev + ":" + dir
	if p, ok := g.modules[key]; ok {
		return p, nil
	}
	data, ok, err := g.show(rev, path.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	var p string
	switch {
	case ok:
		p = modfile.ModulePath(data)
		if p == "" {
			return "", fmt.Errorf("changes: %s:%s has no module line", rev, path.Join(dir, "go.mod"))
		}
	case dir == ".":
		return "", fmt.Errorf("changes: no go.mod at %s in the repository", rev)
	default:
		parent, err := g.importPath(rev, path.Dir(dir))
		if err != nil {
			return "", err
		}
		p = parent + "/" + path.Base(dir)
	}
	g.modules[key] = p
	return p, nil
}

type lineRange struct{ first, last int } // inclusive, 1-based

func (r lineRange) overlaps(o lineRange) bool {
	return r.first <= o.last && o.first <= r.last
}

type fileDiff struct {
	oldPath, newPath   string // "" for /dev/null
	oldLines, newLines []lineRange
}

// parseDiff reads `git diff -U0` output: file headers and hunk headers are
// all it needs, the changed lines themselves are skipped.
func parseDiff(diff []byte) ([]fileDiff, error) {
	var files []fileDiff
	sc := bufio.NewScanner(bytes.NewReader(diff))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files = append(files, fileDiff{})
		case len(files) == 0:
			continue
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
			p, err := diffPath(line[4:])
			if err != nil {
				return nil, fmt.Errorf("changes: git diff line %d: %w", n, err)
			}
			if line[0] == '-' {
				files[len(files)-1].oldPath = p
			} else {
				files[len(files)-1].newPath = p
			}
		case strings.HasPrefix(line, "@@ "):
			old, cur, err := parseHunk(line)
			if err != nil {
				return nil, fmt.Errorf("changes: git diff line %d: %w", n, err)
			}
			f := &files[len(files)-1]
			if old.last >= old.first {
				f.oldLines = append(f.oldLines, old)
			}
			if cur.last >= cur.first {
				f.newLines = append(f.newLines, cur)
			}
		}
	}
	return files, sc.Err()
}

// diffPath decodes "a/path", "b/path", a C-quoted "\"a/p\\th\"" or
// /dev/null ("").
func diffPath(s string) (string, error) {
	s = strings.TrimRight(s, "\t") // git appends a tab to names with spaces
	if s == "/dev/null" {
		return "", nil
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", fmt.Errorf("bad quoted path %s", s)
		}
		s = u
	}
	if len(s) < 2 || (s[:2] != "a/" && s[:2] != "b/") {
		return "", fmt.Errorf("unexpected path %q", s)
	}
	return s[2:], nil
}

// parseHunk reads "@@ -l[,n] +l[,n] @@ ...": the old and new line ranges
// (empty when n == 0).
func parseHunk(line string) (old, cur lineRange, err error) {
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[3] != "@@" || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return old, cur, fmt.Errorf("bad hunk header %q", line)
	}
	if old, err = parseRange(fields[1][1:]); err != nil {
		return old, cur, err
	}
	cur, err = parseRange(fields[2][1:])
	return old, cur, err
}

func parseRange(s string) (lineRange, error) {
	start, count, hasCount := strings.Cut(s, ",")
	first, err := strconv.Atoi(start)
	n := 1
	if err == nil && hasCount {
		n, err = strconv.Atoi(count)
	}
	if err != nil || first < 0 || n < 0 {
		return lineRange{}, errors.New("bad hunk range " + s)
	}
	return lineRange{first, first + n - 1}, nil
}
