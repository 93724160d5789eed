package cache

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// mutationDetectorEnv is the environment variable that turns on cache
// mutation detection (a boolean as accepted by strconv.ParseBool).
const mutationDetectorEnv = "KUBE_CACHE_MUTATION_DETECTOR"

// MutationDetector watches objects handed out from a cache and reports when
// one of them is modified in place, which corrupts the cache for every other
// reader. It is a debugging aid: it keeps a deep copy of every object given
// to AddObject for a while and compares periodically.
type MutationDetector interface {
	// AddObject starts watching obj (a runtime.Object; other values and
	// tombstones are ignored) for the retention window. Safe for concurrent
	// use.
	AddObject(obj interface{})

	// Run compares the watched objects with their copies every period until
	// stopCh is closed, and returns then.
	Run(stopCh <-chan struct{})
}

// NewCacheMutationDetector returns the MutationDetector for the cache named
// name. Unless the KUBE_CACHE_MUTATION_DETECTOR environment variable is true
// (read at each call, so a test may set it with t.Setenv), it returns a
// detector that does nothing. The real
// detector compares every second, keeps objects for at least two minutes
// (so its memory grows with the event rate) and, on finding a mutated
// object, logs the difference and panics: enabling it asks for a hard
// failure, since results computed from a corrupted cache cannot be trusted.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewCacheMutationDetector(name string) MutationDetector {
	enabled, _ := strconv.ParseBool(os.Getenv(mutationDetectorEnv))
	if !enabled {
		return noopMutationDetector{}
	}
	klog.Background().Info("Cache mutation detector is enabled; it retains copies of cached objects and uses much more memory", "cache", name)
	return newMutationDetector(name, clock.RealClock{}, time.Second, 2*time.Minute, nil)
}

// noopMutationDetector is the disabled MutationDetector.
type noopMutationDetector struct{}

func (noopMutationDetector) AddObject(interface{}) {}

func (noopMutationDetector) Run(stopCh <-chan struct{}) {}

// mutationWatched is an object handed out by a cache and the copy taken
// when it was added.
type mutationWatched struct {
	live interface{}
	copy interface{}
}

// mutationDetector is the enabled MutationDetector. Objects move from
// pending (filled by AddObject) to current at each comparison; every
// retain period current becomes previous (still compared) and the old
// previous is dropped, so an object is watched for one to two periods.
type mutationDetector struct {
	name   string
	clock  clock.Clock
	period time.Duration
	retain time.Duration
	// fail is called with a description when a mutation is found; nil
	// panics.
	fail func(msg string)

	pendingMu sync.Mutex
	pending   []mutationWatched

	// compareMu guards the fields below.
	compareMu   sync.Mutex
	current     []mutationWatched
	previous    []mutationWatched
	lastRotated time.Time
}

func newMutationDetector(name string, c clock.Clock, period, retain time.Duration, fail func(string)) *mutationDetector {
	return &mutationDetector{name: name, clock: c, period: period, retain: retain, fail: fail}
}

// AddObject records a deep copy of obj to compare against later.
func (d *mutationDetector) AddObject(obj interface{}) {
	switch obj.(type) {
	case DeletedFinalStateUnknown, *DeletedFinalStateUnknown:
		return
	}
	ro, ok := obj.(runtime.Object)
	if !ok || storeIsNilPointer(ro) {
		return
	}
	cp := ro.DeepCopyObject()
	d.pendingMu.Lock()
	d.pending = append(d.pending, mutationWatched{live: ro, copy: cp})
	d.pendingMu.Unlock()
}

// Run compares every period until stopCh is closed.
func (d *mutationDetector) Run(stopCh <-chan struct{}) {
	for {
		d.rotate()
		d.compare()
		t := d.clock.NewTimer(d.period)
		select {
		case <-stopCh:
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// rotate ages the watched objects once per retain period.
func (d *mutationDetector) rotate() {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()
	now := d.clock.Now()
	switch {
	case d.lastRotated.IsZero():
		d.lastRotated = now
	case now.Sub(d.lastRotated) > d.retain:
		d.previous = d.current
		d.current = nil
		d.lastRotated = now
	}
}

// compare checks every watched object against its copy and fails on the
// first comparison that finds any mutated.
func (d *mutationDetector) compare() {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()
	d.pendingMu.Lock()
	d.current = append(d.current, d.pending...)
	d.pending = nil
	d.pendingMu.Unlock()

	mutated := 0
	for _, list := range [][]mutationWatched{d.current, d.previous} {
		for i, w := range list {
			if reflect.DeepEqual(w.live, w.copy) {
				continue
			}
			mutated++
			klog.Background().Error(nil, "Cached object was modified in place", "cache", d.name, "index", i,
				"type", fmt.Sprintf("%T", w.live), "diff", diff.Diff(w.copy, w.live))
		}
	}
	if mutated == 0 {
		return
	}
	msg := fmt.Sprintf("cache %s modified: %d cached object(s) were mutated in place", d.name, mutated)
	if d.fail != nil {
		d.fail(msg)
		return
	}
	panic(msg)
}
