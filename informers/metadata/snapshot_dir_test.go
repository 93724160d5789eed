package metadatainformer_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factorytest"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// countLists counts the LIST requests for pods client has served so far.
func countLists(client *metadatafake.FakeMetadataClient) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == podsGVR {
			n++
		}
	}
	return n
}

// runAndShutdown runs the pods informer of factory until it synced and shuts
// the factory down (see factorytest.RunAndShutdown).
func runAndShutdown(t *testing.T, factory metadatainformer.SharedInformerFactory) ([]string, []error) {
	t.Helper()
	return factorytest.RunAndShutdown(t, factory, podsGVR, waitTimeout)
}

// TestMetadataFactorySnapshotDirWarmRestarts: WithSnapshotDir makes the metadata factory's
// informers resume from "<resource>.<version>[.<group>].metadata.snap"
// without a LIST; a factory with another namespace or selector rejects the
// file with a *cache.SnapshotError and lists.
func TestMetadataFactorySnapshotDirWarmRestarts(t *testing.T) {
	client, _ := newFakeClient(t, kubeSystemMetadata("uid-a"), podMetadata("a", "p1", nil), podMetadata("b", "p2", nil))
	dir := t.TempDir()
	keys, errs := runAndShutdown(t, metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithSnapshotDir(dir)))
	assert.ElementsMatch(t, []string{"a/p1", "b/p2"}, keys)
	assert.Empty(t, errs)
	require.Equal(t, 1, countLists(client))
	_, err := os.Stat(filepath.Join(dir, "pods.v1.metadata.snap"))
	require.NoError(t, err)

	keys, errs = runAndShutdown(t, metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithSnapshotDir(dir), nil))
	assert.ElementsMatch(t, []string{"a/p1", "b/p2"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, 1, countLists(client), "resumed from the snapshot without a LIST")

	keys, errs = runAndShutdown(t, metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithSnapshotDir(dir),
		metadatainformer.WithNamespace("a")))
	assert.Equal(t, []string{"a/p1"}, keys)
	assert.Equal(t, 2, countLists(client), "a normal LIST follows the rejection")
	require.NotEmpty(t, errs)
	var serr *cache.SnapshotError
	require.ErrorAs(t, errs[0], &serr)
	assert.Contains(t, serr.Error(), `snapshot holds cluster="uid-a", this informer selects namespace="a" labelSelector="" fieldSelector="" cluster="uid-a"`)

	keys, errs = runAndShutdown(t, metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithSnapshotDir(dir),
		metadatainformer.WithNamespace("a"), metadatainformer.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })))
	assert.Empty(t, keys, "no pod has the label")
	assert.Equal(t, 3, countLists(client))
	require.NotEmpty(t, errs)
	require.ErrorAs(t, errs[0], &serr)
	assert.Contains(t, serr.Error(), `snapshot holds namespace="a" labelSelector="" fieldSelector="" cluster="uid-a", this informer selects namespace="a" labelSelector="app=web" fieldSelector="" cluster="uid-a"`)

	// Without WithSnapshotDir nothing is loaded.
	keys, errs = runAndShutdown(t, metadatainformer.NewFilteredSharedInformerFactory(client, 0, "a", nil))
	assert.Equal(t, []string{"a/p1"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, 4, countLists(client))
}
