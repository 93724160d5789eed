package dynamicinformer_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

// countLists counts the LIST requests for gvr client has served so far.
func countLists(client *fake.FakeDynamicClient, gvr schema.GroupVersionResource) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == gvr {
			n++
		}
	}
	return n
}

// runAndShutdown runs gvr's informer of a factory built with opts until it synced,
// shuts the factory down (which writes the snapshot) and returns the cached
// keys and what the watch error handler received.
func runAndShutdown(t *testing.T, client *fake.FakeDynamicClient, gvr schema.GroupVersionResource, opts ...dynamicinformer.DynamicSharedInformerOption) ([]string, []error) {
	t.Helper()
	factory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, opts...)
	informer := factory.ForResource(gvr)
	var mu sync.Mutex
	var errs []error
	require.NoError(t, informer.Informer().SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{gvr: true}, factory.WaitForCacheSync(ctx.Done()))
	keys := informer.Informer().GetStore().ListKeys()
	cancel()
	factory.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	return keys, errs
}

// TestDynamicFactorySnapshotDirWarmRestarts: the options constructor's WithSnapshotDir makes
// the dynamic factory's informers resume from "<resource>.<version>.<group>.snap"
// without a LIST when the namespace and selectors are the same; another
// namespace rejects the file with a *cache.SnapshotError and lists.
func TestDynamicFactorySnapshotDirWarmRestarts(t *testing.T) {
	client, _ := newFakeClient(
		kubeSystem("uid-a"),
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "a", "w2", map[string]string{"app": "db"}),
		newObject(widgetsGVR, "Widget", "b", "w3", map[string]string{"app": "web"}),
	)
	dir := t.TempDir()
	web := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	keys, errs := runAndShutdown(t, client, widgetsGVR, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithNamespace("a"), dynamicinformer.WithTweakListOptions(web))
	assert.Equal(t, []string{"a/w1"}, keys)
	assert.Empty(t, errs)
	require.Equal(t, 1, countLists(client, widgetsGVR))
	_, err := os.Stat(filepath.Join(dir, "widgets.v1.example.com.snap"))
	require.NoError(t, err)

	keys, errs = runAndShutdown(t, client, widgetsGVR, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithNamespace("a"), dynamicinformer.WithTweakListOptions(web))
	assert.Equal(t, []string{"a/w1"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, 1, countLists(client, widgetsGVR), "resumed from the snapshot without a LIST")

	keys, errs = runAndShutdown(t, client, widgetsGVR, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithNamespace("b"), dynamicinformer.WithTweakListOptions(web))
	assert.Equal(t, []string{"b/w3"}, keys)
	assert.Equal(t, 2, countLists(client, widgetsGVR), "a normal LIST follows the rejection")
	require.NotEmpty(t, errs)
	var serr *cache.SnapshotError
	require.ErrorAs(t, errs[0], &serr)
	assert.Contains(t, serr.Error(), `this informer selects namespace="b" labelSelector="app=web"`)
}

// TestDynamicFactoryOptionsConstructorAppliesOptions: the options constructor without options
// is NewDynamicSharedInformerFactory (all namespaces, no snapshot file), and
// WithNamespace and WithTweakListOptions restrict it as
// NewFilteredDynamicSharedInformerFactory's arguments do.
func TestDynamicFactoryOptionsConstructorAppliesOptions(t *testing.T) {
	objs := []runtime.Object{
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "a", "w2", map[string]string{"app": "db"}),
		newObject(widgetsGVR, "Widget", "b", "w3", map[string]string{"app": "web"}),
	}
	for _, tc := range []struct {
		name string
		opts []dynamicinformer.DynamicSharedInformerOption
		want []string
	}{
		{"no options", nil, []string{"a/w1", "a/w2", "b/w3"}},
		{"nil option", []dynamicinformer.DynamicSharedInformerOption{nil}, []string{"a/w1", "a/w2", "b/w3"}},
		{"namespace", []dynamicinformer.DynamicSharedInformerOption{dynamicinformer.WithNamespace("a")}, []string{"a/w1", "a/w2"}},
		{"selector", []dynamicinformer.DynamicSharedInformerOption{dynamicinformer.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })}, []string{"a/w1", "b/w3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := newFakeClient(objs...)
			keys, errs := runAndShutdown(t, client, widgetsGVR, tc.opts...)
			assert.ElementsMatch(t, tc.want, keys)
			assert.Empty(t, errs)
		})
	}
}

// TestDynamicFactorySnapshotProtection: the dynamic factory marks core secrets
// sensitive and WithSensitiveResources marks others; without a key their
// snapshots stay off disk, and WithSnapshotEncryptionKey writes them
// encrypted and resumes from them.
func TestDynamicFactorySnapshotProtection(t *testing.T) {
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
		_, errs := runAndShutdown(t, client, gvr, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithSensitiveResources(widgetsGVR))
		assert.Empty(t, errs)
	}
	assert.Empty(t, snapshotFiles(), "secrets and the widgets marked sensitive stay off disk")

	key := make([]byte, cache.SnapshotKeySize)
	for _, gvr := range []schema.GroupVersionResource{secretsGVR, widgetsGVR} {
		keys, errs := runAndShutdown(t, client, gvr, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithSensitiveResources(widgetsGVR), dynamicinformer.WithSnapshotEncryptionKey(key))
		assert.Len(t, keys, 1)
		assert.Empty(t, errs)
	}
	assert.Equal(t, []string{"secrets.v1.snap", "widgets.v1.example.com.snap"}, snapshotFiles())
	data, err := os.ReadFile(filepath.Join(dir, "secrets.v1.snap"))
	require.NoError(t, err)
	assert.Equal(t, "KINFSNAE", string(data[:8]), "written encrypted")

	lists := countLists(client, secretsGVR)
	keys, errs := runAndShutdown(t, client, secretsGVR, dynamicinformer.WithSnapshotDir(dir), dynamicinformer.WithSnapshotEncryptionKey(key))
	assert.Equal(t, []string{"a/token"}, keys)
	assert.Empty(t, errs)
	assert.Equal(t, lists, countLists(client, secretsGVR), "resumed from the encrypted snapshot without a LIST")
}

// kubeSystem is the kube-system namespace of a cluster whose identity is uid.
func kubeSystem(uid string) *unstructured.Unstructured {
	ns := newObject(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", "", "kube-system", nil)
	ns.SetUID(types.UID(uid))
	return ns
}

// TestDynamicFactorySnapshotIsTiedToTheCluster: a dynamic factory's snapshot
// is tied to the cluster, identified by its kube-system namespace's UID. The
// same cluster resumes without a LIST; another cluster (same directory, same
// resource, same scope) rejects the file with a *cache.SnapshotError and
// lists; a client that cannot read the identity neither resumes nor writes.
func TestDynamicFactorySnapshotIsTiedToTheCluster(t *testing.T) {
	dir := t.TempDir()
	clusterA, _ := newFakeClient(kubeSystem("uid-a"), newObject(widgetsGVR, "Widget", "a", "from-a", nil))
	keys, errs := runAndShutdown(t, clusterA, widgetsGVR, dynamicinformer.WithSnapshotDir(dir))
	require.Empty(t, errs)
	assert.Equal(t, []string{"a/from-a"}, keys)
	keys, errs = runAndShutdown(t, clusterA, widgetsGVR, dynamicinformer.WithSnapshotDir(dir))
	require.Empty(t, errs)
	assert.Equal(t, []string{"a/from-a"}, keys)
	assert.Equal(t, 1, countLists(clusterA, widgetsGVR), "the same cluster resumes without a LIST")

	clusterB, _ := newFakeClient(kubeSystem("uid-b"), newObject(widgetsGVR, "Widget", "a", "from-b", nil))
	keys, errs = runAndShutdown(t, clusterB, widgetsGVR, dynamicinformer.WithSnapshotDir(dir))
	assert.Equal(t, []string{"a/from-b"}, keys, "cluster B's informer holds cluster A's objects")
	assert.Equal(t, 1, countLists(clusterB, widgetsGVR))
	require.Len(t, errs, 1)
	var snapErr *cache.SnapshotError
	assert.ErrorAs(t, errs[0], &snapErr)

	path := filepath.Join(dir, "widgets.v1.example.com.snap")
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	unknown, _ := newFakeClient(newObject(widgetsGVR, "Widget", "a", "from-c", nil))
	keys, errs = runAndShutdown(t, unknown, widgetsGVR, dynamicinformer.WithSnapshotDir(dir))
	assert.Empty(t, errs)
	assert.Equal(t, []string{"a/from-c"}, keys)
	assert.Equal(t, 1, countLists(unknown, widgetsGVR))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a factory that does not know its cluster writes no snapshot")
}
