package query

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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
		case *ast.CallExpr: // query.Type(s), or Type(s) inside the package
			switch f := x.Fun.(type) {
			case *ast.SelectorExpr:
				p, ok := f.X.(*ast.Ident)
				return ok && p.Name == "query" && f.Sel.Name == "Type"
			case *ast.Ident:
				return inQuery && f.Name == "Type"
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

// No TypeScript file but the query-type table (src/datasource/queryTypes.ts)
// compares a queryType or a query type's name, tests aside.
func TestNoSwitchOnQueryTypeInTypeScript(t *testing.T) {
	var found []string
	root := filepath.Join("..", "..")
	var names []string
	for _, s := range Types() {
		if s.Type != Runs { // also the panel's runs mode and the runs resource
			names = append(names, string(s.Type))
		}
	}
	quoted := `'(` + strings.Join(names, "|") + `)'`
	ts := regexp.MustCompile(`queryType\s*[!=]==|[!=]==\s*` + quoted + `|` + quoted + `\s*[!=]==|case\s+` + quoted)
	table := filepath.Join(root, "src", "datasource", "queryTypes.ts")
	err := filepath.WalkDir(filepath.Join(root, "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == table || !(strings.HasSuffix(path, ".ts") || strings.HasSuffix(path, ".tsx")) ||
			strings.HasSuffix(path, ".test.ts") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if ts.MatchString(line) {
				found = append(found, path+":"+strconv.Itoa(i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: decides on a query type outside the table", f)
	}
}

// tsRow is a row of the TypeScript query-type table.
type tsRow struct {
	Type               Type
	Head, Base, Builds string
	Tree, Flame        bool
	Fields             []string
}

// needName is a Need as the TypeScript table spells it.
var needName = map[Need]string{Unused: "unused", Optional: "optional", Required: "required"}

// readTSTable reads the JSON table of src/datasource/queryTypes.ts.
func readTSTable(t *testing.T) []tsRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "src", "datasource", "queryTypes.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	const start, end = "export const queryTypeTable = ", " as const;"
	i := strings.Index(src, start)
	j := strings.Index(src[max(i, 0):], end)
	if i < 0 || j < 0 {
		t.Fatalf("queryTypes.ts: no %q ... %q", start, end)
	}
	var rows []tsRow
	if err := json.Unmarshal([]byte(src[i+len(start):i+j]), &rows); err != nil {
		t.Fatalf("queryTypes.ts: the table is not JSON: %v", err)
	}
	return rows
}

// docsFields reads docs/QUERIES.md's table of the model's fields: for each
// field, the types that read it ("all": every type). A type followed by
// fields of the row in parentheses reads only those.
func docsFields(t *testing.T) map[string]map[Type]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "QUERIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`([A-Za-z]+)`")
	usedBy := regexp.MustCompile(`([a-z]+)(?: \(([^)]*)\))?`)
	text := string(b)
	const header = "| field | used by | rules |"
	i := strings.Index(text, header)
	if i < 0 {
		t.Fatalf("docs/QUERIES.md: no table with the header %q", header)
	}
	out := map[string]map[Type]bool{}
	for _, line := range strings.Split(text[i:], "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			break // the table's end
		}
		var fields []string
		for _, m := range names.FindAllStringSubmatch(cells[1], -1) {
			fields = append(fields, m[1])
		}
		for _, f := range fields {
			if out[f] == nil {
				out[f] = map[Type]bool{}
			}
		}
		for _, m := range usedBy.FindAllStringSubmatch(cells[2], -1) {
			typ := Type(m[1])
			if m[1] == "all" {
				for _, s := range Types() {
					for _, f := range fields {
						out[f][s.Type] = true
					}
				}
				continue
			}
			if _, ok := Lookup(typ); !ok {
				continue
			}
			only := fields
			var named []string
			for _, f := range fields {
				if strings.Contains(m[2], f) {
					named = append(named, f)
				}
			}
			if len(named) > 0 {
				only = named
			}
			for _, f := range only {
				out[f][typ] = true
			}
		}
	}
	return out
}

// modelFields are the JSON names of Model's fields.
func modelFields() []string {
	var out []string
	rt := reflect.TypeOf(Model{})
	for i := range rt.NumField() {
		if rt.Field(i).IsExported() {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
	}
	return out
}

// reads is what a type reads per the registry: its fields and selections.
func reads(s Spec) map[string]bool {
	out := map[string]bool{"queryType": true, "app": true, "profileType": true}
	for _, f := range s.Fields {
		out[f] = true
	}
	for name, n := range map[string]Need{"head": s.Head, "base": s.Base, "builds": s.Builds} {
		if n != Unused {
			out[name] = true
		}
	}
	return out
}

// The Go registry, the TypeScript table (src/datasource/queryTypes.ts),
// the TypeScript query model and docs/QUERIES.md list the same types and
// fields; the query editor edits every field the docs do not say it
// leaves out (as query.field, or through its number or text helper).
func TestRegistriesAgree(t *testing.T) {
	ts := readTSTable(t)
	if len(ts) != len(Types()) {
		t.Errorf("TypeScript table has %d types, the registry %d", len(ts), len(Types()))
	}
	for i, s := range Types() {
		if i >= len(ts) {
			break
		}
		want := tsRow{Type: s.Type, Head: needName[s.Head], Base: needName[s.Base], Builds: needName[s.Builds],
			Tree: s.Tree, Flame: s.Flame, Fields: append([]string{}, s.Fields...)}
		if !reflect.DeepEqual(ts[i], want) {
			t.Errorf("row %d: TypeScript %+v, Go %+v", i, ts[i], want)
		}
	}

	docs := docsFields(t)
	model := modelFields()
	for _, f := range model {
		if docs[f] == nil {
			t.Errorf("docs/QUERIES.md does not list the model's field %s", f)
		}
	}
	for f, types := range docs {
		if !slices.Contains(model, f) {
			t.Errorf("docs/QUERIES.md lists %s, which the model lacks", f)
			continue
		}
		for _, s := range Types() {
			if types[s.Type] != reads(s)[f] {
				t.Errorf("%s: docs/QUERIES.md says %s reads it: %v; the registry: %v", f, s.Type, types[s.Type], reads(s)[f])
			}
		}
	}

	src, err := os.ReadFile(filepath.Join("..", "..", "src", "datasource", "types.ts"))
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)export interface FlamediffQuery extends DataQuery \{(.*?)\n\}`).FindSubmatch(src)
	if body == nil {
		t.Fatal("types.ts: no FlamediffQuery interface")
	}
	var tsFields []string
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)\??:`).FindAllSubmatch(body[1], -1) {
		tsFields = append(tsFields, string(m[1]))
	}
	slices.Sort(tsFields)
	sorted := slices.Sorted(slices.Values(model))
	if !slices.Equal(tsFields, sorted) {
		t.Errorf("FlamediffQuery has %v, the Go model %v", tsFields, sorted)
	}

	// The query editor is QueryEditor.tsx and the parts it is made of: every
	// component of src/datasource/components but the data source's own
	// settings (ConfigEditor.tsx).
	parts, err := filepath.Glob(filepath.Join("..", "..", "src", "datasource", "components", "*.tsx"))
	if err != nil || len(parts) < 2 {
		t.Fatalf("the query editor's files: %v %v", parts, err)
	}
	var editor []byte
	for _, part := range parts {
		if strings.HasSuffix(part, "ConfigEditor.tsx") || strings.HasSuffix(part, ".test.tsx") {
			continue
		}
		b, err := os.ReadFile(part)
		if err != nil {
			t.Fatal(err)
		}
		editor = append(editor, b...)
	}
	docsText, err := os.ReadFile(filepath.Join("..", "..", "docs", "QUERIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range model {
		edits := strings.Contains(string(editor), "query."+f) || strings.Contains(string(editor), `field="`+f+`"`) ||
			strings.Contains(string(editor), "field: '"+f+"'")
		if !edits && !strings.Contains(string(docsText), "`"+f+"` is not in the query editor") {
			t.Errorf("the query editor does not edit %s, and docs/QUERIES.md does not say why", f)
		}
	}
}
