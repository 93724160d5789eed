package apply

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/store"
)

// testDelta is the delta type of the tests.
type testDelta struct {
	kind Kind
	obj  any
}

// The records of the tests' list, bookmark and resync deltas, and their
// tombstone.
type (
	testList struct {
		objs []any
		keys []string
		rv   string
	}
	testBookmark struct {
		rv  string
		end bool
	}
	testSyncAll struct{}
	testTomb    struct {
		key string
		obj any
	}
)

func testOps() Ops[testDelta] {
	return Ops[testDelta]{
		Split: func(d testDelta) (Kind, any) { return d.kind, d.obj },
		Type:  func(d testDelta) string { return fmt.Sprintf("kind%d", d.kind) },
		Deltas: func(obj any) ([]testDelta, bool) {
			d, ok := obj.([]testDelta)
			return d, ok
		},
		List: func(obj any) ([]any, []string, string, bool) {
			l, ok := obj.(testList)
			return l.objs, l.keys, l.rv, ok
		},
		IsSyncAll: func(obj any) bool { _, ok := obj.(testSyncAll); return ok },
		Bookmark: func(obj any) (string, bool, bool) {
			b, ok := obj.(testBookmark)
			return b.rv, b.end, ok
		},
		IsTombstone: func(obj any) bool { _, ok := obj.(testTomb); return ok },
		Tombstone:   func(key string, obj any) any { return testTomb{key: key, obj: obj} },
	}
}

func testPod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// testKeys is a key function counting its calls: "ns/name" of a pod, the
// key of a tombstone, an error for anything else.
type testKeys struct{ calls atomic.Int64 }

func (k *testKeys) key(obj any) (string, error) {
	k.calls.Add(1)
	if t, ok := obj.(testTomb); ok {
		return t.key, nil
	}
	m, err := store.ObjectMeta(obj)
	if err != nil {
		return "", fmt.Errorf("no key: %w", err)
	}
	return m.GetNamespace() + "/" + m.GetName(), nil
}

// testStore is the Store view of an engine map (what package cache's own
// store offers), for the methods the applier calls on Store.
type testStore struct {
	m    *store.Map
	keys *testKeys
}

func (s testStore) Get(obj any) (any, bool, error) {
	k, err := s.keys.key(obj)
	if err != nil {
		return nil, false, err
	}
	o, ok := s.m.Get(k)
	return o, ok, nil
}
func (s testStore) GetByKey(key string) (any, bool, error) { o, ok := s.m.Get(key); return o, ok, nil }
func (s testStore) Add(obj any) error                      { return s.Update(obj) }
func (s testStore) Update(obj any) error {
	k, err := s.keys.key(obj)
	if err != nil {
		return err
	}
	_, _, err = s.m.Put(k, obj)
	return err
}
func (s testStore) Delete(obj any) error {
	k, err := s.keys.key(obj)
	if err != nil {
		return err
	}
	s.m.Delete(k, obj)
	return nil
}
func (s testStore) List() []any        { return s.m.List() }
func (s testStore) ListKeys() []string { return s.m.ListKeys() }
func (s testStore) Replace(list []any, rv string) error {
	keys := make([]string, len(list))
	for i, o := range list {
		k, err := s.keys.key(o)
		if err != nil {
			return err
		}
		keys[i] = k
	}
	return s.m.Replace(keys, list, rv)
}
func (s testStore) Bookmark(rv string) { s.m.Bookmark(rv) }

// testRecorder is a handler recording what it is told.
type testRecorder struct{ got []string }

func testDesc(obj any) string {
	if t, ok := obj.(testTomb); ok {
		return "tombstone(" + t.key + ")"
	}
	if m, err := store.ObjectMeta(obj); err == nil {
		return m.GetName() + "@" + m.GetResourceVersion()
	}
	return fmt.Sprintf("%v", obj)
}

func (r *testRecorder) OnAdd(obj any, initial bool) {
	r.got = append(r.got, fmt.Sprintf("add %s initial=%v", testDesc(obj), initial))
}
func (r *testRecorder) OnUpdate(old, obj any) {
	r.got = append(r.got, fmt.Sprintf("update %s -> %s", testDesc(old), testDesc(obj)))
}
func (r *testRecorder) OnDelete(obj any) { r.got = append(r.got, "delete "+testDesc(obj)) }

// testSetup is an applier over an informer's cache (a watermark) of the
// engine's store, written directly (Cache), with a recorder.
type testSetup struct {
	m    *store.Map
	keys *testKeys
	rec  *testRecorder
	cfg  Config[testDelta]
}

func newTestSetup(t testing.TB, indexers map[string]store.IndexFunc) *testSetup {
	t.Helper()
	s := &testSetup{
		m:    store.New(store.Config{Indexers: indexers, Watermark: true}),
		keys: &testKeys{},
		rec:  &testRecorder{},
	}
	s.cfg = Config[testDelta]{
		Logger: klog.Background(),
		Ops:    testOps(),
		Store:  testStore{m: s.m, keys: s.keys},
		Cache: &Cache{
			Map:                    s.m,
			Key:                    s.keys.key,
			Watermark:              true,
			AdvanceResourceVersion: func(rv string) { s.m.AdvanceResourceVersion(rv) },
			ResetResourceVersion:   func(rv string) { s.m.ResetResourceVersion(rv) },
			ReplaceKeyed:           s.m.Replace,
		},
		Handler: s.rec,
	}
	return s
}

func (s *testSetup) put(t *testing.T, objs ...any) {
	t.Helper()
	for _, o := range objs {
		k, err := s.keys.key(o)
		require.NoError(t, err)
		_, _, err = s.m.Put(k, o)
		require.NoError(t, err)
	}
	s.keys.calls.Store(0)
}

// TestApplierAppliesInOrderAndSkipsWhatTheStoreRefuses applies watch
// deltas one by one and as a batch: every applied change is notified in
// order, an object without a key is counted and skipped while the others
// are applied, a tombstone's delete is notified with the tombstone, and
// the watermark moves to the newest watch change.
func TestApplierAppliesInOrderAndSkipsWhatTheStoreRefuses(t *testing.T) {
	a1, a2, b1, c3 := testPod("a", "1"), testPod("a", "2"), testPod("b", "1"), testPod("c", "3")
	deltas := []testDelta{
		{Updated, a2}, {Added, "no metadata"}, {Added, b1}, {Sync, c3},
		{Deleted, testTomb{key: "ns/b", obj: b1}}, {Added, testPod("d", "4")},
	}
	want := []string{
		"update a@1 -> a@2", "add b@1 initial=false", "add c@3 initial=false",
		"delete tombstone(ns/b)", "add d@4 initial=false",
	}
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			s := newTestSetup(t, nil)
			s.put(t, a1)
			a := New(s.cfg)
			var err error
			if batch {
				err = a.ProcessBatch(deltas, false)
			} else {
				err = a.Process(deltas, false)
			}
			require.NoError(t, err)
			assert.Equal(t, want, s.rec.got)
			assert.ElementsMatch(t, []string{"ns/a", "ns/c", "ns/d"}, s.m.ListKeys())
			assert.Equal(t, int64(1), a.Rejected())
			assert.Equal(t, "4", s.m.ResourceVersion(), "the newest watch change")
			assert.Equal(t, uint64(len(deltas)), a.Applied(deltas))
		})
	}
}

// TestApplierReusesTheQueueKeys: with KeysOf set, no key is computed for
// a popped delta, one by one or in a batch.
func TestApplierReusesTheQueueKeys(t *testing.T) {
	a1, a2, b1 := testPod("a", "1"), testPod("a", "2"), testPod("b", "1")
	deltas := []testDelta{{Updated, a2}, {Added, b1}, {Deleted, a2}}
	keys := []string{"ns/a", "ns/b", "ns/a"}
	for _, batch := range []bool{false, true} {
		s := newTestSetup(t, nil)
		s.put(t, a1)
		s.cfg.KeysOf = func(ds []testDelta) []string {
			if len(ds) == len(keys) {
				return keys
			}
			return nil
		}
		a := New(s.cfg)
		if batch {
			require.NoError(t, a.ProcessBatch(deltas, false))
		} else {
			require.NoError(t, a.Process(deltas, false))
		}
		assert.Equal(t, []string{"update a@1 -> a@2", "add b@1 initial=false", "delete a@2"}, s.rec.got)
		assert.Equal(t, []string{"ns/b"}, s.m.ListKeys())
		assert.Equal(t, int64(0), s.keys.calls.Load(), "batch=%v", batch)
	}
}

// TestApplierTransformsWhatItStoresAndNotifiesWhatWasPopped: the store's
// transform applies to stored objects; the handler gets them as popped.
func TestApplierTransformsWhatItStoresAndNotifiesWhatWasPopped(t *testing.T) {
	for _, batch := range []bool{false, true} {
		s := newTestSetup(t, nil)
		s.cfg.Cache.Transform = func(obj any) (any, error) {
			p := obj.(*v1.Pod).DeepCopy()
			if p.Name == "bad" {
				return nil, errors.New("refused")
			}
			p.Labels = map[string]string{"transformed": "yes"}
			return p, nil
		}
		a := New(s.cfg)
		deltas := []testDelta{{Added, testPod("a", "1")}, {Added, testPod("bad", "2")}}
		if batch {
			require.NoError(t, a.ProcessBatch(deltas, true))
		} else {
			require.NoError(t, a.Process(deltas, true))
		}
		assert.Equal(t, []string{"add a@1 initial=true"}, s.rec.got)
		stored, ok := s.m.Get("ns/a")
		require.True(t, ok)
		assert.Equal(t, "yes", stored.(*v1.Pod).Labels["transformed"])
		assert.Equal(t, int64(1), a.Rejected())
	}
}

// TestApplierStoresWhatAnIndexFails: an object an index function fails on
// is stored outside that index, notified and counted.
func TestApplierStoresWhatAnIndexFails(t *testing.T) {
	failsOnBad := func(obj any) ([]string, error) {
		if obj.(*v1.Pod).Name == "bad" {
			return nil, errors.New("no value")
		}
		return []string{"v"}, nil
	}
	for _, batch := range []bool{false, true} {
		s := newTestSetup(t, map[string]store.IndexFunc{"x": failsOnBad})
		a := New(s.cfg)
		deltas := []testDelta{{Added, testPod("bad", "1")}, {Added, testPod("good", "2")}}
		if batch {
			require.NoError(t, a.ProcessBatch(deltas, false))
		} else {
			require.NoError(t, a.Process(deltas, false))
		}
		assert.Equal(t, []string{"add bad@1 initial=false", "add good@2 initial=false"}, s.rec.got)
		assert.Equal(t, int64(1), a.Unindexed())
		assert.Equal(t, int64(0), a.Rejected())
		keys, err := s.m.IndexKeys("x", "v")
		require.NoError(t, err)
		assert.Equal(t, []string{"ns/good"}, keys)
	}
}

// TestApplierReplacesAllAtOnce: a whole list replaces the content in one
// step, then the handler hears of the vanished keys in key order (as
// tombstones of their last state), then of every listed object in list
// order; a keyless object is left out; the watermark is the list's, even
// lower; Applied counts the listed objects and derived deletions.
func TestApplierReplacesAllAtOnce(t *testing.T) {
	s := newTestSetup(t, nil)
	s.put(t, testPod("z", "8"), testPod("b", "7"), testPod("c", "9"))
	s.m.AdvanceResourceVersion("9")
	a := New(s.cfg)
	list := testList{objs: []any{testPod("d", "5"), "no metadata", testPod("c", "5")}, rv: "5"}
	deltas := []testDelta{{ReplacedAll, list}}
	require.NoError(t, a.ProcessBatch(deltas, false))
	assert.Equal(t, []string{
		"delete tombstone(ns/b)", "delete tombstone(ns/z)",
		"add d@5 initial=false", "update c@9 -> c@5",
	}, s.rec.got)
	assert.ElementsMatch(t, []string{"ns/c", "ns/d"}, s.m.ListKeys())
	assert.Equal(t, "5", s.m.ResourceVersion())
	assert.Equal(t, int64(1), a.Rejected())
	assert.Equal(t, uint64(2+3), a.Applied(deltas), "three listed objects and two derived deletions")
	assert.Equal(t, uint64(1), a.Applied([]testDelta{{Added, nil}}), "the derived deletions are counted once")
}

// TestApplierStopsAtAnUnreadableRecord: ProcessBatch returns the error of
// a delta whose record it cannot read, after applying what came before
// and moving the watermark for it, and applies nothing after it.
func TestApplierStopsAtAnUnreadableRecord(t *testing.T) {
	s := newTestSetup(t, nil)
	a := New(s.cfg)
	err := a.ProcessBatch([]testDelta{{Added, testPod("a", "3")}, {ReplacedAll, "not a list"}, {Added, testPod("b", "4")}}, false)
	require.ErrorContains(t, err, "instead of ReplacedAllInfo")
	assert.Equal(t, []string{"add a@3 initial=false"}, s.rec.got)
	assert.Equal(t, "3", s.m.ResourceVersion())
	for _, d := range []testDelta{{SyncAll, 1}, {Bookmark, 1}, {Unknown, nil}} {
		require.Error(t, a.ProcessBatch([]testDelta{d}, false))
	}
	require.Error(t, a.Process("not deltas", false))
}

// TestApplierBookmarksAndResyncs: a bookmark moves the watermark forward
// only, one ending a list sets it; SyncAll reports every cached object as
// updated; tombstones, listed and resynced objects do not move the
// watermark.
func TestApplierBookmarksAndResyncs(t *testing.T) {
	s := newTestSetup(t, nil)
	s.put(t, testPod("a", "1"))
	a := New(s.cfg)
	require.NoError(t, a.Process([]testDelta{{Bookmark, testBookmark{rv: "10"}}}, false))
	assert.Equal(t, "10", s.m.ResourceVersion())
	require.NoError(t, a.Process([]testDelta{{Bookmark, testBookmark{rv: "8"}}}, false))
	assert.Equal(t, "10", s.m.ResourceVersion(), "a bookmark moves it forward only")
	require.NoError(t, a.Process([]testDelta{{Bookmark, testBookmark{rv: "8", end: true}}}, false))
	assert.Equal(t, "8", s.m.ResourceVersion(), "the end of a list sets it")
	require.NoError(t, a.ProcessBatch([]testDelta{
		{Replaced, testPod("b", "20")}, {Sync, testPod("a", "21")},
		{Deleted, testTomb{key: "ns/b", obj: testPod("b", "22")}}, {SyncAll, testSyncAll{}},
	}, false))
	assert.Equal(t, "8", s.m.ResourceVersion())
	assert.Equal(t, []string{
		"add b@20 initial=false", "update a@1 -> a@21", "delete tombstone(ns/b)", "update a@21 -> a@21",
	}, s.rec.got)
}

// TestApplierTakesTheQueueWatermark: with QueueWatermark set, the
// watermark is the queue's after each pop, set even lower when the queue
// says a list completed it.
func TestApplierTakesTheQueueWatermark(t *testing.T) {
	s := newTestSetup(t, nil)
	rv, listed := "7", false
	s.cfg.QueueWatermark = func() (string, bool) { return rv, listed }
	a := New(s.cfg)
	require.NoError(t, a.ProcessBatch([]testDelta{{Added, testPod("a", "9")}}, false))
	assert.Equal(t, "7", s.m.ResourceVersion())
	rv, listed = "5", true
	require.NoError(t, a.Process([]testDelta{{Replaced, testPod("a", "5")}}, false))
	assert.Equal(t, "5", s.m.ResourceVersion())
}

// testTxStore is a store of the caller's with transactions, over a map;
// it fails the writes of objects named "fail".
type testTxStore struct {
	testStore
	calls int
}

func (s *testTxStore) Transact(writes []store.Write) ([]int, int, error) {
	s.calls++
	var applied []int
	var errs []error
	for i, w := range writes {
		if p, ok := w.Object.(*v1.Pod); ok && p.Name == "fail" {
			errs = append(errs, errors.New("refused"))
			continue
		}
		var err error
		if w.Op == store.OpDelete {
			err = s.Delete(w.Object)
		} else {
			err = s.Update(w.Object)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		applied = append(applied, i)
	}
	if len(errs) == 0 {
		return nil, 0, nil
	}
	return applied, len(errs), errors.Join(errs...)
}

// TestApplierCommitsToATransactorOfTheCallers: a store of the caller's
// gets a batch in one transaction; what it refuses is counted and not
// notified.
func TestApplierCommitsToATransactorOfTheCallers(t *testing.T) {
	keys := &testKeys{}
	m := store.New(store.Config{})
	tx := &testTxStore{testStore: testStore{m: m, keys: keys}}
	require.NoError(t, tx.Add(testPod("a", "1")))
	rec := &testRecorder{}
	a := New(Config[testDelta]{
		Logger: klog.Background(), Ops: testOps(), Store: tx, Transactor: tx, Handler: rec,
		Key: keys.key,
	})
	require.NoError(t, a.ProcessBatch([]testDelta{
		{Updated, testPod("a", "2")}, {Added, testPod("fail", "3")}, {Added, testPod("b", "4")}, {Deleted, testPod("a", "2")},
	}, false))
	assert.Equal(t, 1, tx.calls)
	assert.Equal(t, []string{"update a@1 -> a@2", "add b@4 initial=false", "delete a@2"}, rec.got)
	assert.Equal(t, int64(1), a.Rejected())
	assert.Equal(t, []string{"ns/b"}, m.ListKeys())
}

// testLock is a sync.Locker that knows whether it is held.
type testLock struct {
	mu   sync.Mutex
	held atomic.Bool
}

func (l *testLock) Lock()   { l.mu.Lock(); l.held.Store(true) }
func (l *testLock) Unlock() { l.held.Store(false); l.mu.Unlock() }

// TestApplierDeliversUnderTheLockAndHandsTheNotesOn: Deliver and
// DeliverItem apply a popped item with the Delivery's lock held, tell
// Popped (under the lock) of its deltas and how many reached the cache,
// and hand the notifications to the processor's listeners in order; an
// item that is not deltas is refused and counts nothing.
func TestApplierDeliversUnderTheLockAndHandsTheNotesOn(t *testing.T) {
	a1, a2, b1 := testPod("a", "1"), testPod("a", "2"), testPod("b", "1")
	s := newTestSetup(t, nil)
	s.put(t, a1)
	lock := &testLock{}
	notes := &Notes{}
	p, h := runTestProcessor(t)

	type pop struct {
		deltas  []testDelta
		applied uint64
		held    bool
	}
	var pops []pop
	s.cfg.Handler = notes
	s.cfg.Delivery = &Delivery[testDelta]{
		Lock:  lock,
		Notes: notes,
		To:    p,
		Popped: func(deltas []testDelta, applied uint64) {
			pops = append(pops, pop{append([]testDelta(nil), deltas...), applied, lock.held.Load()})
		},
	}
	a := New(s.cfg)

	batch := []testDelta{{Updated, a2}, {Added, b1}}
	require.NoError(t, a.Deliver(batch, false))
	require.NoError(t, a.DeliverItem([]testDelta{{Deleted, b1}}, false))
	require.ErrorContains(t, a.DeliverItem(testSyncAll{}, false), "process expects Deltas")

	assert.False(t, lock.held.Load())
	assert.Equal(t, []pop{
		{batch, 2, true},
		{[]testDelta{{Deleted, b1}}, 1, true},
		{nil, 0, true},
	}, pops)
	assert.Empty(t, notes.notes, "handed on and emptied")
	assert.Equal(t, []string{"ns/a"}, s.m.ListKeys())
	want := []string{"update a@1 -> a@2", "add b@1", "delete b@1"}
	require.Eventually(t, func() bool { return len(h.snapshot()) >= len(want) }, 10*time.Second, time.Millisecond)
	assert.Equal(t, want, h.snapshot())
}
