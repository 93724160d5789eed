package bench

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// MemoryLW is an in-memory ListerWatcher of pods that serves kinformer's and
// client-go's informers identically. It satisfies both packages'
// ListerWatcher interfaces (List and Watch, plus the WithContext variants)
// and declares no support for streaming lists
// (IsWatchListSemanticsUnSupported returns true), so both reflectors make a
// plain LIST followed by a WATCH.
//
// LIST returns, in order of preference: the list handed over by SetNextList
// (once), or a freshly generated population of Pods() pods at the current
// resource version. As the real API server does, a LIST with a Limit and a
// resourceVersion other than "0" is answered in pages of at most Limit
// items with continue tokens; a LIST at "0" returns everything at once.
//
// WATCH opens a watch that delivers what the benchmark sends through
// Watcher(). All methods are safe for concurrent use.
type MemoryLW struct {
	mu       sync.Mutex
	pods     int
	rv       int
	next     *v1.PodList
	watchers []*MemoryWatch
	opened   chan struct{} // closed and replaced on every new watch
	lists    int
	// clockArmed makes the next LIST record its arrival in firstList.
	clockArmed bool
	firstList  time.Time
}

// NewMemoryLW returns a MemoryLW serving a population of pods pods at
// resourceVersion rv.
func NewMemoryLW(pods, rv int) *MemoryLW {
	return &MemoryLW{pods: pods, rv: rv, opened: make(chan struct{})}
}

// Pods returns the size of the served population.
func (lw *MemoryLW) Pods() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.pods
}

// SetResourceVersion sets the resource version of later generated lists.
func (lw *MemoryLW) SetResourceVersion(rv int) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rv = rv
}

// SetNextList makes list the answer to the next LIST (any paging options are
// ignored for it). The caller must not touch list afterwards.
func (lw *MemoryLW) SetNextList(list *v1.PodList) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.next = list
}

// StartListClock makes the next LIST request (any page) record when it
// arrived, for ListClock: the start of a relist, excluding the reflector's
// backoff before it.
func (lw *MemoryLW) StartListClock() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.clockArmed, lw.firstList = true, time.Time{}
}

// ListClock returns when the first LIST request after StartListClock
// arrived, and false when none has yet.
func (lw *MemoryLW) ListClock() (time.Time, bool) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.firstList, !lw.firstList.IsZero()
}

// Lists returns how many LIST requests (pages included) were answered.
func (lw *MemoryLW) Lists() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.lists
}

// IsWatchListSemanticsUnSupported reports true: MemoryLW cannot serve a
// streaming list, so both implementations LIST then WATCH.
func (lw *MemoryLW) IsWatchListSemanticsUnSupported() bool { return true }

// List answers a LIST; see MemoryLW.
func (lw *MemoryLW) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// ListWithContext answers a LIST; see MemoryLW.
func (lw *MemoryLW) ListWithContext(_ context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	lw.lists++
	if lw.clockArmed {
		lw.clockArmed, lw.firstList = false, time.Now()
	}
	if next := lw.next; next != nil {
		lw.next = nil
		lw.mu.Unlock()
		return next, nil
	}
	pods, rv := lw.pods, lw.rv
	lw.mu.Unlock()

	rvs := strconv.Itoa(rv)
	first, n := 0, pods
	if options.Continue != "" {
		c, err := strconv.Atoi(options.Continue)
		if err != nil || c < 0 || c > pods {
			return nil, apierrors.NewBadRequest("malformed continue token " + strconv.Quote(options.Continue))
		}
		first, n = c, pods-c
	}
	paged := options.Limit > 0 && (options.ResourceVersion != "0" || options.Continue != "")
	if paged && int64(n) > options.Limit {
		n = int(options.Limit)
	}
	list := NewPodList(first, n, rvs)
	if paged && first+n < pods {
		list.Continue = strconv.Itoa(first + n)
	}
	return list, nil
}

// Watch opens a watch; see MemoryLW.
func (lw *MemoryLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// WatchWithContext opens a watch; see MemoryLW.
func (lw *MemoryLW) WatchWithContext(_ context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	w := &MemoryWatch{ch: make(chan watch.Event, 128), stopped: make(chan struct{})}
	lw.mu.Lock()
	lw.watchers = append(lw.watchers, w)
	close(lw.opened)
	lw.opened = make(chan struct{})
	lw.mu.Unlock()
	return w, nil
}

// Watcher returns the newest watch that is still open, or nil, and a
// channel that is closed when the next watch opens.
func (lw *MemoryLW) Watcher() (*MemoryWatch, <-chan struct{}) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for i := len(lw.watchers) - 1; i >= 0; i-- {
		if w := lw.watchers[i]; !w.isStopped() {
			return w, lw.opened
		}
	}
	return nil, lw.opened
}

// StopAll stops every watch, so that producers blocked in Send return.
func (lw *MemoryLW) StopAll() {
	lw.mu.Lock()
	ws := lw.watchers
	lw.watchers = nil
	lw.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
}

// MemoryWatch is a watch.Interface fed by Send.
type MemoryWatch struct {
	ch       chan watch.Event
	stopOnce sync.Once
	stopped  chan struct{}
}

// ErrWatchStopped is returned by Send on a stopped watch.
var ErrWatchStopped = errors.New("watch stopped")

// Send delivers ev to the watch's consumer, blocking while its buffer is
// full; it fails once the consumer stopped the watch.
func (w *MemoryWatch) Send(ev watch.Event) error {
	select {
	case w.ch <- ev:
		return nil
	case <-w.stopped:
		return ErrWatchStopped
	}
}

// SendExpired delivers the ERROR event a server sends when the watch's
// resource version is too old (410 Gone), which forces a relist.
func (w *MemoryWatch) SendExpired() error {
	status := &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusGone,
		Reason:  metav1.StatusReasonExpired,
		Message: "too old resource version",
	}
	return w.Send(watch.Event{Type: watch.Error, Object: status})
}

// Stop ends the watch. It is idempotent.
func (w *MemoryWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stopped) })
}

func (w *MemoryWatch) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

// ResultChan returns the event channel. It is never closed; consumers stop
// reading when they call Stop.
func (w *MemoryWatch) ResultChan() <-chan watch.Event {
	return w.ch
}
