package apicompat

import (
	"go/ast"
	"go/token"
	"regexp"
	"sort"
	"strings"
)

// CompatPointer is how a doc comment points to COMPATIBILITY.md: an identifier that behaves
// differently from client-go states its contract, then ends it with "Differs from client-go
// v0.37.2; see COMPATIBILITY.md." The history (what client-go does, and why kinformer does
// otherwise) belongs in COMPATIBILITY.md, not in the comment.
const CompatPointer = "see COMPATIBILITY.md"

// oldCompatLabels are the labels of the multi-line paragraphs that doc comments used before
// they pointed to COMPATIBILITY.md; CompatDocProblems reports every comment that still uses one.
var oldCompatLabels = []string{"Difference from client-go", "Differences from client-go", "Unlike client-go"}

var backticked = regexp.MustCompile("`[^`]+`")
var identWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// CompatNames returns every Go identifier that appears inside a backticked span of compat, the
// text of COMPATIBILITY.md: "`cache.Heap.BulkAdd`" names cache, Heap and BulkAdd.
func CompatNames(compat string) map[string]bool {
	names := map[string]bool{}
	for _, span := range backticked.FindAllString(compat, -1) {
		for _, w := range identWord.FindAllString(span, -1) {
			names[w] = true
		}
	}
	return names
}

// CompatDocProblems checks the comments of the non-test, non-generated Go files of dir (not its
// subdirectories) against names, the identifiers COMPATIBILITY.md names (see CompatNames). It
// reports, one line each with its position:
//   - an exported identifier (a function, a method, a type, a struct field or an interface
//     method) whose doc comment contains CompatPointer but whose name COMPATIBILITY.md does not
//     mention;
//   - a comment, of any identifier or none, that contains one of oldCompatLabels.
//
// Generated files are checked for oldCompatLabels only: their generator is what
// COMPATIBILITY.md names.
func CompatDocProblems(dir string, names map[string]bool) ([]string, error) {
	fset, files, err := parseSources(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		where := func(p token.Pos) string { return fset.Position(p).String() }
		for _, cg := range f.Comments {
			text := cg.Text()
			for _, label := range oldCompatLabels {
				if strings.Contains(text, label) {
					out = append(out, where(cg.Pos())+": comment uses \""+label+"\"; state the contract and point to COMPATIBILITY.md")
					break
				}
			}
		}
		if ast.IsGenerated(f) {
			continue
		}
		check := func(ident *ast.Ident, doc *ast.CommentGroup) {
			if ident == nil || !ident.IsExported() || doc == nil || !strings.Contains(doc.Text(), CompatPointer) {
				return
			}
			if !names[ident.Name] {
				out = append(out, where(ident.Pos())+": "+ident.Name+" points to COMPATIBILITY.md, which does not name it")
			}
		}
		checkFields := func(fl *ast.FieldList) {
			if fl == nil {
				return
			}
			for _, field := range fl.List {
				for _, n := range field.Names {
					check(n, field.Doc)
				}
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				check(d.Name, d.Doc)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					s, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					doc := s.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					check(s.Name, doc)
					switch t := s.Type.(type) {
					case *ast.StructType:
						checkFields(t.Fields)
					case *ast.InterfaceType:
						checkFields(t.Methods)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
