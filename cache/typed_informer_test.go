package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

func TestTypedSharedIndexInformer(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a")
	srv.Create("b")
	informer := newPodInformer(t, srv, false, 0)
	typed := NewTypedSharedIndexInformer[*v1.Pod](informer)

	var mu sync.Mutex
	var got []string
	reg, err := typed.AddTypedEventHandler(TypedResourceEventHandlerDetailedFuncs[*v1.Pod]{
		AddFunc: func(p *v1.Pod, initial bool) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "add "+describeObj(p))
		},
		UpdateFunc: func(o, n *v1.Pod) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "update "+describeObj(o)+" -> "+describeObj(n))
		},
		DeleteFunc: func(d DeletedObject[*v1.Pod]) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "delete "+d.GetKey()+" unknown="+boolString(d.FinalStateUnknown != nil))
		},
	}, HandlerOptions{})
	require.NoError(t, err)
	_, err = typed.AddTypedEventHandler(TypedResourceEventHandlerFuncs[*v1.Pod]{}, HandlerOptions{}, HandlerOptions{})
	require.Error(t, err, "more than one HandlerOptions")

	require.NoError(t, typed.AddTypedIndexers(TypedIndexers[*v1.Pod]{"byName": func(p *v1.Pod) ([]string, error) {
		return []string{p.Name}, nil
	}}))
	runInformer(t, informer)
	waitUntilSynced(t, reg.HasSyncedChecker())
	waitForNextWatch(t, srv)
	srv.Update("a")
	srv.Delete("b")
	srv.DeleteMissed("a")
	srv.Expire()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 5
	}, waitTimeout, time.Millisecond)
	mu.Lock()
	assert.Equal(t, []string{"add ns/a@1", "add ns/b@2", "update ns/a@1 -> ns/a@3", "delete ns/b unknown=false", "delete ns/a unknown=true"}, got)
	mu.Unlock()

	srv.Create("c")
	indexer := typed.GetTypedIndexer()
	require.Eventually(t, func() bool {
		pods, err := indexer.ByTypedIndex("byName", "c")
		return err == nil && len(pods) == 1 && pods[0].Name == "c"
	}, waitTimeout, time.Millisecond)
	pods, err := indexer.TypedIndex(NamespaceIndex, newPod("x", ""))
	require.NoError(t, err)
	assert.Len(t, pods, 1)
	require.NoError(t, indexer.AddTypedIndexers(TypedIndexers[*v1.Pod]{"other": func(p *v1.Pod) ([]string, error) { return nil, nil }}))
	_, err = indexer.ByTypedIndex("missing", "x")
	require.Error(t, err)
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestTypedHandlerWrongTypeIsSkipped(t *testing.T) {
	var calls int
	h := &typedResourceEventHandler[*v1.Pod]{
		handler: TypedResourceEventHandlerFuncs[*v1.Pod]{
			AddFunc:    func(*v1.Pod) { calls++ },
			UpdateFunc: func(_, _ *v1.Pod) { calls++ },
			DeleteFunc: func(DeletedObject[*v1.Pod]) { calls++ },
		},
		logger: testLogger(t),
	}
	assert.NotPanics(t, func() {
		h.OnAdd(&v1.Node{}, false)
		h.OnUpdate(&v1.Node{}, newPod("a", "1"))
		h.OnDelete(&v1.Node{})
		h.OnDelete(DeletedFinalStateUnknown{Key: "x", Obj: &v1.Node{}})
	})
	assert.Equal(t, 0, calls)
	h.OnDelete(DeletedFinalStateUnknown{Key: "ns/a"})
	assert.Equal(t, 1, calls)

	idx := &typedIndexer[*v1.Pod]{Indexer: NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})}
	require.NoError(t, idx.Add(&v1.Node{}))
	require.NoError(t, idx.Add(newPod("a", "1")))
	_, err := idx.ByTypedIndex(NamespaceIndex, "")
	require.Error(t, err)
}
