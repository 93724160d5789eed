// Command gen writes kinformer's generated informers/ and listers/ trees.
//
// It discovers every group, version and resource by reflection over
// k8s.io/client-go/kubernetes.Interface (see discover.go), renders one file
// per resource plus the per-package and factory glue (templates.go), and
// checks the result against client-go v0.37.2's own informers and listers:
// same exported API, same NotFound resources, same ForResource set
// (compare.go). Any difference fails the run.
//
// Usage, from anywhere inside the module:
//
//	go run ./internal/gen           # (re)write the generated files, delete stale ones
//	go run ./internal/gen -verify   # fail if the committed files differ from a fresh generation
//
// `go generate ./...` runs the first form (see informers/doc.go).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verify := flag.Bool("verify", false, "compare a fresh generation with the files on disk instead of writing; exit 1 on any difference")
	root := flag.String("root", "", "repository root (default: the directory holding go.mod, found upwards from the working directory)")
	flag.Parse()
	if err := run(*root, *verify); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generatedTrees are the directories whose generated files this command owns.
var generatedTrees = []string{"informers", "listers"}

func run(root string, verify bool) error {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return err
		}
	}
	m, err := discover()
	if err != nil {
		return fmt.Errorf("discovering the clientset: %w", err)
	}
	hand, err := handWrittenExpansions(root)
	if err != nil {
		return err
	}
	files, err := render(m, hand)
	if err != nil {
		return err
	}
	cg, err := clientGoDir(root)
	if err != nil {
		return err
	}
	diffs, err := compareWithClientGo(cg, root, files, m)
	if err != nil {
		return fmt.Errorf("comparing with client-go: %w", err)
	}
	existing, err := existingGenerated(root)
	if err != nil {
		return err
	}
	if verify {
		err = verifyTree(root, files, existing)
	} else {
		err = writeTree(root, files, existing)
	}
	if len(diffs) > 0 {
		err = errors.Join(err, fmt.Errorf("API differs from client-go's (%s):\n%s", cg, strings.Join(diffs, "\n")))
	}
	return err
}

// findRoot returns the nearest directory upwards from the working directory
// that holds a go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory; pass -root")
		}
		dir = parent
	}
}

// existingGenerated returns the slash paths of the files under the generated
// trees that start with the generated-file header.
func existingGenerated(root string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, tree := range generatedTrees {
		err := filepath.WalkDir(filepath.Join(root, tree), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.HasPrefix(src, []byte(header)) {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// handWrittenExpansions finds, per lister package directory, the kinds whose
// <Kind>ListerExpansion interface is declared in a hand-written file there;
// the generator then leaves that kind out of expansion_generated.go.
func handWrittenExpansions(root string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "listers"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(src, []byte(header)) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				name := s.(*ast.TypeSpec).Name.Name
				if kind, ok := strings.CutSuffix(name, "ListerExpansion"); ok && !strings.HasSuffix(kind, "Namespace") {
					if out[dir] == nil {
						out[dir] = map[string]bool{}
					}
					out[dir][kind] = true
				}
			}
		}
		return nil
	})
	return out, err
}

// verifyTree reports every generated file that is missing, different or stale.
func verifyTree(root string, files map[string][]byte, existing map[string]bool) error {
	var problems []string
	for _, p := range sortedKeys(files) {
		have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, "missing "+p)
		case err != nil:
			return err
		case !bytes.Equal(have, files[p]):
			problems = append(problems, "differs "+p)
		}
	}
	for p := range existing {
		if _, ok := files[p]; !ok {
			problems = append(problems, "stale "+p)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("generated files are out of date (run `go generate ./...`):\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

// writeTree writes the files that changed and deletes stale generated files.
func writeTree(root string, files map[string][]byte, existing map[string]bool) error {
	for _, p := range sortedKeys(files) {
		dst := filepath.Join(root, filepath.FromSlash(p))
		if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, files[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, files[p], 0o644); err != nil {
			return err
		}
	}
	for p := range existing {
		if _, ok := files[p]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			return err
		}
		// Remove directories left empty, up to the tree root.
		for dir := path.Dir(p); strings.Contains(dir, "/"); dir = path.Dir(dir) {
			if os.Remove(filepath.Join(root, filepath.FromSlash(dir))) != nil {
				break
			}
		}
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
