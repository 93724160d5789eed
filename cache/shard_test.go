package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// lowerHalf is the shard of the lower half of the hash space, by uid.
var lowerHalf = Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x0000000000000000", End: "0x8000000000000000"}}}

// lowerHalfSelector is lowerHalf's selector as the server echoes it.
const lowerHalfSelector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"

// shardedPods returns n pods of namespace "ns" whose uids hash into
// lowerHalf (in) and n whose uids do not (out), named in-<i> and out-<i>,
// at resourceVersion rv.
func shardedPods(t *testing.T, n int, rv string) (in, out []*v1.Pod) {
	t.Helper()
	for i := 0; len(in) < n || len(out) < n; i++ {
		uid := fmt.Sprintf("uid-%d", i)
		inside, err := lowerHalf.Contains(newPodWithUID("x", rv, uid))
		require.NoError(t, err)
		switch {
		case inside && len(in) < n:
			in = append(in, newPodWithUID(fmt.Sprintf("in-%d", len(in)), rv, uid))
		case !inside && len(out) < n:
			out = append(out, newPodWithUID(fmt.Sprintf("out-%d", len(out)), rv, uid))
		}
	}
	return in, out
}

// storeNames returns the sorted names of the objects in store.
func storeNames(store Store) []string {
	var names []string
	for _, obj := range store.List() {
		names = append(names, obj.(*v1.Pod).Name)
	}
	sort.Strings(names)
	return names
}

// podNames returns the sorted names of pods.
func podNames(pods ...*v1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// shardIgnoredErrors returns the *ShardSelectorIgnoredErrors among errs.
func shardIgnoredErrors(errs *watchErrors) []*ShardSelectorIgnoredError {
	var out []*ShardSelectorIgnoredError
	for _, err := range errs.snapshot() {
		var e *ShardSelectorIgnoredError
		if errors.As(err, &e) {
			out = append(out, e)
		}
	}
	return out
}

// closeWatchesAtCleanup closes the watches lw handed out when the test ends.
func closeWatchesAtCleanup(t *testing.T, lw *fakeapi.API) {
	t.Cleanup(func() {
		for _, w := range lw.Watches() {
			w.Close()
		}
	})
}

// shardedInformer builds an informer of lw's pods with shard, recording its
// handler's events and watch errors, and runs it until the test ends.
func shardedInformer(t *testing.T, lw ListerWatcher, s Shard) (SharedIndexInformer, *eventRecorder, *watchErrors) {
	t.Helper()
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{Shard: s})
	rec, errs := &eventRecorder{}, &watchErrors{}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(errs.handler))
	runInformer(t, informer)
	requireEventually(t, informer.HasSynced, "informer did not sync")
	return informer, rec, errs
}

func TestShardValidate(t *testing.T) {
	valid := []Shard{
		{},
		lowerHalf,
		{Key: ShardByNamespace, Ranges: []ShardRange{{Start: "0x8000000000000000", End: ShardTop}}},
		{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x0000000000000000", End: "0x1000000000000000"}, {Start: "0xf000000000000000", End: ShardTop}}},
	}
	for _, s := range valid {
		assert.NoError(t, s.Validate(), "%+v", s)
	}
	invalid := []struct {
		shard Shard
		want  string
	}{
		{Shard{Ranges: lowerHalf.Ranges}, "no key"},
		{Shard{Key: "object.metadata.name", Ranges: lowerHalf.Ranges}, "unsupported key"},
		{Shard{Key: ShardByUID}, "no range"},
		{Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x0", End: ShardTop}}}, `range 0 start: "0x0" must have exactly 16 hex digits`},
		{Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x8000000000000000", End: "0x4000000000000000"}}}, "range 0: start 0x8000000000000000 is not below end 0x4000000000000000"},
		{Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x000000000000000G", End: ShardTop}}}, "not a lowercase hex digit"},
		{Shard{Key: ShardByUID, Ranges: []ShardRange{lowerHalf.Ranges[0], {Start: "0x8000000000000000", End: "0x10000000000000001"}}}, "range 1 end"},
	}
	for _, tc := range invalid {
		err := tc.shard.Validate()
		require.Error(t, err, "%+v", tc.shard)
		assert.ErrorIs(t, err, ErrInvalidShard)
		assert.Contains(t, err.Error(), tc.want)
		assert.True(t, IsPermanentSyncError(err))
		_, serr := tc.shard.Selector()
		assert.ErrorIs(t, serr, ErrInvalidShard)
		_, cerr := tc.shard.Contains(newPod("a", "1"))
		assert.ErrorIs(t, cerr, ErrInvalidShard)
	}
	sel, err := lowerHalf.Selector()
	require.NoError(t, err)
	assert.Equal(t, lowerHalfSelector, sel)
	sel, err = Shard{}.Selector()
	assert.NoError(t, err)
	assert.Empty(t, sel)
	inside, err := Shard{}.Contains(newPod("a", "1"))
	assert.True(t, inside)
	assert.NoError(t, err)
	_, err = lowerHalf.Contains("not an object")
	assert.Error(t, err)
}

func TestEvenShardRanges(t *testing.T) {
	ranges, err := EvenShardRanges(4)
	require.NoError(t, err)
	assert.Equal(t, []ShardRange{
		{Start: "0x0000000000000000", End: "0x4000000000000000"},
		{Start: "0x4000000000000000", End: "0x8000000000000000"},
		{Start: "0x8000000000000000", End: "0xc000000000000000"},
		{Start: "0xc000000000000000", End: ShardTop},
	}, ranges)
	_, err = EvenShardRanges(0)
	assert.ErrorIs(t, err, ErrInvalidShard)
}

// TestShardByNamespacePutsClusterScopedObjectsInOneRange: namespace ""
// hashes to one value, so every cluster-scoped object is in the one range
// of n that holds it.
func TestShardByNamespacePutsClusterScopedObjectsInOneRange(t *testing.T) {
	ranges, err := EvenShardRanges(4)
	require.NoError(t, err)
	holding := 0
	for _, r := range ranges {
		s := Shard{Key: ShardByNamespace, Ranges: []ShardRange{r}}
		inside, err := s.Contains(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1"}})
		require.NoError(t, err)
		other, err := s.Contains(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", UID: "u2"}})
		require.NoError(t, err)
		assert.Equal(t, inside, other)
		if inside {
			holding++
		}
	}
	assert.Equal(t, 1, holding)
}

// TestShardedInformerOnAServerThatHonoursTheSelector: the LIST echoes the
// selector and holds only the shard; the cache holds exactly that, every
// request carries the selector, nothing is reported.
func TestShardedInformerOnAServerThatHonoursTheSelector(t *testing.T) {
	in, out := shardedPods(t, 6, "3")
	later := in[5].DeepCopy()
	later.ResourceVersion = "11"
	in = in[:5]
	list := newPodList("10", "", in...)
	list.ShardInfo = &metav1.ShardInfo{Selector: lowerHalfSelector}
	lw := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: list}).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{fakeapi.Added(later)}})
	closeWatchesAtCleanup(t, lw)
	informer, _, errs := shardedInformer(t, lw, lowerHalf)
	want := podNames(append(in, later)...)
	requireEventually(t, func() bool { return assert.ObjectsAreEqual(want, storeNames(informer.GetStore())) }, "store %v, want %v", storeNames(informer.GetStore()), want)
	assert.NotContains(t, storeNames(informer.GetStore()), out[0].Name)
	for _, o := range lw.ListOptions() {
		assert.Equal(t, lowerHalfSelector, o.ShardSelector)
	}
	for _, o := range lw.WatchOptions() {
		assert.Equal(t, lowerHalfSelector, o.ShardSelector)
	}
	assert.Empty(t, shardIgnoredErrors(errs))
	st, _ := GetInformerStatus(informer)
	assert.Zero(t, st.ShardIgnored)
}

// TestShardedInformerFiltersAPlainListTheServerDidNotShard: a LIST answer
// without shardInfo (or with another selector) holding the whole collection
// leaves exactly the shard in the cache and reaches the handler as adds of
// the shard only; the error handler hears of it once, typed, naming no
// object; later objects outside the shard in the same cycle's watch are
// dropped without another report.
func TestShardedInformerFiltersAPlainListTheServerDidNotShard(t *testing.T) {
	for _, tc := range []struct {
		name      string
		shardInfo *metav1.ShardInfo
	}{
		{"no shardInfo", nil},
		{"another selector", &metav1.ShardInfo{Selector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"}},
	} {
		for _, q := range queueKinds {
			t.Run(tc.name+"/"+q.name, func(t *testing.T) {
				in, out := shardedPods(t, 20, "3")
				all := append(append([]*v1.Pod(nil), in...), out...)
				list := newPodList("10", "", all...)
				list.ShardInfo = tc.shardInfo
				moreIn, moreOut := in[0].DeepCopy(), out[0].DeepCopy()
				moreIn.Name, moreIn.ResourceVersion = "more-in", "11"
				moreOut.Name, moreOut.ResourceVersion = "more-out", "12"
				modified, deleted := out[1].DeepCopy(), out[2].DeepCopy()
				modified.ResourceVersion, deleted.ResourceVersion = "13", "14"
				lw := fakeapi.New().WithoutWatchList().
					ListAnswers(fakeapi.ListAnswer{Object: list}).
					WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{
						fakeapi.Added(moreIn), fakeapi.Added(moreOut), fakeapi.Modified(modified), fakeapi.Deleted(deleted),
					}})
				closeWatchesAtCleanup(t, lw)
				informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{Shard: lowerHalf, UseDeltaFIFO: q.useDeltaFIFO})
				rec, errs := &eventRecorder{}, &watchErrors{}
				_, err := informer.AddEventHandler(rec)
				require.NoError(t, err)
				require.NoError(t, informer.SetWatchErrorHandlerWithContext(errs.handler))
				runInformer(t, informer)
				requireEventually(t, func() bool { return informer.HasSynced() && informer.LastSyncResourceVersion() == "14" }, "watch not applied")
				requireEventually(t, func() bool { return len(rec.get()) == len(in)+1 }, "handler events: %v", rec.get())

				assert.Equal(t, podNames(append(in, moreIn)...), storeNames(informer.GetStore()))
				for _, e := range rec.get() {
					assert.True(t, strings.HasPrefix(e, "add ns/in-") || strings.HasPrefix(e, "add ns/more-in"), e)
				}
				ignored := shardIgnoredErrors(errs)
				require.Len(t, ignored, 1, "errors: %v", errs.snapshot())
				assert.Equal(t, lowerHalfSelector, ignored[0].Selector)
				assert.Equal(t, "list", ignored[0].Request)
				if tc.shardInfo != nil {
					assert.Equal(t, tc.shardInfo.Selector, ignored[0].ShardInfo)
				}
				for _, p := range all {
					assert.NotContains(t, ignored[0].Error(), p.Name)
					assert.NotContains(t, ignored[0].Error(), string(p.UID))
				}
				assert.Contains(t, ignored[0].Error(), "degraded")
				st, _ := GetInformerStatus(informer)
				assert.Equal(t, uint64(1), st.ShardIgnored)
				assert.False(t, st.ShardIgnoredAt.IsZero())
			})
		}
	}
}

// TestShardedInformerFiltersAStreamingListTheServerDidNotShard: a streaming
// list carries no shardInfo; objects outside the shard are dropped and
// reported once, as a streaming list's.
func TestShardedInformerFiltersAStreamingListTheServerDidNotShard(t *testing.T) {
	in, out := shardedPods(t, 20, "3")
	var events []watch.Event
	for i := range in {
		events = append(events, fakeapi.Added(in[i]), fakeapi.Added(out[i]))
	}
	events = append(events, endOfInitialEvents("10"))
	lw := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: events})
	closeWatchesAtCleanup(t, lw)
	informer, rec, errs := shardedInformer(t, lw, lowerHalf)
	assert.Equal(t, podNames(in...), storeNames(informer.GetStore()))
	requireEventually(t, func() bool { return len(rec.get()) == len(in) }, "handler events: %v", rec.get())
	assert.Empty(t, lw.ListOptions(), "no LIST after a streaming list")
	for _, o := range lw.WatchOptions() {
		assert.Equal(t, lowerHalfSelector, o.ShardSelector)
	}
	ignored := shardIgnoredErrors(errs)
	require.Len(t, ignored, 1, "errors: %v", errs.snapshot())
	assert.Equal(t, "streaming list", ignored[0].Request)
	st, _ := GetInformerStatus(informer)
	assert.Equal(t, uint64(1), st.ShardIgnored)
}

// TestShardedInformerFiltersAWatchTheServerDidNotShard: a LIST that echoes
// the selector, then a watch that delivers an object outside the shard: it
// is dropped and reported as a watch's, and its resourceVersion counts as
// reached.
func TestShardedInformerFiltersAWatchTheServerDidNotShard(t *testing.T) {
	in, out := shardedPods(t, 3, "3")
	list := newPodList("10", "", in...)
	list.ShardInfo = &metav1.ShardInfo{Selector: lowerHalfSelector}
	stray := out[0].DeepCopy()
	stray.ResourceVersion = "11"
	lw := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: list}).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{fakeapi.Added(stray)}})
	closeWatchesAtCleanup(t, lw)
	informer, rec, errs := shardedInformer(t, lw, lowerHalf)
	requireEventually(t, func() bool { return informer.LastSyncResourceVersion() == "11" }, "the dropped event's resourceVersion was not reached")
	requireEventually(t, func() bool { return len(shardIgnoredErrors(errs)) == 1 }, "errors: %v", errs.snapshot())
	assert.Equal(t, "watch", shardIgnoredErrors(errs)[0].Request)
	assert.Equal(t, podNames(in...), storeNames(informer.GetStore()))
	requireEventually(t, func() bool { return len(rec.get()) == len(in) }, "handler events: %v", rec.get())
}

// TestShardedInformerRelistDropsAnObjectThatLeftTheShard: should a relist
// find a cached object outside the shard (its uid changed under the same
// name, which the API server never does for one object), it leaves the
// cache as an object the list no longer has: handlers get a delete.
func TestShardedInformerRelistDropsAnObjectThatLeftTheShard(t *testing.T) {
	in, out := shardedPods(t, 2, "3")
	moved := out[0].DeepCopy()
	moved.Name = in[0].Name
	first := newPodList("10", "", in...)
	second := newPodList("20", "", moved, in[1])
	for _, l := range []*v1.PodList{first, second} {
		l.ShardInfo = &metav1.ShardInfo{Selector: lowerHalfSelector}
	}
	lw := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: first}, fakeapi.ListAnswer{Object: second}).
		WatchAnswers(
			fakeapi.WatchAnswer{Events: []watch.Event{fakeapi.Error(metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})}},
			fakeapi.WatchAnswer{Hold: true})
	closeWatchesAtCleanup(t, lw)
	informer, rec, _ := shardedInformer(t, lw, lowerHalf)
	// The resourceVersion is published before the store takes the list:
	// wait for the store itself.
	requireEventually(t, func() bool {
		names := storeNames(informer.GetStore())
		return len(names) == 1 && names[0] == in[1].Name
	}, "the relist did not drop %s: %v", in[0].Name, storeNames(informer.GetStore()))
	events := rec.waitN(t, 3)
	assert.Contains(t, events, "delete tombstone(ns/"+in[0].Name+"@3)")
}

// TestInformerWithAnInvalidShardSendsNothing: an invalid shard fails every
// list attempt before any request, with an error wrapping ErrInvalidShard
// that the error handler hears and that ends a fail-fast wait.
func TestInformerWithAnInvalidShardSendsNothing(t *testing.T) {
	lw := fakeapi.New().WithoutWatchList()
	bad := Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x0", End: ShardTop}}}
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{Shard: bad})
	errs := &watchErrors{}
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(errs.handler))
	runInformer(t, informer)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res := WaitForCacheSyncWithOptions(ctx, SyncOptions{FailFast: true}, informer)
	require.ErrorIs(t, res.Err, ErrPermanentSyncFailure)
	assert.ErrorIs(t, res.Err, ErrInvalidShard)
	require.NotEmpty(t, errs.snapshot())
	assert.ErrorIs(t, errs.snapshot()[0], ErrInvalidShard)
	assert.Empty(t, lw.ListOptions())
	assert.Empty(t, lw.WatchOptions())
}

// TestConfigureInformerSetsAShard: ConfigureInformer gives a shard to an
// informer built by client-go's constructor, and copies its ranges.
func TestConfigureInformerSetsAShard(t *testing.T) {
	in, out := shardedPods(t, 4, "3")
	lw := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", append(in, out...)...)}).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	closeWatchesAtCleanup(t, lw)
	informer := NewSharedIndexInformer(lw, &v1.Pod{}, 0, Indexers{})
	s := Shard{Key: ShardByUID, Ranges: append([]ShardRange(nil), lowerHalf.Ranges...)}
	require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) { o.Shard = s }))
	s.Ranges[0].End = ShardTop // the informer keeps its own copy
	runInformer(t, informer)
	requireEventually(t, informer.HasSynced, "not synced")
	assert.Equal(t, podNames(in...), storeNames(informer.GetStore()))
	assert.Equal(t, lowerHalfSelector, lw.ListOptions()[0].ShardSelector)
	err := ConfigureInformer(informer, func(o *SharedIndexInformerOptions) { o.Shard = Shard{} })
	assert.ErrorIs(t, err, errInformerStarted)
}

// TestShardedSnapshotIsTiedToTheShard: a snapshot written by an informer of
// one shard is not loaded by an informer of another.
func TestShardedSnapshotIsTiedToTheShard(t *testing.T) {
	upper := Shard{Key: ShardByUID, Ranges: []ShardRange{{Start: "0x8000000000000000", End: ShardTop}}}
	a := NewSharedIndexInformerWithOptions(fakeapi.New(), &v1.Pod{}, SharedIndexInformerOptions{Shard: lowerHalf, SnapshotScope: "ns"}).(*sharedIndexInformer)
	b := NewSharedIndexInformerWithOptions(fakeapi.New(), &v1.Pod{}, SharedIndexInformerOptions{Shard: upper, SnapshotScope: "ns"}).(*sharedIndexInformer)
	c := NewSharedIndexInformerWithOptions(fakeapi.New(), &v1.Pod{}, SharedIndexInformerOptions{SnapshotScope: "ns"}).(*sharedIndexInformer)
	assert.Equal(t, `ns shard="`+lowerHalfSelector+`"`, strings.ReplaceAll(a.shardedSnapshotScope(), `\'`, `'`))
	assert.NotEqual(t, a.shardedSnapshotScope(), b.shardedSnapshotScope())
	assert.Equal(t, "ns", c.shardedSnapshotScope())
}

// recordingLW is a ListerWatcher over srv that records the options of its
// calls, the watch timeout (drawn at random) left out.
type recordingLW struct {
	srv     *fakeapi.Server
	mu      sync.Mutex
	options []string
}

func (r *recordingLW) record(call string, o metav1.ListOptions) {
	o.TimeoutSeconds = nil
	r.mu.Lock()
	defer r.mu.Unlock()
	r.options = append(r.options, fmt.Sprintf("%s %+v", call, o))
}

func (r *recordingLW) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.options...)
}

func (r *recordingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	r.record("list", o)
	return r.srv.List(o)
}

func (r *recordingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	r.record("watch", o)
	return r.srv.Watch(o)
}

func (r *recordingLW) IsWatchListSemanticsUnSupported() bool { return true }

// TestUnshardedRequestsAreClientGos: without a Shard, the informer's LIST
// and WATCH requests are client-go's, with no shard selector: both run the
// same scenario (initial list, watch, a closed watch resumed) on a server
// each, and the requests' options are the same.
func TestUnshardedRequestsAreClientGos(t *testing.T) {
	run := func(start func(lw *recordingLW) (func(context.Context), func() bool)) []string {
		srv := fakeapi.NewServer(false)
		defer srv.StopWatches()
		srv.Create("a")
		srv.Create("b")
		lw := &recordingLW{srv: srv}
		runFn, synced := start(lw)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); runFn(ctx) }()
		requireEventually(t, synced, "not synced")
		waitForNextWatch(t, srv)
		srv.Create("c")
		srv.CloseWatches()
		waitForNextWatch(t, srv)
		cancel()
		<-done
		return lw.get()
	}
	ours := run(func(lw *recordingLW) (func(context.Context), func() bool) {
		informer := NewSharedIndexInformer(lw, &v1.Pod{}, 0, Indexers{})
		return informer.RunWithContext, informer.HasSynced
	})
	theirs := run(func(lw *recordingLW) (func(context.Context), func() bool) {
		informer := clientcache.NewSharedIndexInformer(clientGoLW{&clientcache.ListWatch{ListFunc: lw.List, WatchFunc: lw.Watch}}, &v1.Pod{}, 0, clientcache.Indexers{})
		return informer.RunWithContext, informer.HasSynced
	})
	require.Len(t, ours, 3, "%v", ours)
	assert.Equal(t, theirs, ours)
	for _, o := range ours {
		assert.NotContains(t, o, "shardRange")
	}
}
