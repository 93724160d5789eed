// Package framework provides FakeControllerSource, an in-memory
// ListerWatcher for tests of informers and controllers, as
// k8s.io/client-go/tools/cache/testing does.
package framework

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// broadcasterQueueLength is the event buffer of each watcher of a source.
const broadcasterQueueLength = 100

// errShutDown is returned by List and Watch after Shutdown.
var errShutDown = errors.New("FakeControllerSource: shut down")

// NewFakeControllerSource returns an empty FakeControllerSource whose List
// returns a *v1.List.
func NewFakeControllerSource() *FakeControllerSource {
	return &FakeControllerSource{
		Items:       map[nnu]runtime.Object{},
		Broadcaster: watch.NewBroadcaster(broadcasterQueueLength, watch.WaitIfChannelFull),
	}
}

// NewFakePVControllerSource returns an empty FakePVControllerSource, whose
// List returns a *v1.PersistentVolumeList.
func NewFakePVControllerSource() *FakePVControllerSource {
	return &FakePVControllerSource{FakeControllerSource: *NewFakeControllerSource()}
}

// NewFakePVCControllerSource returns an empty FakePVCControllerSource, whose
// List returns a *v1.PersistentVolumeClaimList.
func NewFakePVCControllerSource() *FakePVCControllerSource {
	return &FakePVCControllerSource{FakeControllerSource: *NewFakeControllerSource()}
}

// FakeControllerSource is an in-memory ListerWatcher for tests. Every change
// (Add, Modify, Delete, ...) gets the next resource version (1, 2, ...),
// which it writes into the object; List returns the current objects at the
// latest resource version, and Watch replays the changes after the requested
// resource version and then follows new ones. Watch requires a numeric
// resourceVersion (it has no streaming list), so a Reflector using the
// WatchList feature falls back to LIST on it.
//
// Its methods are safe for concurrent use. Objects are keyed by namespace,
// name and UID.
type FakeControllerSource struct {
	lock sync.RWMutex
	// Items holds the current objects. Read or change it only while no
	// other method runs.
	Items map[nnu]runtime.Object
	// changes holds one event per resource version since the last
	// ResetWatch, in order.
	changes []watch.Event
	// Broadcaster delivers changes to watchers; ResetWatch replaces it.
	Broadcaster *watch.Broadcaster
	lastRV      int
	shutDown    bool

	// ListError, when set, is returned by List (set it before listing
	// starts, or while no other method runs).
	ListError error
}

// FakePVControllerSource is a FakeControllerSource for PersistentVolumes.
type FakePVControllerSource struct {
	FakeControllerSource
}

// FakePVCControllerSource is a FakeControllerSource for
// PersistentVolumeClaims.
type FakePVCControllerSource struct {
	FakeControllerSource
}

// nnu is the key of an object: namespace, name and UID.
type nnu struct {
	namespace, name string
	uid             types.UID
}

// ResetWatch simulates losing the watch history, as after a server restart:
// current watchers are closed and the recorded changes are forgotten, so a
// watch from an older resource version fails with 410 Expired and clients
// must relist.
func (f *FakeControllerSource) ResetWatch() {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shutDown {
		return
	}
	f.Broadcaster.Shutdown()
	f.Broadcaster = watch.NewBroadcaster(broadcasterQueueLength, watch.WaitIfChannelFull)
	f.changes = []watch.Event{}
}

// Add stores obj, sets its resource version and sends an ADDED event.
func (f *FakeControllerSource) Add(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Added, Object: obj}, 1)
}

// Modify stores obj, sets its resource version and sends a MODIFIED event.
func (f *FakeControllerSource) Modify(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Modified, Object: obj}, 1)
}

// Delete removes the object, sets lastValue's resource version and sends a
// DELETED event with it.
func (f *FakeControllerSource) Delete(lastValue runtime.Object) {
	f.Change(watch.Event{Type: watch.Deleted, Object: lastValue}, 1)
}

// AddDropWatch is Add without the watch event: watchers miss it (a later
// relist or a watch from an older resource version sees it).
func (f *FakeControllerSource) AddDropWatch(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Added, Object: obj}, 0)
}

// ModifyDropWatch is Modify without the watch event.
func (f *FakeControllerSource) ModifyDropWatch(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Modified, Object: obj}, 0)
}

// DeleteDropWatch is Delete without the watch event.
func (f *FakeControllerSource) DeleteDropWatch(lastValue runtime.Object) {
	f.Change(watch.Event{Type: watch.Deleted, Object: lastValue}, 0)
}

// Change applies the event e (ADDED, MODIFIED or DELETED) to the stored
// objects, giving e.Object the next resource version, records it for later
// watches and sends it to current watchers with probability
// watchProbability (1 always, 0 never). An object without metadata is
// reported through utilruntime.HandleError and ignored; after Shutdown,
// Change does nothing. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *FakeControllerSource) Change(e watch.Event, watchProbability float64) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shutDown {
		return
	}
	accessor, err := meta.Accessor(e.Object)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("FakeControllerSource: ignoring %s event: %w", e.Type, err))
		return
	}
	f.lastRV++
	accessor.SetResourceVersion(strconv.Itoa(f.lastRV))
	f.changes = append(f.changes, e)
	key := nnu{namespace: accessor.GetNamespace(), name: accessor.GetName(), uid: accessor.GetUID()}
	switch e.Type {
	case watch.Added, watch.Modified:
		f.Items[key] = e.Object
	case watch.Deleted:
		delete(f.Items, key)
	}
	if watchProbability >= 1 || (watchProbability > 0 && rand.Float64() < watchProbability) {
		if err := f.Broadcaster.Action(e.Type, e.Object); err != nil {
			utilruntime.HandleError(fmt.Errorf("FakeControllerSource: sending %s event: %w", e.Type, err))
		}
	}
}

// copiesLocked returns deep copies of the stored objects, so that callers
// may change what they get.
func (f *FakeControllerSource) copiesLocked() []runtime.Object {
	out := make([]runtime.Object, 0, len(f.Items))
	for _, obj := range f.Items {
		out = append(out, obj.DeepCopyObject())
	}
	return out
}

// listInto fills list with copies of the stored objects and the latest
// resource version.
func (f *FakeControllerSource) listInto(list runtime.Object, checkListError bool) (runtime.Object, error) {
	f.lock.RLock()
	defer f.lock.RUnlock()
	if f.shutDown {
		return nil, errShutDown
	}
	if checkListError && f.ListError != nil {
		return nil, f.ListError
	}
	if err := meta.SetList(list, f.copiesLocked()); err != nil {
		return nil, err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	listMeta.SetResourceVersion(strconv.Itoa(f.lastRV))
	return list, nil
}

// List returns a *v1.List of copies of the current objects, with the latest
// resource version, or ListError when set. The options are ignored.
func (f *FakeControllerSource) List(options metav1.ListOptions) (runtime.Object, error) {
	return f.listInto(&v1.List{}, true)
}

// List returns a *v1.PersistentVolumeList of copies of the current objects,
// with the latest resource version. The options and ListError are ignored,
// as in client-go.
func (f *FakePVControllerSource) List(options metav1.ListOptions) (runtime.Object, error) {
	return f.listInto(&v1.PersistentVolumeList{}, false)
}

// List returns a *v1.PersistentVolumeClaimList of copies of the current
// objects, with the latest resource version. The options and ListError are
// ignored, as in client-go.
func (f *FakePVCControllerSource) List(options metav1.ListOptions) (runtime.Object, error) {
	return f.listInto(&v1.PersistentVolumeClaimList{}, false)
}

// Watch returns a watch that first delivers copies of the recorded changes
// after options.ResourceVersion, then every new change. It fails when the
// resource version is not a number, is newer than the latest change, or is
// older than the recorded history (410 Expired, after ResetWatch).
func (f *FakeControllerSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	f.lock.RLock()
	defer f.lock.RUnlock()
	if f.shutDown {
		return nil, errShutDown
	}
	from, err := strconv.Atoi(options.ResourceVersion)
	if err != nil {
		return nil, err
	}
	switch {
	case from > f.lastRV:
		return nil, errors.New("resource version in the future not supported by this fake")
	case from == f.lastRV:
		return f.Broadcaster.Watch()
	}
	// from < lastRV: replay the changes after it, if they are all
	// recorded. changes[i] has resource version oldest+i.
	if len(f.changes) == 0 {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, f.lastRV))
	}
	oldest := f.lastRV - len(f.changes) + 1
	if from < oldest-1 {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, oldest))
	}
	replay := make([]watch.Event, 0, f.lastRV-from)
	for _, c := range f.changes[from-oldest+1:] {
		replay = append(replay, watch.Event{Type: c.Type, Object: c.Object.DeepCopyObject()})
	}
	return f.Broadcaster.WatchWithPrefix(replay)
}

// Shutdown closes all watches, waiting until queued events are delivered.
// Afterwards List and Watch return an error and changes are ignored.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *FakeControllerSource) Shutdown() {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shutDown {
		return
	}
	f.shutDown = true
	f.Broadcaster.Shutdown()
}
