package realbuild

// The programs' own sources as a reference: a package's functions by
// pprof's names, and which of them a release changed.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ModuleDir is the directory of the module cache holding the version of
// module that the module in dir requires (go list -m).
func ModuleDir(t testing.TB, dir, module string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go list -m %s in %s: %v %s", module, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Functions lists the functions of a Go package directory (the files this
// platform builds) by the names
// pprof gives them (path.F, path.T.M, path.(*T).M, path.init.N in order),
// each with its declaration printed without comments, so that two
// releases of a package compare function by function.
func Functions(dir, importPath string) (map[string]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	funcs := map[string]string{}
	inits := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		// The files of this platform's build only: other platforms' files
		// declare the same functions again.
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			fn := importPath + "." + funcName(fd)
			if fd.Recv == nil && fd.Name.Name == "init" {
				inits++
				fn = fmt.Sprintf("%s.init.%d", importPath, inits-1)
			}
			fd.Doc = nil
			var b bytes.Buffer
			if err := printer.Fprint(&b, token.NewFileSet(), fd); err != nil {
				return nil, err
			}
			funcs[fn] = b.String()
		}
	}
	return funcs, nil
}

// funcName is a declaration's name as the Go runtime spells it.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	ptr := false
	if s, ok := typ.(*ast.StarExpr); ok {
		ptr, typ = true, s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	recv := fmt.Sprint(typ)
	if id, ok := typ.(*ast.Ident); ok {
		recv = id.Name
	}
	if ptr {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// Changed lists the functions that differ between two releases of a
// package, as Functions names them: changed, added or removed.
func Changed(before, after map[string]string) map[string]bool {
	changed := map[string]bool{}
	for fn, src := range after {
		if before[fn] != src {
			changed[fn] = true
		}
	}
	for fn := range before {
		if _, ok := after[fn]; !ok {
			changed[fn] = true
		}
	}
	return changed
}

// In says whether a function of a profile is one of funcs or a closure of
// one (F.func1, F.func1.2, F.gowrap1).
func In(funcs map[string]bool, function string) bool {
	for fn := range funcs {
		if function == fn || strings.HasPrefix(function, fn+".func") || strings.HasPrefix(function, fn+".gowrap") {
			return true
		}
	}
	return false
}
