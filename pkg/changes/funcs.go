package changes

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

type goFunc struct {
	name  string // frame name
	lines lineRange
}

// functions lists the functions declared in a Go file at a revision.
func (g *gitRepo) functions(rev, file string) ([]goFunc, error) {
	src, ok, err := g.show(rev, file)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("changes: %s not found at %s", file, rev)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("changes: at %s: %w", rev, err)
	}
	pkg := "main"
	if f.Name.Name != "main" {
		dir, err := g.importPath(rev, path.Dir(file))
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			dir += "_test" // external test package
		}
		pkg = pathToPrefix(dir)
	}
	var funcs []goFunc
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name == "_" || (fd.Recv == nil && fd.Name.Name == "init") {
			continue
		}
		funcs = append(funcs, goFunc{
			name: pkg + "." + funcName(fd),
			lines: lineRange{
				first: fset.Position(fd.Pos()).Line,
				last:  fset.Position(fd.End()).Line,
			},
		})
	}
	return funcs, nil
}

// funcName is the part of a frame name after "pkg.": Func, Func[...],
// (*T).M, T.M, (*T[...]).M.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		if fd.Type.TypeParams != nil {
			return fd.Name.Name + "[...]"
		}
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	star := false
	if p, ok := typ.(*ast.StarExpr); ok {
		star, typ = true, p.X
	}
	if p, ok := typ.(*ast.ParenExpr); ok { // func (r (T)) M()
		typ = p.X
	}
	var recv string
	switch t := typ.(type) {
	case *ast.Ident:
		recv = t.Name
	case *ast.IndexExpr:
		recv = fmt.Sprint(t.X) + "[...]"
	case *ast.IndexListExpr:
		recv = fmt.Sprint(t.X) + "[...]"
	default:
		recv = fmt.Sprint(typ)
	}
	if star {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// pathToPrefix escapes an import path the way the Go linker does for
// symbol names: dots in the last element, '%', '"', spaces, control and
// non-ASCII bytes become %xx, so that "gopkg.in/yaml.v3" appears in
// profiles as "gopkg.in/yaml%2ev3".
func pathToPrefix(s string) string {
	slash := strings.LastIndex(s, "/")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || (c == '.' && i > slash) || c == '%' || c == '"' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02x", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
