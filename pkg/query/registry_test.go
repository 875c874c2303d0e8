package query

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// typeConsts returns the Go names of the query type constants (model.go).
func typeConsts(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "model.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Type" {
				for _, n := range v.Names {
					names[n.Name] = true
				}
			}
		}
	}
	if len(names) != len(Types()) {
		t.Fatalf("model.go declares %d query type constants, the registry has %d rows", len(names), len(Types()))
	}
	return names
}

// Every decision on a query type reads the registry: no Go file but
// registry.go (tests aside) compares a query type or switches on one. Adding a
// type is then adding a row (docs/ARCHITECTURE.md).
func TestNoSwitchOnQueryType(t *testing.T) {
	consts := typeConsts(t)
	// isType reports whether e names a query type: a constant, or a
	// model's QueryType field.
	isType := func(e ast.Expr, inQuery bool) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return inQuery && consts[x.Name] || x.Name == "QueryType"
		case *ast.SelectorExpr:
			if p, ok := x.X.(*ast.Ident); ok && p.Name == "query" && consts[x.Sel.Name] {
				return true
			}
			return x.Sel.Name == "QueryType"
		case *ast.CallExpr: // query.Type(s)
			if s, ok := x.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Type" {
				return true
			}
		}
		return false
	}
	var found []string
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"pkg", "cmd", "internal", "provisioning"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join(root, "pkg", "query", "registry.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			inQuery := f.Name.Name == "query"
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BinaryExpr:
					if (x.Op == token.EQL || x.Op == token.NEQ) && (isType(x.X, inQuery) || isType(x.Y, inQuery)) && !isEmpty(x.X) && !isEmpty(x.Y) {
						found = append(found, fset.Position(x.Pos()).String())
					}
				case *ast.SwitchStmt:
					if x.Tag != nil && isType(x.Tag, inQuery) {
						found = append(found, fset.Position(x.Pos()).String())
					}
				case *ast.CaseClause:
					for _, e := range x.List {
						if isType(e, inQuery) {
							found = append(found, fset.Position(e.Pos()).String())
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range found {
		t.Errorf("%s: decides on a query type outside the registry", f)
	}
}

// isEmpty reports whether e is "" (a missing type, not a type).
func isEmpty(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Value == `""`
}
