package cache

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeObj is the queue tests' object: keyed by name, compared by value.
type fakeObj struct {
	name string
	val  int
	// xf counts how often a test transformer saw the object.
	xf int
}

func newFakeObj(name string, val int) fakeObj { return fakeObj{name: name, val: val} }

var errNotFakeObj = errors.New("not a fakeObj")

// fakeObjKey is the queue tests' key function; anything but a fakeObj is an error.
func fakeObjKey(obj interface{}) (string, error) {
	o, ok := obj.(fakeObj)
	if !ok {
		return "", errNotFakeObj
	}
	return o.name, nil
}

// knownStore is an ordered in-memory KeyListerGetter, playing the consumer's
// store (it satisfies client-go's KeyListerGetter as well as ours).
type knownStore struct {
	mu      sync.Mutex
	objs    map[string]interface{}
	failGet map[string]bool
}

func newKnownStore(objs ...fakeObj) *knownStore {
	k := &knownStore{objs: map[string]interface{}{}, failGet: map[string]bool{}}
	for _, o := range objs {
		k.objs[o.name] = o
	}
	return k
}

func (k *knownStore) ListKeys() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func (k *knownStore) GetByKey(key string) (interface{}, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failGet[key] {
		return nil, false, fmt.Errorf("lookup of %q failed", key)
	}
	o, ok := k.objs[key]
	return o, ok, nil
}

func (k *knownStore) set(key string, obj interface{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.objs[key] = obj
}

func (k *knownStore) del(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.objs, key)
}

// popOne pops one item from q, failing the test if Pop fails or blocks
// for more than a few seconds (the watchdog closes q to unblock it).
func popOne(t *testing.T, q Queue) (interface{}, bool) {
	t.Helper()
	var got interface{}
	var initial bool
	watchdog := time.AfterFunc(5*time.Second, q.Close)
	defer watchdog.Stop()
	_, err := q.Pop(func(obj interface{}, isInInitialList bool) error {
		got, initial = obj, isInInitialList
		return nil
	})
	require.NoError(t, err)
	return got, initial
}

func TestFIFO_OrderAndCoalescing(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Add(newFakeObj("foo", 10)))
	require.NoError(t, f.Add(newFakeObj("bar", 1)))
	require.NoError(t, f.Update(newFakeObj("foo", 11)))
	require.NoError(t, f.Add(newFakeObj("zab", 30)))
	require.NoError(t, f.Add(newFakeObj("foo", 13)))

	got, _ := popOne(t, f)
	assert.Equal(t, newFakeObj("foo", 13), got, "foo keeps its place and carries the newest value")
	require.NoError(t, f.Add(newFakeObj("foo", 14))) // goes to the back now
	for _, want := range []fakeObj{newFakeObj("bar", 1), newFakeObj("zab", 30), newFakeObj("foo", 14)} {
		got, _ := popOne(t, f)
		assert.Equal(t, want, got)
	}
}

func TestFIFO_DeleteDropsQueuedObject(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Add(newFakeObj("b", 2)))
	require.NoError(t, f.Delete(newFakeObj("a", 0)))
	require.NoError(t, f.Delete(newFakeObj("never-added", 0)))
	got, _ := popOne(t, f)
	assert.Equal(t, newFakeObj("b", 2), got)

	// Deleted then re-added: popped once, with the new value.
	require.NoError(t, f.Add(newFakeObj("c", 1)))
	require.NoError(t, f.Delete(newFakeObj("c", 1)))
	require.NoError(t, f.Add(newFakeObj("c", 2)))
	got, _ = popOne(t, f)
	assert.Equal(t, newFakeObj("c", 2), got)
	f.Close()
	_, err := f.Pop(func(interface{}, bool) error { t.Fatal("nothing should be processed"); return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

func TestFIFO_ReplaceOrderAndInitialList(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2), newFakeObj("a", 3), newFakeObj("c", 4)}, "7"))
	assert.False(t, f.HasSynced())
	want := []fakeObj{newFakeObj("a", 3), newFakeObj("b", 2), newFakeObj("c", 4)}
	for i, w := range want {
		got, initial := popOne(t, f)
		assert.Equal(t, w, got)
		assert.True(t, initial)
		assert.Equal(t, i == len(want)-1, f.HasSynced(), "after pop %d", i)
	}
	require.NoError(t, f.Add(newFakeObj("d", 5)))
	_, initial := popOne(t, f)
	assert.False(t, initial)

	// A later Replace drops what was queued.
	require.NoError(t, f.Add(newFakeObj("x", 1)))
	require.NoError(t, f.Replace([]interface{}{newFakeObj("y", 1)}, "8"))
	got, _ := popOne(t, f)
	assert.Equal(t, newFakeObj("y", 1), got)
}

func TestFIFO_HasSynced(t *testing.T) {
	tests := []struct {
		name    string
		actions []func(t *testing.T, f *FIFO)
		want    bool
	}{
		{name: "nothing", want: false},
		{name: "add first", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) { require.NoError(t, f.Add(newFakeObj("a", 1))) },
		}, want: true},
		{name: "delete first", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) { require.NoError(t, f.Delete(newFakeObj("a", 1))) },
		}, want: true},
		{name: "empty replace", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) { require.NoError(t, f.Replace(nil, "1")) },
		}, want: true},
		{name: "replace not popped", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) {
				require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
			},
		}, want: false},
		{name: "replace half popped", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) {
				require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
			},
			func(t *testing.T, f *FIFO) { popOne(t, f) },
		}, want: false},
		{name: "replace popped", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) {
				require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
			},
			func(t *testing.T, f *FIFO) { popOne(t, f) },
			func(t *testing.T, f *FIFO) { popOne(t, f) },
		}, want: true},
		{name: "duplicate keys in replace count once", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) {
				require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("a", 2)}, "1"))
			},
			func(t *testing.T, f *FIFO) { popOne(t, f) },
		}, want: true},
		{name: "add before replace makes the initial batch empty", actions: []func(*testing.T, *FIFO){
			func(t *testing.T, f *FIFO) { require.NoError(t, f.Add(newFakeObj("z", 1))) },
			func(t *testing.T, f *FIFO) { require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1)}, "1")) },
		}, want: true},
		{
			// Difference from client-go: the last initial key was deleted
			// while queued; popping the one before it completes the sync
			// even though Pop then has nothing left to process.
			name: "deleted initial items still complete the sync",
			actions: []func(*testing.T, *FIFO){
				func(t *testing.T, f *FIFO) {
					require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
				},
				func(t *testing.T, f *FIFO) { require.NoError(t, f.Delete(newFakeObj("b", 2))) },
				func(t *testing.T, f *FIFO) { popOne(t, f) },
				func(t *testing.T, f *FIFO) { popFIFOUntilBlocked(t, f) },
			}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFIFO(fakeObjKey)
			for _, a := range tt.actions {
				a(t, f)
			}
			assert.Equal(t, tt.want, f.HasSynced())
			assert.Equal(t, tt.want, IsDone(f.HasSyncedChecker()))
		})
	}
}

// popFIFOUntilBlocked runs Pop in a goroutine until it blocks on an empty
// queue (observed via HasSynced turning true), then closes f and waits.
func popFIFOUntilBlocked(t *testing.T, f *FIFO) {
	done := make(chan error, 1)
	go func() {
		_, err := f.Pop(func(interface{}, bool) error { return nil })
		done <- err
	}()
	select {
	case <-f.Done():
	case <-time.After(5 * time.Second):
		t.Error("HasSynced did not turn true")
	}
	f.Close()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrFIFOClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not return after Close")
	}
}

func TestFIFO_CloseUnblocksPop(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	const waiters = 5
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() {
			_, err := f.Pop(func(interface{}, bool) error { return nil })
			errs <- err
		}()
	}
	f.Close()
	assert.True(t, f.IsClosed())
	for i := 0; i < waiters; i++ {
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, ErrFIFOClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("Pop did not return after Close")
		}
	}
}

func TestFIFO_ItemsRemainPoppableAfterClose(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	f.Close()
	require.NoError(t, f.Add(newFakeObj("b", 2)), "writes are accepted after Close")
	obj, err := f.Pop(func(interface{}, bool) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, newFakeObj("a", 1), obj)
	obj, err = f.Pop(func(interface{}, bool) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, newFakeObj("b", 2), obj)
	_, err = f.Pop(func(interface{}, bool) error { return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

func TestFIFO_ProcessErrorIsReturnedAndNotRequeued(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	boom := errors.New("boom")
	obj, err := f.Pop(func(interface{}, bool) error { return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, newFakeObj("a", 1), obj)
	f.Close()
	_, err = f.Pop(func(interface{}, bool) error { return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

func TestFIFO_BadObjects(t *testing.T) {
	f := NewFIFO(nil) // MetaNamespaceKeyFunc
	for _, obj := range []interface{}{nil, 42, "str", struct{}{}, (*v1.Pod)(nil)} {
		for name, op := range map[string]func(interface{}) error{"Add": f.Add, "Update": f.Update, "Delete": f.Delete} {
			err := op(obj)
			var ke KeyError
			assert.True(t, errors.As(err, &ke), "%s(%#v) = %v, want KeyError", name, obj, err)
		}
		err := f.Replace([]interface{}{&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ok"}}, obj}, "1")
		var ke KeyError
		assert.True(t, errors.As(err, &ke), "Replace with %#v = %v, want KeyError", obj, err)
	}
	assert.False(t, f.HasSynced(), "failed calls do not count as populating")
	require.NoError(t, f.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}))
	got, _ := popOne(t, f)
	assert.Equal(t, "p", got.(*v1.Pod).Name, "the failed Replace queued nothing")
}

func TestFIFO_ZeroValueAndNames(t *testing.T) {
	var f FIFO
	assert.False(t, f.HasSynced())
	require.NoError(t, f.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}))
	assert.True(t, f.HasSynced())
	got, _ := popOne(t, &f)
	assert.Equal(t, "p", got.(*v1.Pod).Name)
	assert.Equal(t, "FIFO", f.HasSyncedChecker().Name())
	assert.NoError(t, f.Resync())
}

func TestFIFO_ResyncQueuesNothingNew(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	require.NoError(t, f.Resync())
	for _, w := range []fakeObj{newFakeObj("a", 1), newFakeObj("b", 1)} {
		got, _ := popOne(t, f)
		assert.Equal(t, w, got)
	}
	require.NoError(t, f.Resync())
	f.Close()
	_, err := f.Pop(func(interface{}, bool) error { return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

func TestFIFO_ConcurrentProducers(t *testing.T) {
	f := NewFIFO(fakeObjKey)
	const perProducer = 300
	var wg sync.WaitGroup
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perProducer; i++ {
				assert.NoError(t, f.Add(newFakeObj(fmt.Sprintf("p%d-%d", p, i), i)))
			}
		}()
	}
	last := map[byte]int{}
	for n := 0; n < 2*perProducer; n++ {
		got, _ := popOne(t, f)
		o := got.(fakeObj)
		assert.Greater(t, o.val, last[o.name[1]], "producer order kept")
		last[o.name[1]] = o.val
	}
	wg.Wait()
}
