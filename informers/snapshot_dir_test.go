package informers_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	coreinformers "github.com/kinformer/kinformer/informers/core/v1"
)

// countPodLists counts the LIST requests for pods client has served so far.
func countPodLists(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == podsGVR {
			n++
		}
	}
	return n
}

// factoryRun is one run of a pod informer from a factory over client with opts:
// it records what the handler and the watch error handler receive, waits
// for the cache to sync, and returns the cached pod keys once the factory
// has shut down (which writes the snapshot).
type factoryRun struct {
	keys   []string
	adds   []string
	errors []error
}

func runFactory(t *testing.T, client *fake.Clientset, opts ...informers.SharedInformerOption) factoryRun {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	pods := factory.Core().V1().Pods()
	var mu sync.Mutex
	var run factoryRun
	_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		mu.Lock()
		defer mu.Unlock()
		p := obj.(*corev1.Pod)
		run.adds = append(run.adds, p.Namespace+"/"+p.Name)
	}})
	require.NoError(t, err)
	require.NoError(t, pods.Informer().SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		mu.Lock()
		defer mu.Unlock()
		run.errors = append(run.errors, err)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	got, err := pods.Lister().List(labels.Everything())
	require.NoError(t, err)
	run.keys = podKeys(got)
	cancel()
	factory.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	return run
}

// TestSnapshotDirRejectsSnapshotOfAnotherScope: a typed factory's snapshot file is tied to its
// namespace and to the selectors its tweak sets. The same configuration
// resumes from the file without a LIST; a factory with another namespace,
// another label selector, or none, rejects it with a *cache.SnapshotError
// naming both scopes and lists as usual.
func TestSnapshotDirRejectsSnapshotOfAnotherScope(t *testing.T) {
	web := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	db := func(o *metav1.ListOptions) { o.LabelSelector = "app=db" }
	for _, tc := range []struct {
		name      string
		opts      []informers.SharedInformerOption
		wantKeys  []string
		wantError string
	}{
		{"same configuration", []informers.SharedInformerOption{informers.WithNamespace("a"), informers.WithTweakListOptions(web)},
			[]string{"a/web1"}, ""},
		{"same configuration, another tweak func with the same effect", []informers.SharedInformerOption{informers.WithNamespace("a"),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web"; o.Limit = 7 })},
			[]string{"a/web1"}, ""},
		{"other namespace", []informers.SharedInformerOption{informers.WithNamespace("b"), informers.WithTweakListOptions(web)},
			[]string{"b/web2"}, `snapshot holds namespace="a" labelSelector="app=web" fieldSelector="", this informer selects namespace="b" labelSelector="app=web" fieldSelector=""`},
		{"other selector", []informers.SharedInformerOption{informers.WithNamespace("a"), informers.WithTweakListOptions(db)},
			[]string{"a/db1"}, `this informer selects namespace="a" labelSelector="app=db" fieldSelector=""`},
		{"unrestricted", nil,
			[]string{"a/db1", "a/web1", "b/web2"}, `this informer selects all objects of the type (no namespace, no selectors)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := newFakeClientset(
				newPod("a", "web1", map[string]string{"app": "web"}),
				newPod("a", "db1", map[string]string{"app": "db"}),
				newPod("b", "web2", map[string]string{"app": "web"}),
			)
			dir := t.TempDir()
			first := runFactory(t, client, informers.WithSnapshotDir(dir), informers.WithNamespace("a"), informers.WithTweakListOptions(web))
			require.Equal(t, []string{"a/web1"}, first.keys)
			require.Empty(t, first.errors)
			require.Equal(t, 1, countPodLists(client))
			_, err := os.Stat(filepath.Join(dir, informers.SnapshotFileName(reflect.TypeOf(&corev1.Pod{}))))
			require.NoError(t, err, "the first run wrote its snapshot")

			second := runFactory(t, client, append([]informers.SharedInformerOption{informers.WithSnapshotDir(dir)}, tc.opts...)...)
			assert.Equal(t, tc.wantKeys, second.keys)
			if tc.wantError == "" {
				assert.Equal(t, 1, countPodLists(client), "resumed without a LIST")
				assert.Empty(t, second.errors)
				assert.Equal(t, []string{"a/web1"}, second.adds)
				return
			}
			assert.Equal(t, 2, countPodLists(client), "a normal LIST follows the rejection")
			require.NotEmpty(t, second.errors)
			var serr *cache.SnapshotError
			require.ErrorAs(t, second.errors[0], &serr)
			assert.Equal(t, "load", serr.Op)
			assert.Contains(t, serr.Error(), tc.wantError)
			assert.ElementsMatch(t, tc.wantKeys, second.adds, "the handler saw the listed pods only")
		})
	}
}

// TestSnapshotDirLeavesOutInformersOfTheCallersOwnSelection: an informer
// built by InformerFor with the caller's own NewInformerFunc may select other
// objects than the factory's namespace and tweak say (here app=a, then
// app=b), which the factory cannot know: it writes and resumes no snapshot
// for it, so the second run lists and holds only its own selection. The
// factory's own informers still resume.
func TestSnapshotDirLeavesOutInformersOfTheCallersOwnSelection(t *testing.T) {
	dir := t.TempDir()
	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "a"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "b"}}},
	)
	run := func(app string) []string {
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithSnapshotDir(dir))
		informer := factory.InformerFor(&corev1.Pod{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredPodInformer(c, "", resync, cache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = "app=" + app })
		})
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		factory.StartWithContext(ctx)
		require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
		keys := informer.GetStore().ListKeys()
		cancel()
		factory.Shutdown()
		return keys
	}
	assert.Equal(t, []string{"ns/a"}, run("a"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no snapshot of an informer whose selection the factory does not know")
	assert.Equal(t, []string{"ns/b"}, run("b"))

	// The factory's own informer of the same type is snapshotted.
	runFactory(t, client, informers.WithSnapshotDir(dir))
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}
