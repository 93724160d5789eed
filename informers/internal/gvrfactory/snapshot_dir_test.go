package gvrfactory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factorytest"
)

// runAndShutdown runs gvr's informer of a factory built with options until
// it synced and shuts the factory down (see factorytest.RunAndShutdown).
func runAndShutdown(t *testing.T, client *fake.FakeDynamicClient, gvr schema.GroupVersionResource, options ...func(*Options)) ([]string, []error) {
	t.Helper()
	return factorytest.RunAndShutdown(t, newFactory(client, options...), gvr, waitTimeout)
}

// TestFactorySnapshotDirWarmRestarts: a snapshot directory makes the
// factory's informers resume from "<resource>.<version>.<group>.snap"
// without a LIST when the namespace and selectors are the same; another
// namespace rejects the file with a *cache.SnapshotError and lists.
func TestFactorySnapshotDirWarmRestarts(t *testing.T) {
	client, _ := newFakeClient(
		kubeSystem("uid-a"),
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "a", "w2", map[string]string{"app": "db"}),
		newObject(widgetsGVR, "Widget", "b", "w3", map[string]string{"app": "web"}),
	)
	dir := t.TempDir()
	web := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	keys, errs := runAndShutdown(t, client, widgetsGVR, func(o *Options) { o.SnapshotDir, o.Namespace, o.TweakListOptions = dir, "a", web })
	assert.Equal(t, []string{"a/w1"}, keys)
	assert.Empty(t, errs)
	require.Equal(t, 1, countLists(client, widgetsGVR))
	_, err := os.Stat(filepath.Join(dir, "widgets.v1.example.com.snap"))
	require.NoError(t, err)

	keys, errs = runAndShutdown(t, client, widgetsGVR, func(o *Options) { o.SnapshotDir, o.Namespace, o.TweakListOptions = dir, "a", web })
	assert.Equal(t, []string{"a/w1"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, 1, countLists(client, widgetsGVR), "resumed from the snapshot without a LIST")

	keys, errs = runAndShutdown(t, client, widgetsGVR, func(o *Options) { o.SnapshotDir, o.Namespace, o.TweakListOptions = dir, "b", web })
	assert.Equal(t, []string{"b/w3"}, keys)
	assert.Equal(t, 2, countLists(client, widgetsGVR), "a normal LIST follows the rejection")
	require.NotEmpty(t, errs)
	var serr *cache.SnapshotError
	require.ErrorAs(t, errs[0], &serr)
	assert.Contains(t, serr.Error(), `this informer selects namespace="b" labelSelector="app=web"`)
}

// TestFactorySnapshotProtection: the factory marks core secrets sensitive
// and Options.Sensitive marks others; without a key their
// snapshots stay off disk, and a snapshot key writes them
// encrypted and resumes from them.
func TestFactorySnapshotProtection(t *testing.T) {
	secretsGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		widgetsGVR: "WidgetList",
		secretsGVR: "SecretList",
	}, kubeSystem("uid-a"), newObject(secretsGVR, "Secret", "a", "token", nil), newObject(widgetsGVR, "Widget", "a", "w1", nil))
	dir := t.TempDir()
	snapshotFiles := func() []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	for _, gvr := range []schema.GroupVersionResource{secretsGVR, widgetsGVR} {
		_, errs := runAndShutdown(t, client, gvr, func(o *Options) { o.SnapshotDir = dir; o.MarkSensitive(widgetsGVR) })
		assert.Empty(t, errs)
	}
	assert.Empty(t, snapshotFiles(), "secrets and the widgets marked sensitive stay off disk")

	key := make([]byte, cache.SnapshotKeySize)
	for _, gvr := range []schema.GroupVersionResource{secretsGVR, widgetsGVR} {
		keys, errs := runAndShutdown(t, client, gvr, func(o *Options) { o.SnapshotDir, o.SnapshotKey = dir, key; o.MarkSensitive(widgetsGVR) })
		assert.Len(t, keys, 1)
		assert.Empty(t, errs)
	}
	assert.Equal(t, []string{"secrets.v1.snap", "widgets.v1.example.com.snap"}, snapshotFiles())
	data, err := os.ReadFile(filepath.Join(dir, "secrets.v1.snap"))
	require.NoError(t, err)
	assert.Equal(t, "KINFSNAE", string(data[:8]), "written encrypted")

	lists := countLists(client, secretsGVR)
	keys, errs := runAndShutdown(t, client, secretsGVR, func(o *Options) { o.SnapshotDir, o.SnapshotKey = dir, key })
	assert.Equal(t, []string{"a/token"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, lists, countLists(client, secretsGVR), "resumed from the encrypted snapshot without a LIST")
}

// TestFactorySnapshotIsTiedToTheCluster: a factory's snapshot is
// tied to the cluster, identified by its kube-system namespace's UID. The
// same cluster resumes without a LIST; another cluster (same directory, same
// resource, same scope) rejects the file with a *cache.SnapshotError and
// lists; a client that cannot read the identity neither resumes nor writes.
func TestFactorySnapshotIsTiedToTheCluster(t *testing.T) {
	dir := t.TempDir()
	clusterA, _ := newFakeClient(kubeSystem("uid-a"), newObject(widgetsGVR, "Widget", "a", "from-a", nil))
	keys, errs := runAndShutdown(t, clusterA, widgetsGVR, func(o *Options) { o.SnapshotDir = dir })
	require.Empty(t, errs)
	assert.Equal(t, []string{"a/from-a"}, keys)
	keys, errs = runAndShutdown(t, clusterA, widgetsGVR, func(o *Options) { o.SnapshotDir = dir })
	require.Empty(t, errs)
	assert.Equal(t, []string{"a/from-a"}, keys)
	assert.Equal(t, 1, countLists(clusterA, widgetsGVR), "the same cluster resumes without a LIST")

	clusterB, _ := newFakeClient(kubeSystem("uid-b"), newObject(widgetsGVR, "Widget", "a", "from-b", nil))
	keys, errs = runAndShutdown(t, clusterB, widgetsGVR, func(o *Options) { o.SnapshotDir = dir })
	assert.Equal(t, []string{"a/from-b"}, keys, "cluster B's informer holds cluster A's objects")
	assert.Equal(t, 1, countLists(clusterB, widgetsGVR))
	require.Len(t, errs, 1)
	var snapErr *cache.SnapshotError
	assert.ErrorAs(t, errs[0], &snapErr)

	path := filepath.Join(dir, "widgets.v1.example.com.snap")
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	unknown, _ := newFakeClient(newObject(widgetsGVR, "Widget", "a", "from-c", nil))
	keys, errs = runAndShutdown(t, unknown, widgetsGVR, func(o *Options) { o.SnapshotDir = dir })
	assert.Empty(t, errs)
	assert.Equal(t, []string{"a/from-c"}, keys)
	assert.Equal(t, 1, countLists(unknown, widgetsGVR))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a factory that does not know its cluster writes no snapshot")
}
