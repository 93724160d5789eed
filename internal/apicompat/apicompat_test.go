package apicompat

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// itRename maps kinformer's packages to the client-go packages they mirror.
var itRename = map[string]string{
	"github.com/kinformer/kinformer/cache":           "k8s.io/client-go/tools/cache",
	"github.com/kinformer/kinformer/cache/synctrack": "k8s.io/client-go/tools/cache/synctrack",
}

func goListDir(t *testing.T, pkg string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
	require.NoError(t, err, "go list %s", pkg)
	return strings.TrimSpace(string(out))
}

// TestMirroredPackageAPIMatchesClientGo checks that every exported declaration of client-go's
// packages exists in ours with the same signature.
func TestMirroredPackageAPIMatchesClientGo(t *testing.T) {
	for _, tc := range []struct{ ours, theirs string }{
		{"cache", "k8s.io/client-go/tools/cache"},
		{"cache/synctrack", "k8s.io/client-go/tools/cache/synctrack"},
		{"cache/testing", "k8s.io/client-go/tools/cache/testing"},
	} {
		t.Run(tc.ours, func(t *testing.T) {
			ref, err := Load(goListDir(t, tc.theirs), nil)
			require.NoError(t, err)
			got, err := Load(filepath.Join("..", "..", tc.ours), itRename)
			require.NoError(t, err)
			require.NotEmpty(t, ref)
			if diff := Diff(ref, got); len(diff) > 0 {
				t.Errorf("%d differences from %s:\n%s", len(diff), tc.theirs, strings.Join(diff, "\n"))
			}
		})
	}
}

// TestExportedIdentifiersAreDocumented checks the house rule that every exported identifier
// carries a doc comment.
func TestExportedIdentifiersAreDocumented(t *testing.T) {
	for _, dir := range []string{"cache", "cache/synctrack", "cache/testing", "cache/internal/fanout", "cache/internal/reflector", "listadmission", "informers", "informers/internalinterfaces", "informers/dynamic", "informers/metadata", "informers/core/v1", "informers/apps/v1", "listers", "listers/core/v1", "listers/apps/v1", "internal/testenv", "internal/apicompat", "interop/clientgo", "interop/controllerruntime", "sharding"} {
		missing, err := Undocumented(filepath.Join("..", "..", dir))
		require.NoError(t, err)
		require.Empty(t, missing, "exported identifiers without a doc comment in %s", dir)
	}
}

// TestDiffReportsChanges makes sure the comparison itself can fail.
func TestDiffReportsChanges(t *testing.T) {
	ref := API{"F": "func (int) (error)", "I": "type interface", "I.M": "interface method ()", "S": "type struct"}
	got := API{"F": "func (string) (error)", "I": "type interface", "I.M": "interface method ()", "I.N": "interface method ()", "S.X": "field int"}
	require.Equal(t, []string{
		"differs F:\n\twant func (int) (error)\n\tgot  func (string) (error)",
		"extra I.N: interface method ()",
		"missing S: type struct",
	}, Diff(ref, got))
}
