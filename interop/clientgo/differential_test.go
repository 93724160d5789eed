package clientgo

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// lifecycle is what a subject showed over TestLifecycleMatchesClientGo.
type lifecycle struct {
	syncedBeforeRun, handlerSyncedBeforeRun bool
	handlerSyncedAfterSync                  bool
	events                                  []string
	store, keys                             []string
	storeRV, lastSyncRV                     string
	vowels, consonantKeys, indexValues      []string
	indexOfA, namespaceIndex, indexerNames  []string
	handlerGotCachedObject                  bool
	controllerSynced                        bool
	controllerLastSyncRV                    string
}

// TestLifecycleMatchesClientGo runs one script on client-go v0.37.2's
// informer and on this package's: an initial list, watch events, then a
// relist after 410 Gone that misses a deletion, an update and a creation.
// The handler's notifications (a toolscache.DeletedFinalStateUnknown with its
// object for the missed deletion), HasSynced of the informer, of the
// registration and of the controller, the store, its resourceVersions and
// every index read must be client-go's.
func TestLifecycleMatchesClientGo(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) lifecycle {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a") // 1
		srv.Create("b") // 2
		srv.Create("c") // 3
		informer := s.build(srv, 0, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		require.NoError(t, informer.AddIndexers(toolscache.Indexers{"vowel": vowelIndex}))
		rec := &recorder{}
		reg, err := informer.AddEventHandler(rec)
		require.NoError(t, err)
		var obs lifecycle
		obs.syncedBeforeRun, obs.handlerSyncedBeforeRun = informer.HasSynced(), reg.HasSynced()

		start(t, informer)
		waitDone(t, informer.HasSyncedChecker())
		waitDone(t, reg.HasSyncedChecker())
		obs.handlerSyncedAfterSync = reg.HasSynced()
		rec.waitN(t, 3)
		waitForWatch(t, srv)

		srv.Create("e") // 4
		srv.Update("a") // 5
		srv.Delete("c") // 6
		rec.waitN(t, 6)

		srv.DeleteMissed("b") // 7
		srv.UpdateMissed("e") // 8
		srv.CreateMissed("f") // 9
		srv.Expire()
		obs.events = rec.waitN(t, 10)
		store := informer.GetIndexer()
		require.Eventually(t, func() bool { return store.LastStoreSyncResourceVersion() == "9" }, waitTimeout, tick)

		obs.store, obs.keys = describeAll(store.List()), store.ListKeys()
		sort.Strings(obs.keys)
		obs.storeRV, obs.lastSyncRV = store.LastStoreSyncResourceVersion(), informer.LastSyncResourceVersion()
		vowels, err := store.ByIndex("vowel", "vowel")
		require.NoError(t, err)
		obs.vowels = describeAll(vowels)
		obs.consonantKeys, err = store.IndexKeys("vowel", "consonant")
		require.NoError(t, err)
		sort.Strings(obs.consonantKeys)
		obs.indexValues = store.ListIndexFuncValues("vowel")
		sort.Strings(obs.indexValues)
		likeA, err := store.Index("vowel", fakeapi.Pod("a", "0"))
		require.NoError(t, err)
		obs.indexOfA = describeAll(likeA)
		inNamespace, err := store.ByIndex(toolscache.NamespaceIndex, fakeapi.Namespace)
		require.NoError(t, err)
		obs.namespaceIndex = describeAll(inNamespace)
		for name := range store.GetIndexers() {
			obs.indexerNames = append(obs.indexerNames, name)
		}
		sort.Strings(obs.indexerNames)

		cached, ok, err := store.GetByKey("ns/f")
		require.NoError(t, err)
		require.True(t, ok)
		obs.handlerGotCachedObject = cached == rec.lastObject()
		obs.controllerSynced = informer.GetController().HasSynced()
		obs.controllerLastSyncRV = informer.GetController().LastSyncResourceVersion()
		return obs
	})
	require.Equal(t, lifecycle{
		handlerSyncedAfterSync: true,
		events: []string{
			"add ns/a@1 initial=true",
			"add ns/b@2 initial=true",
			"add ns/c@3 initial=true",
			"add ns/e@4 initial=false",
			"update ns/a@1 -> ns/a@5",
			"delete ns/c@6",
			"delete tombstone(ns/b@2)",
			"update ns/a@5 -> ns/a@5",
			"update ns/e@4 -> ns/e@8",
			"add ns/f@9 initial=false",
		},
		store:                  []string{"ns/a@5", "ns/e@8", "ns/f@9"},
		keys:                   []string{"ns/a", "ns/e", "ns/f"},
		storeRV:                "9",
		lastSyncRV:             "9",
		vowels:                 []string{"ns/a@5", "ns/e@8"},
		consonantKeys:          []string{"ns/f"},
		indexValues:            []string{"consonant", "vowel"},
		indexOfA:               []string{"ns/a@5", "ns/e@8"},
		namespaceIndex:         []string{"ns/a@5", "ns/e@8", "ns/f@9"},
		indexerNames:           []string{"namespace", "vowel"},
		handlerGotCachedObject: true,
		controllerSynced:       true,
		controllerLastSyncRV:   "9",
	}, want, "the script does what it claims on client-go")
	assert.Equal(t, want, got)
}

// foreignRegistration is a registration neither informer made.
type foreignRegistration struct{}

func (*foreignRegistration) HasSynced() bool                          { return true }
func (*foreignRegistration) HasSyncedChecker() toolscache.DoneChecker { return nil }

// removal is what a subject showed over TestRemoveEventHandlerMatchesClientGo.
type removal struct {
	shutDown, removedAgain, otherInformers error
	foreign, nilHandle                     string
	removedEvents, keptEvents              []string
}

// errText is err's text, or "<nil>".
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestRemoveEventHandlerMatchesClientGo: removing a handler (with client-go's
// ShutDownEventHandler, which also waits for it) stops its notifications;
// removing it again, or removing a registration of another informer, is a
// no-op; a registration neither informer made, and nil, get client-go's
// error, to the letter.
func TestRemoveEventHandlerMatchesClientGo(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) removal {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		informer := s.build(srv, 0, nil)
		removed, kept := &recorder{}, &recorder{}
		removedReg, err := informer.AddEventHandler(removed)
		require.NoError(t, err)
		keptReg, err := informer.AddEventHandler(kept)
		require.NoError(t, err)
		other := s.build(srv, 0, nil)
		otherReg, err := other.AddEventHandler(&recorder{})
		require.NoError(t, err)

		start(t, informer)
		waitDone(t, removedReg.HasSyncedChecker())
		waitDone(t, keptReg.HasSyncedChecker())
		waitForWatch(t, srv)

		var obs removal
		obs.shutDown = toolscache.ShutDownEventHandler(informer, removedReg)
		obs.removedAgain = informer.RemoveEventHandler(removedReg)
		obs.otherInformers = informer.RemoveEventHandler(otherReg)
		obs.foreign = errText(informer.RemoveEventHandler(&foreignRegistration{}))
		obs.nilHandle = errText(informer.RemoveEventHandler(nil))
		srv.Create("b")
		obs.keptEvents = kept.waitN(t, 2)
		obs.removedEvents = removed.get()
		return obs
	})
	require.Equal(t, []string{"add ns/a@1 initial=true"}, want.removedEvents)
	require.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=false"}, want.keptEvents)
	require.Contains(t, want.foreign, "invalid key type")
	assert.Equal(t, want, got)
}

// syncing is what a subject showed over TestHasSyncedMatchesClientGo.
type syncing struct {
	informerSynced, handlerSynced, checkerDone, controllerSynced bool
	lastSyncRV                                                   string
	syncedAfter, handlerSyncedAfter                              bool
	lateEvents                                                   []string
	lateSynced                                                   bool
	reflectorDescription                                         string
	reflectorNotNil, sameReflector                               bool
	handlerGotListErr                                            bool
}

// TestHasSyncedMatchesClientGo: while every LIST fails, the informer, its
// handler's registration, the checkers and the controller report not
// synced and the watch error handler gets the error with a non-nil client-go
// Reflector describing the pods (the same Reflector at every call); once a
// LIST succeeds they are synced, and a handler added then gets the cache as
// its initial list and syncs, as in client-go.
func TestHasSyncedMatchesClientGo(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) syncing {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		srv.Create("b")
		listRefused := errors.New("list refused")
		srv.FailLists(listRefused)
		informer := s.build(srv, 0, nil)
		reg, err := informer.AddEventHandler(&recorder{})
		require.NoError(t, err)
		type call struct {
			r   *toolscache.Reflector
			err error
		}
		calls := make(chan call, 100)
		require.NoError(t, informer.SetWatchErrorHandler(func(r *toolscache.Reflector, err error) {
			select {
			case calls <- call{r, err}:
			default:
			}
		}))
		start(t, informer)
		var first, second call
		for _, c := range []*call{&first, &second} {
			select {
			case *c = <-calls:
			case <-time.After(waitTimeout):
				t.Fatal("the watch error handler was not called twice")
			}
		}
		obs := syncing{
			informerSynced:   informer.HasSynced(),
			handlerSynced:    reg.HasSynced(),
			checkerDone:      toolscache.IsDone(informer.HasSyncedChecker()),
			controllerSynced: informer.GetController().HasSynced(),
			lastSyncRV:       informer.LastSyncResourceVersion(),
			reflectorNotNil:  first.r != nil,
			sameReflector:    first.r == second.r,
			// The text differs: kinformer's Reflector says which list
			// failed ("failed to list *v1.Pod: list refused").
			handlerGotListErr: errors.Is(first.err, listRefused),
		}
		if first.r != nil {
			obs.reflectorDescription = first.r.TypeDescription()
		}
		srv.FailLists(nil)
		waitDone(t, informer.HasSyncedChecker())
		waitDone(t, reg.HasSyncedChecker())
		obs.syncedAfter, obs.handlerSyncedAfter = informer.HasSynced(), reg.HasSynced()

		late := &recorder{}
		lateReg, err := informer.AddEventHandler(late)
		require.NoError(t, err)
		waitDone(t, lateReg.HasSyncedChecker())
		obs.lateSynced = lateReg.HasSynced()
		obs.lateEvents = late.waitN(t, 2)
		sort.Strings(obs.lateEvents)
		return obs
	})
	require.Equal(t, syncing{
		syncedAfter: true, handlerSyncedAfter: true, lateSynced: true,
		lateEvents:           []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"},
		reflectorDescription: "*v1.Pod",
		reflectorNotNil:      true,
		sameReflector:        true,
		handlerGotListErr:    true,
	}, want, "the script does what it claims on client-go")
	assert.Equal(t, want, got)
}

// afterRun is what a subject showed over TestSettersAfterRunMatchClientGo.
type afterRun struct {
	transformed                                     []string
	setTransform, setHandler, setHandlerWithContext string
	stopped, stoppedAfter                           bool
	addHandlerFails                                 bool
	addIndexers                                     string
}

// TestSettersAfterRunMatchClientGo: SetTransform and both
// SetWatchErrorHandler methods work after construction until Run (the
// transform reaches the cached objects) and then fail with client-go's
// error; once stopped, the informer says so, refuses handlers and refuses
// indices with client-go's error.
func TestSettersAfterRunMatchClientGo(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) afterRun {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		informer := s.build(srv, 0, nil)
		require.NoError(t, informer.SetTransform(func(obj any) (any, error) {
			pod := obj.(*v1.Pod)
			pod.Labels = map[string]string{"transformed": "yes"}
			return pod, nil
		}))
		require.NoError(t, informer.SetWatchErrorHandler(func(*toolscache.Reflector, error) {}))
		require.NoError(t, informer.SetWatchErrorHandlerWithContext(nil))
		stop := start(t, informer)
		waitDone(t, informer.HasSyncedChecker())
		var obs afterRun
		for _, obj := range informer.GetStore().List() {
			obs.transformed = append(obs.transformed, describe(obj)+" "+obj.(*v1.Pod).Labels["transformed"])
		}
		obs.setTransform = errText(informer.SetTransform(nil))
		obs.setHandler = errText(informer.SetWatchErrorHandler(func(*toolscache.Reflector, error) {}))
		obs.setHandlerWithContext = errText(informer.SetWatchErrorHandlerWithContext(nil))
		obs.stopped = informer.IsStopped()
		stop()
		obs.stoppedAfter = informer.IsStopped()
		_, err := informer.AddEventHandler(&recorder{})
		obs.addHandlerFails = err != nil
		obs.addIndexers = errText(informer.AddIndexers(toolscache.Indexers{"vowel": vowelIndex}))
		return obs
	})
	require.Equal(t, afterRun{
		transformed:           []string{"ns/a@1 yes"},
		setTransform:          "informer has already started",
		setHandler:            "informer has already started",
		setHandlerWithContext: "informer has already started",
		stoppedAfter:          true,
		addHandlerFails:       true,
		addIndexers:           "indexer was not added because it has stopped already",
	}, want, "the script does what it claims on client-go")
	assert.Equal(t, want, got)
}

// storeWrites is what a subject showed over TestIndexerWritesMatchClientGo.
type storeWrites struct {
	afterAdds, afterTombstoneDelete, afterReplace []string
	gotByTombstone                                bool
	replaceRV                                     string
	resync                                        error
	addIndexersFails                              bool
}

// TestIndexerWritesMatchClientGo: the Indexer of an informer that does not
// run takes client-go's writes as client-go's does: Add and Update, Get and
// Delete with a client-go DeletedFinalStateUnknown (found by its key),
// Replace, Resync, and an AddIndexers of an existing name fails.
func TestIndexerWritesMatchClientGo(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) storeWrites {
		informer := s.build(fakeapi.New(), 0, toolscache.Indexers{"vowel": vowelIndex})
		store := informer.GetIndexer()
		require.Same(t, store, informer.GetStore())
		var obs storeWrites
		require.NoError(t, store.Add(fakeapi.Pod("a", "1")))
		require.NoError(t, store.Add(fakeapi.Pod("b", "2")))
		require.NoError(t, store.Update(fakeapi.Pod("a", "3")))
		obs.afterAdds = describeAll(store.List())
		_, obs.gotByTombstone, _ = store.Get(toolscache.DeletedFinalStateUnknown{Key: "ns/b"})
		require.NoError(t, store.Delete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: fakeapi.Pod("b", "2")}))
		obs.afterTombstoneDelete = describeAll(store.List())
		require.NoError(t, store.Replace([]any{fakeapi.Pod("c", "7"), fakeapi.Pod("e", "8")}, "8"))
		obs.afterReplace = describeAll(store.List())
		obs.replaceRV = store.LastStoreSyncResourceVersion()
		obs.resync = store.Resync()
		// The texts differ: kinformer's names the index ("indices
		// [\"vowel\"] already exist"), client-go's prints a map.
		obs.addIndexersFails = store.AddIndexers(toolscache.Indexers{"vowel": vowelIndex}) != nil
		return obs
	})
	require.Equal(t, []string{"ns/a@3", "ns/b@2"}, want.afterAdds)
	require.True(t, want.gotByTombstone)
	require.Equal(t, []string{"ns/a@3"}, want.afterTombstoneDelete)
	require.True(t, want.addIndexersFails)
	assert.Equal(t, want, got)
}

// watchListRequests is the first request each subject made of a server that
// serves streaming lists, through a ListerWatcher built with
// toolscache.ToListWatcherWithWatchListSemantics over a client that says it
// cannot (unsupported) or says nothing (supported).
type watchListRequests struct {
	unsupported, supported string
}

// TestWatchListSemanticsOfTheListerWatcherAreKept: the ListerWatcher is
// handed to kinformer with its IsWatchListSemanticsUnSupported answer, so
// an informer over a client that cannot stream lists asks for a LIST, and
// one over a client that can asks for a streaming list, as client-go's
// informer does.
func TestWatchListSemanticsOfTheListerWatcherAreKept(t *testing.T) {
	want, got := differential(t, func(t *testing.T, s subject) watchListRequests {
		first := func(client any) string {
			srv := fakeapi.NewServer(true)
			t.Cleanup(srv.StopWatches)
			srv.Create("a")
			lw := &toolscache.ListWatch{ListWithContextFunc: srv.ListWithContext, WatchFuncWithContext: srv.WatchWithContext}
			informer := s.build(toolscache.ToListWatcherWithWatchListSemantics(lw, client), 0, nil)
			stop := start(t, informer)
			waitDone(t, informer.HasSyncedChecker())
			stop()
			return srv.Requests()[0]
		}
		return watchListRequests{
			unsupported: first(fakeapi.NewServer(false)),
			supported:   first(nil),
		}
	})
	require.Equal(t, "list", want.unsupported)
	assert.Equal(t, want, got)
}

// TestTypedInformerOverTheWrapperMatchesClientGo: client-go's
// NewTypedSharedIndexInformer over each informer hands a typed handler the
// deletion a relist infers as a DeletedObject with its FinalStateUnknown
// and last known object (client-go's adapter type-asserts the tombstone;
// kinformer's own tombstone would make it panic), and the typed indexer
// reads the cache.
func TestTypedInformerOverTheWrapperMatchesClientGo(t *testing.T) {
	type typedObservation struct {
		deleted         string
		finalStateKnown bool
		cached          []string
	}
	want, got := differential(t, func(t *testing.T, s subject) typedObservation {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		srv.Create("b")
		// Non-nil indexers: client-go's informer built with nil ones panics
		// in AddIndexers (kinformer's does not).
		informer := toolscache.NewTypedSharedIndexInformer[*v1.Pod](s.build(srv, 0, toolscache.Indexers{}))
		deletions := make(chan toolscache.DeletedObject[*v1.Pod], 10)
		reg, err := informer.AddTypedEventHandler(toolscache.TypedResourceEventHandlerFuncs[*v1.Pod]{
			DeleteFunc: func(obj toolscache.DeletedObject[*v1.Pod]) { deletions <- obj },
		})
		require.NoError(t, err)
		require.NoError(t, informer.AddTypedIndexers(toolscache.TypedIndexers[*v1.Pod]{
			"vowel": func(p *v1.Pod) ([]string, error) { return vowelIndex(p) },
		}))
		start(t, informer)
		waitDone(t, reg.HasSyncedChecker())
		waitForWatch(t, srv)
		srv.DeleteMissed("b")
		srv.Expire()
		var obs typedObservation
		select {
		case d := <-deletions:
			obs.deleted = describe(d.OptionalObj)
			obs.finalStateKnown = d.FinalStateUnknown == nil
		case <-time.After(waitTimeout):
			t.Fatal("no deletion")
		}
		vowels, err := informer.GetTypedIndexer().ByTypedIndex("vowel", "vowel")
		require.NoError(t, err)
		for _, p := range vowels {
			obs.cached = append(obs.cached, describe(p))
		}
		return obs
	})
	require.Equal(t, typedObservation{deleted: "ns/b@2", cached: []string{"ns/a@1"}}, want)
	assert.Equal(t, want, got)
}
