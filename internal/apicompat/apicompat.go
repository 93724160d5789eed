// Package apicompat compares the exported API of a kinformer package with the client-go package
// it mirrors, from their source, so that a program written against client-go compiles against
// kinformer with only its import paths changed.
//
// A declaration is rendered as text with every package-qualified name spelled by import path
// (so import aliases do not matter) and every reference to the mirrored package's own
// identifiers left unqualified. Two packages are compatible when every exported declaration
// of the reference renders the same in the candidate. The candidate may have more: extra
// identifiers, extra struct fields, extra methods on concrete types. It may not have extra
// interface methods, which would break callers' implementations.
package apicompat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// API is the exported surface of one package: declaration name → rendered declaration.
// Methods are named "Recv.Method"; struct fields "Type.Field"; interface methods
// "Iface.Method".
type API map[string]string

// Load parses the non-test Go files of dir and returns their exported API. rename maps import
// paths to the path they stand for in the comparison (for example kinformer's cache package to
// client-go's tools/cache), so that references between mirrored packages compare equal.
func Load(dir string, rename map[string]string) (API, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	api := API{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if ignoredByBuildTag(f) {
			continue
		}
		r := &renderer{fset: fset, imports: importsOf(f, rename)}
		for _, decl := range f.Decls {
			r.decl(api, decl)
		}
	}
	return api, nil
}

// Diff lists what candidate lacks or renders differently from reference, and interface
// methods candidate adds, one line each, sorted.
func Diff(reference, candidate API) []string {
	var out []string
	for name, want := range reference {
		got, ok := candidate[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("missing %s: %s", name, want))
		case got != want:
			out = append(out, fmt.Sprintf("differs %s:\n\twant %s\n\tgot  %s", name, want, got))
		}
	}
	for name, got := range candidate {
		if _, ok := reference[name]; !ok && strings.HasPrefix(got, "interface method ") {
			if _, ifaceInRef := reference[strings.SplitN(name, ".", 2)[0]]; ifaceInRef {
				out = append(out, fmt.Sprintf("extra %s: %s", name, got))
			}
		}
	}
	sort.Strings(out)
	return out
}

func ignoredByBuildTag(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return true
			}
		}
	}
	return false
}

func importsOf(f *ast.File, rename map[string]string) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if to, ok := rename[path]; ok {
			path = to
		}
		name := filepath.Base(path)
		if strings.HasSuffix(path, "/klog/v2") {
			name = "klog"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

type renderer struct {
	fset    *token.FileSet
	imports map[string]string
}

func (r *renderer) decl(api API, decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		name := d.Name.Name
		if d.Recv != nil && len(d.Recv.List) > 0 {
			recv := receiverName(d.Recv.List[0].Type)
			if !ast.IsExported(recv) {
				return
			}
			name = recv + "." + name
		}
		api[name] = "func " + r.typeParams(d.Type.TypeParams) + r.signature(d.Type)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				r.typeSpec(api, s)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					typ := ""
					if s.Type != nil {
						typ = " " + r.expr(s.Type)
					}
					api[n.Name] = kind + typ
				}
			}
		}
	}
}

func (r *renderer) typeSpec(api API, s *ast.TypeSpec) {
	name := s.Name.Name
	prefix := "type " + r.typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		prefix += "= "
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		api[name] = prefix + "struct"
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				api[name+"."+embeddedName(f.Type)] = "embedded " + r.expr(f.Type)
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					api[name+"."+n.Name] = "field " + r.expr(f.Type)
				}
			}
		}
	case *ast.InterfaceType:
		api[name] = prefix + "interface"
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				api[name+"."+embeddedName(m.Type)] = "interface embeds " + r.expr(m.Type)
				continue
			}
			for _, n := range m.Names {
				api[name+"."+n.Name] = "interface method " + r.signature(m.Type.(*ast.FuncType))
			}
		}
	default:
		api[name] = prefix + r.expr(s.Type)
	}
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return embeddedName(t.X)
	}
	return "?"
}

func (r *renderer) typeParams(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		parts = append(parts, fmt.Sprintf("%d:%s", len(f.Names), r.expr(f.Type)))
	}
	return "[" + strings.Join(parts, ", ") + "] "
}

// signature renders parameter and result types without their names.
func (r *renderer) signature(ft *ast.FuncType) string {
	return "(" + r.fieldTypes(ft.Params) + ")" + r.results(ft.Results)
}

func (r *renderer) results(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	return " (" + r.fieldTypes(fl) + ")"
}

func (r *renderer) fieldTypes(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		t := r.expr(f.Type)
		for i := 0; i < n; i++ {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ", ")
}

// expr renders a type expression with qualified names spelled by import path.
func (r *renderer) expr(e ast.Expr) string {
	e = r.qualify(e)
	var buf bytes.Buffer
	_ = printer.Fprint(&buf, r.fset, e)
	s := strings.ReplaceAll(buf.String(), "interface{}", "any")
	return strings.Join(strings.Fields(s), " ")
}

// qualify returns a copy of e in which every pkg.Name selector has pkg replaced by the
// quoted import path, and parameter names of func types are dropped.
func (r *renderer) qualify(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.SelectorExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			if path, ok := r.imports[id.Name]; ok {
				return &ast.SelectorExpr{X: ast.NewIdent(strconv.Quote(path)), Sel: t.Sel}
			}
		}
		return t
	case *ast.StarExpr:
		return &ast.StarExpr{X: r.qualify(t.X)}
	case *ast.ArrayType:
		return &ast.ArrayType{Len: t.Len, Elt: r.qualify(t.Elt)}
	case *ast.MapType:
		return &ast.MapType{Key: r.qualify(t.Key), Value: r.qualify(t.Value)}
	case *ast.ChanType:
		return &ast.ChanType{Dir: t.Dir, Value: r.qualify(t.Value)}
	case *ast.Ellipsis:
		return &ast.Ellipsis{Elt: r.qualify(t.Elt)}
	case *ast.IndexExpr:
		return &ast.IndexExpr{X: r.qualify(t.X), Index: r.qualify(t.Index)}
	case *ast.IndexListExpr:
		idx := make([]ast.Expr, len(t.Indices))
		for i, x := range t.Indices {
			idx[i] = r.qualify(x)
		}
		return &ast.IndexListExpr{X: r.qualify(t.X), Indices: idx}
	case *ast.FuncType:
		return &ast.FuncType{Params: r.anonFields(t.Params), Results: r.anonFields(t.Results)}
	case *ast.ParenExpr:
		return r.qualify(t.X)
	case *ast.InterfaceType:
		if t.Methods == nil || len(t.Methods.List) == 0 {
			return ast.NewIdent("any")
		}
		return t
	}
	return e
}

func (r *renderer) anonFields(fl *ast.FieldList) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			out.List = append(out.List, &ast.Field{Type: r.qualify(f.Type)})
		}
	}
	return out
}

// Undocumented lists the exported top-level declarations and exported methods of exported
// types in the non-test, non-generated files of dir that have no doc comment. A const or var
// inside a documented group counts as documented.
func Undocumented(dir string) ([]string, error) {
	fset, files, err := parseSources(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		where := func(p token.Pos) string { return fset.Position(p).String() }
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil && len(d.Recv.List) > 0 && !ast.IsExported(receiverName(d.Recv.List[0].Type)) {
					continue
				}
				out = append(out, where(d.Pos())+": "+d.Name.Name)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							out = append(out, where(s.Pos())+": "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
								out = append(out, where(n.Pos())+": "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// parseSources parses the non-test Go files of dir, with their comments, in
// directory order.
func parseSources(dir string) (*token.FileSet, []*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	return fset, files, nil
}
