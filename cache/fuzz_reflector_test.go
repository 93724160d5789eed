package cache

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// streamWatch is a watch whose events are all queued and whose channel is
// already closed: the stream ends after the last event.
type streamWatch struct{ ch chan watch.Event }

func (w *streamWatch) Stop()                          {}
func (w *streamWatch) ResultChan() <-chan watch.Event { return w.ch }

// reflectorLW lists first the initial list, then always the final list;
// its first watch plays the fuzzed events, its second answers 410 Gone so
// the Reflector relists, and later watches stay open and silent until
// stopped.
type reflectorLW struct {
	mu          sync.Mutex
	lists       int
	watches     int
	initial     *v1.PodList
	final       *v1.PodList
	events      []watch.Event
	openWatches []*watch.FakeWatcher
}

func (l *reflectorLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *reflectorLW) List(metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lists++
	if l.lists == 1 {
		return l.initial.DeepCopy(), nil
	}
	return l.final.DeepCopy(), nil
}

func (l *reflectorLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watches++
	switch l.watches {
	case 1:
		ch := make(chan watch.Event, len(l.events))
		for _, e := range l.events {
			ch <- e
		}
		close(ch)
		return &streamWatch{ch: ch}, nil
	case 2:
		return nil, apierrors.NewResourceExpired("fuzz: too old resource version")
	default:
		w := watch.NewFake()
		l.openWatches = append(l.openWatches, w)
		return w, nil
	}
}

func (l *reflectorLW) listCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists
}

// podOnlyStore is a Store that records any object other than a *v1.Pod
// handed to it, and signals changed after every write, so that a test waits
// for the store's state without polling it.
type podOnlyStore struct {
	Store
	mu      sync.Mutex
	bad     []string
	changed chan struct{} // buffered, capacity 1
}

func newFzPodOnlyStore() *podOnlyStore {
	return &podOnlyStore{Store: NewStore(MetaNamespaceKeyFunc), changed: make(chan struct{}, 1)}
}

func (s *podOnlyStore) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *podOnlyStore) check(op string, obj interface{}) {
	if _, ok := obj.(*v1.Pod); !ok {
		s.mu.Lock()
		s.bad = append(s.bad, fmt.Sprintf("%s(%T)", op, obj))
		s.mu.Unlock()
	}
}

func (s *podOnlyStore) Add(obj interface{}) error {
	defer s.signal()
	s.check("Add", obj)
	return s.Store.Add(obj)
}

func (s *podOnlyStore) Update(obj interface{}) error {
	defer s.signal()
	s.check("Update", obj)
	return s.Store.Update(obj)
}

func (s *podOnlyStore) Delete(obj interface{}) error {
	defer s.signal()
	return s.Store.Delete(obj)
}

func (s *podOnlyStore) Replace(list []interface{}, rv string) error {
	defer s.signal()
	for _, obj := range list {
		s.check("Replace", obj)
	}
	return s.Store.Replace(list, rv)
}

func (s *podOnlyStore) badCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bad...)
}

// decodeEvents turns fuzz bytes into watch events: valid pods, pods without
// resourceVersion, nil objects, objects of the wrong type, bookmarks with and
// without resourceVersion, and error events with 410, 500 or no status.
func decodeEvents(data []byte) []watch.Event {
	types := [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error}
	var out []watch.Event
	rv := 100
	for _, b := range data {
		rv++
		typ := types[int(b)%len(types)]
		k := int(b>>6) % len(fuzzKeys)
		var obj runtime.Object
		switch (b >> 3) % 8 {
		case 0, 1, 2:
			obj = fuzzPod(k, rv, b>>5)
		case 3:
			obj = nil
		case 4:
			obj = &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fuzzKeys[k][0], Name: fuzzKeys[k][1], ResourceVersion: fmt.Sprint(rv)}}
		case 5:
			p := fuzzPod(k, rv, 0)
			p.ResourceVersion = ""
			obj = p
		case 6:
			obj = (*v1.Pod)(nil)
		case 7:
			obj = &metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError, Message: "fuzz"}
		}
		switch typ {
		case watch.Bookmark:
			if p, ok := obj.(*v1.Pod); ok && p != nil {
				obj = &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: p.ResourceVersion}}
			}
		case watch.Error:
			if b&0x80 != 0 {
				obj = &apierrors.NewResourceExpired("fuzz: gone").ErrStatus
			}
		}
		out = append(out, watch.Event{Type: typ, Object: obj})
	}
	return out
}

// FuzzReflectorWatchStream feeds a Reflector a watch stream decoded from the
// input, with broken objects among valid pods, then a 410 that forces a
// relist of a clean final list. The Reflector must not panic, must hand the
// store nothing but *v1.Pod, and must end with the store equal to the final
// list.
func FuzzReflectorWatchStream(f *testing.F) {
	f.Add(byte(0x0f), []byte{0x00, 0x41, 0x82, 0x03})
	f.Add(byte(0x00), []byte{0x18, 0x20, 0x28, 0x30, 0x38, 0x1b, 0x2b, 0x04, 0x84})
	f.Add(byte(0x05), []byte{0x1c, 0x24, 0x3c, 0x00, 0x01, 0x02})
	f.Add(byte(0x03), []byte{0x2a, 0x22, 0x29, 0x21, 0x33, 0x13, 0x23})
	f.Add(byte(0xff), []byte{})
	f.Fuzz(func(t *testing.T, initialMask byte, data []byte) {
		if len(data) > 100 {
			return
		}
		initial := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
		final := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9999"}}
		var want []string
		for j := range fuzzKeys {
			if initialMask&(1<<j) != 0 {
				initial.Items = append(initial.Items, *fuzzPod(j, 50+j, 0))
			}
			if initialMask&(0x10<<j) == 0 {
				p := fuzzPod(j, 5000+j, 1)
				final.Items = append(final.Items, *p)
				want = append(want, objSum(p))
			}
		}
		sort.Strings(want)
		lw := &reflectorLW{initial: initial, final: final, events: decodeEvents(data)}
		store := newFzPodOnlyStore()
		r := NewReflectorWithOptions(lw, &v1.Pod{}, store, ReflectorOptions{
			Name:    "fuzz-reflector",
			Backoff: &wait.Backoff{Duration: 0, Factor: 1, Steps: 1 << 30},
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.RunWithContext(ctx)
		}()
		defer func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("Reflector did not stop within 10s of its context's cancellation")
			}
		}()
		// The relist writes the final list to the store after the second List
		// call, and every write signals: wait for the signals, not on a timer.
		deadline := time.NewTimer(10 * time.Second)
		defer deadline.Stop()
		for {
			got := storeState(store.List())
			if lw.listCalls() >= 2 && fmt.Sprint(got) == fmt.Sprint(want) {
				break
			}
			select {
			case <-deadline.C:
				t.Fatalf("store %v after %d lists; want the final list %v (events %v)", got, lw.listCalls(), want, eventsSum(lw.events))
			case <-store.changed:
			}
		}
		if bad := store.badCalls(); len(bad) > 0 {
			t.Fatalf("store got objects that are not *v1.Pod: %v (events %v)", bad, eventsSum(lw.events))
		}
		for _, obj := range store.List() {
			if _, ok := obj.(*v1.Pod); !ok {
				t.Fatalf("store holds a %T", obj)
			}
		}
	})
}

// eventsSum describes watch events compactly for failure messages.
func eventsSum(events []watch.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, string(e.Type)+":"+objSum(e.Object))
	}
	return out
}
