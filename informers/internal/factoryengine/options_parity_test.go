package factoryengine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// factoryPackages are the directories of the three factory packages,
// relative to this one, by the name the parity test gives them.
var factoryPackages = map[string]string{
	"typed":    "../..",
	"dynamic":  "../../dynamic",
	"metadata": "../../metadata",
}

// notApplicable lists, per option, the factories that do not have it and
// why. Every other With... option of one factory package must exist in the
// other two.
var notApplicable = map[string]map[string]string{
	"WithAPIMachineryDecoding": {
		"metadata": "kinformer's decoders decode the typed informers' protobuf and the dynamic informers' JSON; metadata informers decode through the metadata client, never with them",
	},
	"WithRESTConfig": {
		"typed":    "the typed factory reaches its clientset's REST clients, so it needs no config to decode with kinformer's decoders",
		"metadata": "metadata informers decode through the metadata client, never with kinformer's decoders",
	},
	"WithCustomResyncConfig": {
		"dynamic":  "client-go's option of the typed factory, keyed by example objects; the dynamic factory has one resync period",
		"metadata": "client-go's option of the typed factory, keyed by example objects; the metadata factory has one resync period",
	},
	"WithInformerName": {
		"dynamic":  "client-go's option of the typed factory; the informers of resources picked at run time publish no metrics",
		"metadata": "client-go's option of the typed factory; the informers of resources picked at run time publish no metrics",
	},
	"WithProjection": {
		"metadata": "metadata informers hold only object metadata already; a projection keeps chosen fields of whole objects",
	},
}

// options returns the names of the package-level With... functions of the
// package in dir (test files left out).
func options(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", dir, err)
	}
	var names []string
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if ok && fn.Recv == nil && fn.Name.IsExported() && strings.HasPrefix(fn.Name.Name, "With") {
					names = append(names, fn.Name.Name)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestFactoriesHaveTheSameOptions: the typed, dynamic and metadata
// factories offer the same With... options, except those notApplicable
// lists for a factory, which that factory must not have.
func TestFactoriesHaveTheSameOptions(t *testing.T) {
	have := map[string]map[string]bool{}
	all := map[string]bool{}
	for factory, dir := range factoryPackages {
		have[factory] = map[string]bool{}
		for _, name := range options(t, dir) {
			have[factory][name] = true
			all[name] = true
		}
		if len(have[factory]) == 0 {
			t.Fatalf("no With... options found in %s", dir)
		}
	}
	for name := range notApplicable {
		if !all[name] {
			t.Errorf("notApplicable lists %s, which no factory has", name)
		}
	}
	for name := range all {
		for factory := range factoryPackages {
			reason, excepted := notApplicable[name][factory]
			switch {
			case excepted && have[factory][name]:
				t.Errorf("the %s factory has %s, which notApplicable says does not apply to it (%s)", factory, name, reason)
			case !excepted && !have[factory][name]:
				t.Errorf("the %s factory lacks %s: add it, or list it in notApplicable with the reason", factory, name)
			}
		}
	}
}
