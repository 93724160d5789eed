package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// unkeyableObjects are values no key function of this package can key: nil, a
// typed nil pointer, values that are not API objects, and API types without
// object metadata.
func unkeyableObjects() []struct {
	name string
	obj  interface{}
} {
	var nilPod *v1.Pod
	var nilTomb *DeletedFinalStateUnknown
	return []struct {
		name string
		obj  interface{}
	}{
		{"nil", nil},
		{"typed nil pointer", nilPod},
		{"nil tombstone pointer", nilTomb},
		{"string", "not an object"},
		{"int", 42},
		{"struct without metadata", struct{ Name string }{"x"}},
		{"status (list metadata only)", &metav1.Status{}},
		{"pod list", &v1.PodList{}},
	}
}

// malformedKeys are keys SplitMetaNamespaceKey rejects (more than one "/",
// as client-go).
var malformedKeys = []string{"a/b/c", "//", "ns/a/"}

// validPod is a pod every entry point accepts, used next to the bad ones.
func validPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
}

// badInputCall is one call of an exported entry point with bad input.
type badInputCall struct {
	name string
	// call makes the call; it returns the error the entry point returned.
	call func() error
	// keyError asks for the error to be (or wrap) a KeyError, as client-go
	// returns one there.
	keyError bool
}

// callsTakingAnObject lists the calls taking one object, for obj.
func callsTakingAnObject(obj interface{}) []badInputCall {
	keyFn := func(f KeyFunc) func() error {
		return func() error { _, err := f(obj); return err }
	}
	store := NewStore(MetaNamespaceKeyFunc)
	indexer := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	tsStore := NewThreadSafeStore(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, Indices{})
	delta := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: indexer})
	fifo := NewFIFO(MetaNamespaceKeyFunc)
	real := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
	realPlain := NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: indexer})
	heap := NewHeap(MetaNamespaceKeyFunc, func(a, b interface{}) bool { return false })
	ttl := NewTTLStore(MetaNamespaceKeyFunc, time.Hour)
	undelta := NewUndeltaStore(func([]interface{}) {}, MetaNamespaceKeyFunc)
	withList := func(f func([]interface{}, string) error) func() error {
		return func() error { return f([]interface{}{validPod("ok"), obj}, "1") }
	}
	return []badInputCall{
		{name: "MetaNamespaceKeyFunc", call: keyFn(MetaNamespaceKeyFunc)},
		{name: "DeletionHandlingMetaNamespaceKeyFunc", call: keyFn(DeletionHandlingMetaNamespaceKeyFunc)},
		{name: "ObjectToName", call: func() error { _, err := ObjectToName(obj); return err }},
		{name: "DeletionHandlingObjectToName", call: func() error { _, err := DeletionHandlingObjectToName(obj); return err }},
		{name: "MetaNamespaceIndexFunc", call: func() error { _, err := MetaNamespaceIndexFunc(obj); return err }},
		{name: "IndexFuncToKeyFuncAdapter", call: keyFn(IndexFuncToKeyFuncAdapter(MetaNamespaceIndexFunc))},

		{name: "Store.Add", call: func() error { return store.Add(obj) }, keyError: true},
		{name: "Store.Update", call: func() error { return store.Update(obj) }, keyError: true},
		{name: "Store.Delete", call: func() error { return store.Delete(obj) }, keyError: true},
		{name: "Store.Get", call: func() error { _, _, err := store.Get(obj); return err }, keyError: true},
		{name: "Store.Replace", call: withList(store.Replace), keyError: true},
		{name: "Store.Transaction", call: func() error {
			if err := store.(TransactionStore).Transaction(Transaction{Type: TransactionTypeAdd, Object: obj}); err != nil {
				return err
			}
			return nil
		}, keyError: true},
		{name: "Indexer.Add", call: func() error { return indexer.Add(obj) }, keyError: true},
		{name: "Indexer.Index", call: func() error { _, err := indexer.Index(NamespaceIndex, obj); return err }},
		{name: "ThreadSafeStore.Index", call: func() error { _, err := tsStore.Index(NamespaceIndex, obj); return err }},
		{name: "ThreadSafeStore.Add", call: func() error {
			// The caller names the key: the object is stored outside the
			// namespace index that fails on it, and the failure reported.
			tsStore.Add("ns/bad", obj)
			defer tsStore.Delete("ns/bad")
			if _, exists := tsStore.Get("ns/bad"); !exists {
				return nil
			}
			if keys, err := tsStore.IndexKeys(NamespaceIndex, "ns"); err != nil || slices.Contains(keys, "ns/bad") {
				return nil
			}
			return errStoredOutsideTheIndex
		}},

		{name: "DeltaFIFO.Add", call: func() error { return delta.Add(obj) }, keyError: true},
		{name: "DeltaFIFO.Update", call: func() error { return delta.Update(obj) }, keyError: true},
		{name: "DeltaFIFO.Delete", call: func() error { return delta.Delete(obj) }, keyError: true},
		{name: "DeltaFIFO.KeyOf", call: func() error { _, err := delta.KeyOf(obj); return err }, keyError: true},
		{name: "DeltaFIFO.Replace", call: withList(delta.Replace), keyError: true},
		{name: "FIFO.Add", call: func() error { return fifo.Add(obj) }, keyError: true},
		{name: "FIFO.Update", call: func() error { return fifo.Update(obj) }, keyError: true},
		{name: "FIFO.Delete", call: func() error { return fifo.Delete(obj) }, keyError: true},
		{name: "FIFO.Replace", call: withList(fifo.Replace), keyError: true},
		{name: "RealFIFO.Add", call: func() error { return real.Add(obj) }, keyError: true},
		{name: "RealFIFO.Update", call: func() error { return real.Update(obj) }, keyError: true},
		{name: "RealFIFO.Delete", call: func() error { return real.Delete(obj) }, keyError: true},
		{name: "RealFIFO(non-atomic).Replace", call: withList(realPlain.Replace), keyError: true},
		{name: "Heap.Add", call: func() error { return heap.Add(obj) }, keyError: true},
		{name: "Heap.Update", call: func() error { return heap.Update(obj) }, keyError: true},
		{name: "Heap.Delete", call: func() error { return heap.Delete(obj) }, keyError: true},
		{name: "Heap.AddIfNotPresent", call: func() error { return heap.AddIfNotPresent(obj) }, keyError: true},
		{name: "Heap.BulkAdd", call: func() error { return heap.BulkAdd([]interface{}{validPod("ok"), obj}) }, keyError: true},
		{name: "Heap.Get", call: func() error { _, _, err := heap.Get(obj); return err }, keyError: true},
		{name: "TTLStore.Add", call: func() error { return ttl.Add(obj) }, keyError: true},
		{name: "TTLStore.Delete", call: func() error { return ttl.Delete(obj) }, keyError: true},
		{name: "TTLStore.Get", call: func() error { _, _, err := ttl.Get(obj); return err }, keyError: true},
		{name: "TTLStore.Replace", call: withList(ttl.Replace), keyError: true},
		{name: "UndeltaStore.Add", call: func() error { return undelta.Add(obj) }, keyError: true},
		{name: "UndeltaStore.Delete", call: func() error { return undelta.Delete(obj) }, keyError: true},
		{name: "UndeltaStore.Replace", call: withList(undelta.Replace), keyError: true},
	}
}

// callsTakingAKey lists the calls taking a key (or a name), for a malformed
// key; they must fail, or find nothing without failing where client-go's
// contract is a plain lookup.
func callsTakingAKey(key string) (mustFail []badInputCall, lookups []func() (bool, error)) {
	indexer := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	_ = indexer.Add(validPod("a"))
	lister := NewGenericLister(indexer, schema.GroupResource{Resource: "pods"})
	heap := NewHeap(MetaNamespaceKeyFunc, func(a, b interface{}) bool { return false })
	mutation := NewIntegerResourceVersionMutationCache(klog.Background(), indexer, indexer, time.Minute, true)
	mustFail = []badInputCall{
		{name: "SplitMetaNamespaceKey", call: func() error { _, _, err := SplitMetaNamespaceKey(key); return err }},
		{name: "ParseObjectName", call: func() error { _, err := ParseObjectName(key); return err }},
		{name: "DeletionHandlingObjectToName(tombstone)", call: func() error {
			_, err := DeletionHandlingObjectToName(DeletedFinalStateUnknown{Key: key})
			return err
		}},
		{name: "GenericLister.Get", call: func() error { _, err := lister.Get(key); return err }},
		{name: "GenericNamespaceLister.Get", call: func() error { _, err := lister.ByNamespace("ns").Get(key); return err }},
	}
	lookups = []func() (bool, error){
		func() (bool, error) { _, ok, err := indexer.GetByKey(key); return ok, err },
		func() (bool, error) { _, ok, err := heap.GetByKey(key); return ok, err },
		func() (bool, error) { _, ok, err := mutation.GetByKey(key); return ok, err },
	}
	return mustFail, lookups
}

// errStoredOutsideTheIndex is what the ThreadSafeStore.Add entry point
// returns when the store kept a bad object under the caller's key, outside
// the namespace index.
var errStoredOutsideTheIndex = errors.New("stored outside the namespace index")

// TestBadInputEveryEntryPoint throws bad objects and malformed keys at every
// exported entry point that takes objects or keys and checks that each
// returns an error (a KeyError where client-go returns one) and none panics.
func TestBadInputEveryEntryPoint(t *testing.T) {
	for _, bad := range unkeyableObjects() {
		for _, e := range callsTakingAnObject(bad.obj) {
			t.Run(bad.name+"/"+e.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = e.call() })
				require.Error(t, err)
				if e.keyError {
					var ke KeyError
					assert.True(t, errors.As(err, &ke), "want a KeyError, got %T: %v", err, err)
				}
			})
		}
	}
	for _, key := range malformedKeys {
		mustFail, lookups := callsTakingAKey(key)
		for _, e := range mustFail {
			t.Run(fmt.Sprintf("key %q/%s", key, e.name), func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = e.call() })
				require.Error(t, err)
			})
		}
		for i, lookup := range lookups {
			t.Run(fmt.Sprintf("key %q/lookup %d", key, i), func(t *testing.T) {
				var found bool
				var err error
				require.NotPanics(t, func() { found, err = lookup() })
				require.NoError(t, err)
				assert.False(t, found)
			})
		}
	}
}

// TestBadInputIndexAndListerCalls covers the index, lister and registration
// calls whose bad input is a name or a stored value rather than an object.
func TestBadInputIndexAndListerCalls(t *testing.T) {
	indexer := NewIndexer(func(obj interface{}) (string, error) { return fmt.Sprint(obj), nil }, Indexers{})
	require.NoError(t, indexer.Add("a stored string"))
	everything := labels.SelectorFromSet(labels.Set{"app": "x"})
	lister := NewGenericLister(indexer, schema.GroupResource{Resource: "pods"})
	cases := []struct {
		name string
		call func() error
	}{
		{"Indexer.ByIndex unknown index", func() error { _, err := indexer.ByIndex("missing", "x"); return err }},
		{"Indexer.IndexKeys unknown index", func() error { _, err := indexer.IndexKeys("missing", "x"); return err }},
		{"Indexer.Index unknown index", func() error { _, err := indexer.Index("missing", validPod("a")); return err }},
		{"Indexer.AddIndexers nil function", func() error { return indexer.AddIndexers(Indexers{"nilfn": nil}) }},
		{"empty Indexer.AddIndexers nil function", func() error {
			return NewIndexer(MetaNamespaceKeyFunc, Indexers{}).AddIndexers(Indexers{"nilfn": nil})
		}},
		{"ListAll non-object with selector", func() error { return ListAll(indexer, everything, func(interface{}) {}) }},
		{"ListAllByNamespace non-object", func() error {
			return ListAllByNamespace(indexer, "ns", labels.Everything(), func(interface{}) {})
		}},
		{"ListAll nil store", func() error { return ListAll(nil, labels.Everything(), func(interface{}) {}) }},
		{"ListAll nil append function", func() error { return ListAll(indexer, labels.Everything(), nil) }},
		{"ListAllByNamespace nil append function", func() error { return ListAllByNamespace(indexer, "ns", nil, nil) }},
		{"ListAllByNamespace nil indexer", func() error { return ListAllByNamespace(nil, "ns", nil, func(interface{}) {}) }},
		{"GenericLister.List non-object", func() error { _, err := lister.List(labels.Everything()); return err }},
		{"GenericLister.Get non-object", func() error { _, err := lister.Get("a stored string"); return err }},
		{"MutationCache.ByIndex unknown index", func() error {
			_, err := NewIntegerResourceVersionMutationCache(klog.Background(), indexer, indexer, time.Minute, true).ByIndex("missing", "x")
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.Error(t, err)
		})
	}
	assert.NotPanics(t, func() {
		assert.Equal(t, ObjectName{}, MetaObjectToName(nil))
		var nilMeta *metav1.ObjectMeta
		assert.Equal(t, ObjectName{}, MetaObjectToName(nilMeta))
	})
}

// badEventListWatch lists pods a and b, then serves watches whose events mix good
// pods with values that are not usable objects. Each watch starts after the
// event whose resourceVersion it asks for, as a server does; a value that is
// not a pod is served once only (a transient corruption: the Reflector
// restarts the watch after it and must then get the events behind it). A
// watch stays open after its last event. It is written by hand because
// fakeapi scripts a fixed sequence of watches, and this one must answer
// however many resumes the Reflector makes.
type badEventListWatch struct {
	events []watch.Event
	// watches counts opened watches.
	watches atomic.Int32
	mu      sync.Mutex
	served  map[int]bool
}

func (lw *badEventListWatch) List(metav1.ListOptions) (runtime.Object, error) {
	return &v1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "2"},
		Items:    []v1.Pod{*newPod("a", "1"), *newPod("b", "2"), *newPod("bad-list", "2")},
	}, nil
}

func (lw *badEventListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	lw.watches.Add(1)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.served == nil {
		lw.served = map[int]bool{}
	}
	start := 0
	for i, ev := range lw.events {
		if pod, ok := ev.Object.(*v1.Pod); ok && pod != nil && pod.ResourceVersion == options.ResourceVersion {
			start = i + 1
		}
	}
	w := watch.NewFakeWithChanSize(len(lw.events), false)
	for i := start; i < len(lw.events); i++ {
		ev := lw.events[i]
		if pod, ok := ev.Object.(*v1.Pod); !ok || pod == nil {
			if lw.served[i] {
				continue
			}
			lw.served[i] = true
		}
		w.Action(ev.Type, ev.Object)
	}
	return w, nil
}

func (*badEventListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// TestBadInputThroughTheInformer feeds an informer, through its
// ListerWatcher and its transform, with values that are not usable
// objects: nil, typed nil pointers, objects without metadata, non-objects.
// The informer must neither panic nor stop: bad values are dropped (and
// counted), good ones are stored and delivered in order, and the handler
// registration calls reject nil and foreign registrations with errors.
func TestBadInputThroughTheInformer(t *testing.T) {
	var nilPod *v1.Pod
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			lw := &badEventListWatch{events: []watch.Event{
				{Type: watch.Added, Object: newPod("c", "3")},
				{Type: watch.Added, Object: nil},
				{Type: watch.Added, Object: nilPod},
				{Type: watch.Modified, Object: &metav1.Status{}},
				{Type: watch.Added, Object: newPod("bad-watch", "4")},
				{Type: watch.Deleted, Object: nilPod},
				{Type: watch.Modified, Object: newPod("a", "5")},
			}}
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
				Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
				UseDeltaFIFO: q.useDeltaFIFO,
			}).(*sharedIndexInformer)
			// The transform turns the pods named bad-* into unusable values,
			// past the Reflector's own checks.
			require.NoError(t, informer.SetTransform(func(obj interface{}) (interface{}, error) {
				if pod, ok := obj.(*v1.Pod); ok {
					switch pod.Name {
					case "bad-list":
						return &metav1.Status{}, nil
					case "bad-watch":
						return "not an object", nil
					}
				}
				return obj, nil
			}))
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)

			_, err = informer.AddEventHandler(nil)
			require.Error(t, err)
			require.Error(t, informer.RemoveEventHandler(nil))
			require.Error(t, ShutDownEventHandler(informer, nil))
			require.Error(t, ShutDownEventHandler(nil, reg))

			runInformer(t, informer)
			waitUntilSynced(t, reg.HasSyncedChecker())
			got := rec.waitN(t, 4)
			want := []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"add ns/c@3 initial=false",
				"update ns/a@1 -> ns/a@5",
			}
			if q.useDeltaFIFO {
				assert.Equal(t, perObject(want), perObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{"ns/a@5", "ns/b@2", "ns/c@3"}, describedStore(informer.GetStore()))
			assert.False(t, informer.IsStopped())
			if !q.useDeltaFIFO {
				// The DeltaFIFO rejects the watched bad value itself when
				// queueing; the RealFIFO queues it and the informer drops it
				// when applying. Both drop the listed one when applying.
				assert.Equal(t, int64(2), informer.applier.Rejected())
			}
		})
	}
}
