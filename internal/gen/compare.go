package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// clientGoModule is the module whose informers and listers we mirror.
const clientGoModule = "k8s.io/client-go"

// clientGoDir returns the directory of client-go's source in the module cache,
// as resolved by the go command for the module rooted at root.
func clientGoDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", clientGoModule)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w: %s", clientGoModule, err, stderr.Bytes())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("locating %s: module has no directory (not downloaded?)", clientGoModule)
	}
	return dir, nil
}

// pathMapping rewrites client-go import paths into ours, so that signatures
// of both trees can be compared textually.
var pathMapping = []struct{ from, to string }{
	{clientGoModule + "/tools/cache", module + "/cache"},
	{clientGoModule + "/informers", module + "/informers"},
	{clientGoModule + "/listers", module + "/listers"},
	{clientGoModule + "/dynamic/dynamicinformer", module + "/informers/dynamic"},
	{clientGoModule + "/metadata/metadatainformer", module + "/informers/metadata"},
}

func mapPath(p string) string {
	for _, m := range pathMapping {
		if p == m.from || strings.HasPrefix(p, m.from+"/") {
			return m.to + strings.TrimPrefix(p, m.from)
		}
	}
	return p
}

// apiTrees pairs each client-go package tree with the tree of ours that
// mirrors it. except lists our subtrees that mirror something else.
var apiTrees = []struct {
	theirs, ours string
	except       []string
}{
	{"informers", "informers", []string{"informers/dynamic", "informers/metadata"}},
	{"listers", "listers", nil},
	{"dynamic/dynamicinformer", "informers/dynamic", nil},
	{"metadata/metadatainformer", "informers/metadata", nil},
}

// compareWithClientGo checks that the trees under ourRoot (generated files
// taken from files, hand-written ones from disk) export exactly the API of
// client-go's matching trees under cgDir, that every lister names the same
// resource in its NotFound errors, and that ForResource serves the same
// group/version/resources. It returns one line per difference. A tree of
// ours that does not exist yet (informers/dynamic, informers/metadata) is
// skipped.
func compareWithClientGo(cgDir, ourRoot string, files map[string][]byte, m *model) ([]string, error) {
	var diffs []string
	for _, t := range apiTrees {
		if _, err := os.Stat(filepath.Join(ourRoot, filepath.FromSlash(t.ours))); err != nil && !hasPrefixKey(files, t.ours+"/") {
			continue
		}
		theirs, err := exportedAPI(os.DirFS(cgDir), t.theirs, t.ours, nil, clientGoModule, mapPath, nil)
		if err != nil {
			return nil, err
		}
		ours, err := exportedAPI(os.DirFS(ourRoot), t.ours, t.ours, t.except, module, func(p string) string { return p }, files)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, diffAPI(theirs, ours)...)
	}
	lr, err := compareListerResources(cgDir, files)
	if err != nil {
		return nil, err
	}
	diffs = append(diffs, lr...)
	gvr, err := compareGVRs(cgDir, m)
	if err != nil {
		return nil, err
	}
	return append(diffs, gvr...), nil
}

func hasPrefixKey(files map[string][]byte, prefix string) bool {
	for p := range files {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// extensionPackages are the hand-written packages of the mirrored trees,
// where kinformer adds its own API (new options, interfaces the factories
// also implement) next to client-go's; internal/apicompat still requires a
// doc comment on each. The generated group/version packages stay exact.
var extensionPackages = map[string]bool{
	"informers":          true,
	"informers/dynamic":  true,
	"informers/metadata": true,
}

// extensionAllowed reports whether the extra declaration k ("<package>
// <name>...") is in one of extensionPackages.
func extensionAllowed(k string) bool {
	pkg, _, _ := strings.Cut(k, " ")
	return extensionPackages[pkg]
}

// diffAPI lists the declarations missing from ours, extra in ours, or with a
// different signature.
func diffAPI(theirs, ours map[string]string) []string {
	var diffs []string
	for k, sig := range theirs {
		switch o, ok := ours[k]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("missing %s: %s", k, sig))
		case o != sig:
			diffs = append(diffs, fmt.Sprintf("differs %s:\n\tclient-go: %s\n\tours:      %s", k, sig, o))
		}
	}
	for k, sig := range ours {
		if _, ok := theirs[k]; !ok && !extensionAllowed(k) {
			diffs = append(diffs, fmt.Sprintf("extra %s: %s", k, sig))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// exportedAPI returns, for every non-test, non-internal Go package under
// tree in fsys, each exported declaration keyed "dir name" (methods as "dir
// Type.Method"), where dir is the package directory with tree replaced by
// keyTree, and its signature rendered with full import paths (mapped through
// mapP). Subtrees in except are left out. When overlay is not nil, it
// replaces or adds file contents (keyed by slash path) and files on disk that
// carry the generated-file header are ignored, so stale generated files do
// not count.
func exportedAPI(fsys fs.FS, tree, keyTree string, except []string, modPath string, mapP func(string) string, overlay map[string][]byte) (map[string]string, error) {
	byDir := map[string]map[string][]byte{}
	add := func(p string, src []byte) {
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/internal/") {
			return
		}
		for _, e := range except {
			if strings.HasPrefix(p, e+"/") {
				return
			}
		}
		dir := path.Dir(p)
		if byDir[dir] == nil {
			byDir[dir] = map[string][]byte{}
		}
		byDir[dir][p] = src
	}
	err := fs.WalkDir(fsys, tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if _, ok := overlay[p]; ok {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if overlay != nil && bytes.HasPrefix(src, []byte(header)) {
			return nil
		}
		add(p, src)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for p, src := range overlay {
		if strings.HasPrefix(p, tree+"/") {
			add(p, src)
		}
	}
	api := map[string]string{}
	for dir, files := range byDir {
		key := keyTree + strings.TrimPrefix(dir, tree)
		if err := packageAPI(key, mapP(modPath+"/"+dir), files, mapP, api); err != nil {
			return nil, err
		}
	}
	return api, nil
}

// packageAPI adds the exported declarations of one package to api.
func packageAPI(dir, pkgPath string, files map[string][]byte, mapP func(string) string, api map[string]string) error {
	fset := token.NewFileSet()
	var parsed []*ast.File
	local := map[string]bool{}
	for p, src := range files {
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					local[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
	}
	for _, f := range parsed {
		r := &renderer{pkgPath: pkgPath, local: local, imports: map[string]string{}}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			r.imports[name] = mapP(p)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				key := d.Name.Name
				if d.Recv != nil {
					recv := receiverName(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					key = recv + "." + key
				}
				api[dir+" "+key] = "func" + r.typeParams(d.Type.TypeParams) + r.signature(d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						eq := " "
						if s.Assign.IsValid() {
							eq = " = "
						}
						api[dir+" "+s.Name.Name] = "type" + r.typeParams(s.TypeParams) + eq + r.expr(s.Type)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								api[dir+" "+n.Name] = d.Tok.String() + " " + r.exprOrEmpty(s.Type)
							}
						}
					}
				}
			}
		}
	}
	return nil
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// renderer prints type expressions with every named type qualified by its
// full (mapped) import path and without parameter names.
type renderer struct {
	pkgPath string
	local   map[string]bool
	imports map[string]string
}

func (r *renderer) exprOrEmpty(e ast.Expr) string {
	if e == nil {
		return ""
	}
	return r.expr(e)
}

func (r *renderer) list(fl *ast.FieldList) []string {
	if fl == nil {
		return nil
	}
	var out []string
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, r.expr(f.Type))
		}
	}
	return out
}

func (r *renderer) typeParams(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var out []string
	for _, f := range fl.List {
		for _, n := range f.Names {
			out = append(out, n.Name+" "+r.expr(f.Type))
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func (r *renderer) signature(ft *ast.FuncType) string {
	return "(" + strings.Join(r.list(ft.Params), ", ") + ") (" + strings.Join(r.list(ft.Results), ", ") + ")"
}

func (r *renderer) expr(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		if r.local[e.Name] {
			return r.pkgPath + "." + e.Name
		}
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if p, ok := r.imports[x.Name]; ok {
				return p + "." + e.Sel.Name
			}
		}
		return r.expr(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + r.expr(e.X)
	case *ast.ArrayType:
		if e.Len == nil {
			return "[]" + r.expr(e.Elt)
		}
		return "[" + r.expr(e.Len) + "]" + r.expr(e.Elt)
	case *ast.BasicLit:
		return e.Value
	case *ast.MapType:
		return "map[" + r.expr(e.Key) + "]" + r.expr(e.Value)
	case *ast.ChanType:
		switch e.Dir {
		case ast.SEND:
			return "chan<- " + r.expr(e.Value)
		case ast.RECV:
			return "<-chan " + r.expr(e.Value)
		}
		return "chan " + r.expr(e.Value)
	case *ast.Ellipsis:
		return "..." + r.expr(e.Elt)
	case *ast.FuncType:
		return "func" + r.signature(e)
	case *ast.IndexExpr:
		return r.expr(e.X) + "[" + r.expr(e.Index) + "]"
	case *ast.IndexListExpr:
		var idx []string
		for _, i := range e.Indices {
			idx = append(idx, r.expr(i))
		}
		return r.expr(e.X) + "[" + strings.Join(idx, ", ") + "]"
	case *ast.ParenExpr:
		return r.expr(e.X)
	case *ast.InterfaceType:
		var elems []string
		for _, f := range e.Methods.List {
			if len(f.Names) == 0 {
				elems = append(elems, r.expr(f.Type))
				continue
			}
			for _, n := range f.Names {
				if ft, ok := f.Type.(*ast.FuncType); ok {
					elems = append(elems, n.Name+r.signature(ft))
				}
			}
		}
		sort.Strings(elems)
		return "interface{" + strings.Join(elems, "; ") + "}"
	case *ast.StructType:
		var fields []string
		for _, f := range e.Fields.List {
			if len(f.Names) == 0 {
				fields = append(fields, r.expr(f.Type))
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					fields = append(fields, n.Name+" "+r.expr(f.Type))
				}
			}
		}
		return "struct{" + strings.Join(fields, "; ") + "}"
	case *ast.BinaryExpr:
		return r.expr(e.X) + " " + e.Op.String() + " " + r.expr(e.Y)
	case *ast.UnaryExpr:
		return e.Op.String() + r.expr(e.X)
	}
	return fmt.Sprintf("<%T>", e)
}

var clientGoResourceRE = regexp.MustCompile(`\.Resource\("([^"]*)"\)`)
var ourResourceRE = regexp.MustCompile(`schema\.GroupResource\{Group: "[^"]*", Resource: "([^"]*)"\}`)

// compareListerResources checks that each generated lister names the same
// resource in NotFound errors as client-go's.
func compareListerResources(cgDir string, files map[string][]byte) ([]string, error) {
	var diffs []string
	for p, src := range files {
		if !strings.HasPrefix(p, "listers/") {
			continue
		}
		ours := ourResourceRE.FindSubmatch(src)
		if ours == nil {
			continue
		}
		theirsSrc, err := os.ReadFile(filepath.Join(cgDir, filepath.FromSlash(p)))
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("lister %s: no client-go counterpart: %v", p, err))
			continue
		}
		theirs := clientGoResourceRE.FindSubmatch(theirsSrc)
		if theirs == nil || string(theirs[1]) != string(ours[1]) {
			diffs = append(diffs, fmt.Sprintf("lister %s: NotFound resource %q, client-go %q", p, ours[1], theirs))
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

var (
	genericGroupRE    = regexp.MustCompile(`// Group=([^,]*), Version=(\S+)`)
	genericResourceRE = regexp.MustCompile(`\.WithResource\("([^"]+)"\)`)
)

// compareGVRs checks that the model serves exactly the group/version/resources
// of client-go's informers/generic.go.
func compareGVRs(cgDir string, m *model) ([]string, error) {
	src, err := os.ReadFile(filepath.Join(cgDir, "informers", "generic.go"))
	if err != nil {
		return nil, err
	}
	theirs := map[string]bool{}
	gv := ""
	for _, line := range strings.Split(string(src), "\n") {
		if g := genericGroupRE.FindStringSubmatch(line); g != nil {
			group := g[1]
			if group == "core" {
				group = ""
			}
			gv = group + "/" + g[2]
		}
		if r := genericResourceRE.FindStringSubmatch(line); r != nil {
			theirs[gv+"/"+r[1]] = true
		}
	}
	ours := map[string]bool{}
	for _, g := range m.Groups {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				ours[g.Name+"/"+v.Name+"/"+r.Resource] = true
			}
		}
	}
	var diffs []string
	for k := range theirs {
		if !ours[k] {
			diffs = append(diffs, "ForResource: missing "+k)
		}
	}
	for k := range ours {
		if !theirs[k] {
			diffs = append(diffs, "ForResource: extra "+k)
		}
	}
	if len(theirs) == 0 {
		diffs = append(diffs, "ForResource: found no resources in client-go's generic.go")
	}
	sort.Strings(diffs)
	return diffs, nil
}
