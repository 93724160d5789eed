package apicompat

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocCommentsPointToCompatibility checks the convention of COMPATIBILITY.md over the whole
// module: an identifier outside internal packages whose doc comment points there is named
// there, and no comment carries the old "Difference from client-go" paragraph.
func TestDocCommentsPointToCompatibility(t *testing.T) {
	root := filepath.Join("..", "..")
	compat, err := os.ReadFile(filepath.Join(root, "COMPATIBILITY.md"))
	require.NoError(t, err)
	names := CompatNames(string(compat))
	var dirs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != root && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "vendor") {
				return filepath.SkipDir
			}
			dirs = append(dirs, path)
		}
		return nil
	})
	require.NoError(t, err)
	pointers := 0
	for _, dir := range dirs {
		problems, err := CompatDocProblems(dir, names)
		require.NoError(t, err)
		for _, p := range problems {
			file, _, _ := strings.Cut(p, ":")
			rel, err := filepath.Rel(root, file)
			require.NoError(t, err)
			rel = filepath.ToSlash(rel)
			// COMPATIBILITY.md names what users see; an engine under internal/ that
			// points there is covered by the row of the public identifier it serves.
			if (strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")) && strings.Contains(p, "points to COMPATIBILITY.md") {
				continue
			}
			t.Error(p)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				require.NoError(t, err)
				pointers += strings.Count(string(b), CompatPointer)
			}
		}
	}
	// The walk really saw the module: the cache package alone has dozens of pointers.
	require.Greater(t, pointers, 50)
}

// TestCompatDocProblemsReports makes sure the check itself can fail.
func TestCompatDocProblemsReports(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// Named does X. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func Named() {}

// Missing does Y. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func Missing() {}

// T is a type.
type T struct {
	// Field is a field. Differs from client-go v0.37.2; see COMPATIBILITY.md.
	Field int
}

// Old does Z.
//
// Difference from client-go: client-go panics.
func Old() {}

// unexported points there too; see COMPATIBILITY.md.
func unexported() {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600))
	names := CompatNames("| `p.Named` | panics | does not | because | none |")
	problems, err := CompatDocProblems(dir, names)
	require.NoError(t, err)
	require.Len(t, problems, 3, "%v", problems)
	all := strings.Join(problems, "\n")
	require.Contains(t, all, "p.go:7:6: Missing points to COMPATIBILITY.md")
	require.Contains(t, all, "p.go:12:2: Field points to COMPATIBILITY.md")
	require.Contains(t, all, `p.go:15:1: comment uses "Difference from client-go"`)
}
