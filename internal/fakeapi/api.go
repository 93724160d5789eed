package fakeapi

import (
	"context"
	"errors"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ErrScriptExhausted is the error of a List call made after the script's list answers ran out.
var ErrScriptExhausted = errors.New("fakeapi: no scripted answer left for this call")

// ListAnswer is one scripted answer to a List call: Object (a list object, for example a
// *v1.PodList carrying the list's resourceVersion and continue token) or Err.
type ListAnswer struct {
	Object runtime.Object
	Err    error
}

// WatchAnswer is one scripted answer to a Watch call: Err, or a watch that delivers Events in
// order and then closes, unless Hold keeps it open.
type WatchAnswer struct {
	Err    error
	Events []watch.Event
	Hold   bool
}

// API is a scripted ListerWatcher; see the package documentation. The zero value is not usable:
// build one with New.
type API struct {
	mu        sync.Mutex
	lists     []ListAnswer
	watches   []WatchAnswer
	listOpts  []metav1.ListOptions
	watchOpts []metav1.ListOptions
	handedOut []*Watch

	noWatchList   bool
	exhausted     chan struct{}
	exhaustedOnce sync.Once

	onList      func(metav1.ListOptions)
	onWatch     func(metav1.ListOptions)
	beforeList  func(context.Context, metav1.ListOptions) error
	beforeWatch func(context.Context, metav1.ListOptions) error
}

// New returns an API with an empty script.
func New() *API {
	return &API{exhausted: make(chan struct{})}
}

// WithoutWatchList makes the API report, through IsWatchListSemanticsUnSupported, that it
// cannot serve streaming lists, as a ListerWatcher over a client that cannot does. It returns
// the API, to chain.
func (a *API) WithoutWatchList() *API {
	a.mu.Lock()
	a.noWatchList = true
	a.mu.Unlock()
	return a
}

// OnList sets a function that runs at the start of every List call, before the call takes its
// answer, with the call's options (to block a call, or to act at the moment it is made). It
// returns the API, to chain. Set it before the code under test runs.
func (a *API) OnList(f func(metav1.ListOptions)) *API {
	a.mu.Lock()
	a.onList = f
	a.mu.Unlock()
	return a
}

// BeforeList sets a function that runs in every List call, after the OnList function, with
// the call's context and options. It may block, to hold the call until the test lets it go
// (see Gate); when it returns an error, the call answers that error and takes no scripted
// answer (its options are recorded all the same). It returns the API, to chain. Set it before
// the code under test runs.
func (a *API) BeforeList(f func(ctx context.Context, options metav1.ListOptions) error) *API {
	a.mu.Lock()
	a.beforeList = f
	a.mu.Unlock()
	return a
}

// BeforeWatch is BeforeList for Watch calls: a refused call hands out no watch.
func (a *API) BeforeWatch(f func(ctx context.Context, options metav1.ListOptions) error) *API {
	a.mu.Lock()
	a.beforeWatch = f
	a.mu.Unlock()
	return a
}

// OnWatch is OnList for Watch calls.
func (a *API) OnWatch(f func(metav1.ListOptions)) *API {
	a.mu.Lock()
	a.onWatch = f
	a.mu.Unlock()
	return a
}

// ListAnswers appends answers for the next List calls. It returns the API, to chain.
func (a *API) ListAnswers(answers ...ListAnswer) *API {
	a.mu.Lock()
	a.lists = append(a.lists, answers...)
	a.mu.Unlock()
	return a
}

// WatchAnswers appends answers for the next Watch calls. It returns the API, to chain.
func (a *API) WatchAnswers(answers ...WatchAnswer) *API {
	a.mu.Lock()
	a.watches = append(a.watches, answers...)
	a.mu.Unlock()
	return a
}

// IsWatchListSemanticsUnSupported reports whether WithoutWatchList was called.
func (a *API) IsWatchListSemanticsUnSupported() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.noWatchList
}

// List answers with the next scripted list answer; see the package documentation.
func (a *API) List(options metav1.ListOptions) (runtime.Object, error) {
	return a.ListWithContext(context.Background(), options)
}

// Watch answers with the next scripted watch answer; see the package documentation.
func (a *API) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return a.WatchWithContext(context.Background(), options)
}

// ListWithContext is List; the context is passed to the BeforeList function.
func (a *API) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	a.mu.Lock()
	hook, before := a.onList, a.beforeList
	a.mu.Unlock()
	if hook != nil {
		hook(options)
	}
	var refused error
	if before != nil {
		refused = before(ctx, options)
	}
	a.mu.Lock()
	a.listOpts = append(a.listOpts, options)
	if refused != nil {
		a.mu.Unlock()
		return nil, refused
	}
	if len(a.lists) == 0 {
		a.mu.Unlock()
		a.markExhausted()
		return nil, ErrScriptExhausted
	}
	answer := a.lists[0]
	a.lists = a.lists[1:]
	a.mu.Unlock()
	return answer.Object, answer.Err
}

// WatchWithContext is Watch; the context is passed to the BeforeWatch function (the code under
// test stops a watch it got with its Stop method).
func (a *API) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	a.mu.Lock()
	hook, before := a.onWatch, a.beforeWatch
	a.mu.Unlock()
	if hook != nil {
		hook(options)
	}
	var refused error
	if before != nil {
		refused = before(ctx, options)
	}
	a.mu.Lock()
	a.watchOpts = append(a.watchOpts, options)
	if refused != nil {
		a.mu.Unlock()
		return nil, refused
	}
	if len(a.watches) == 0 {
		w := NewWatch(nil, true)
		a.handedOut = append(a.handedOut, w)
		a.mu.Unlock()
		a.markExhausted()
		return w, nil
	}
	answer := a.watches[0]
	a.watches = a.watches[1:]
	if answer.Err != nil {
		a.mu.Unlock()
		return nil, answer.Err
	}
	w := NewWatch(answer.Events, answer.Hold)
	a.handedOut = append(a.handedOut, w)
	a.mu.Unlock()
	return w, nil
}

// Exhausted is closed by the first call made after its kind's answers ran out: once it is
// closed, every scripted answer of that kind was taken.
func (a *API) Exhausted() <-chan struct{} {
	return a.exhausted
}

func (a *API) markExhausted() {
	a.exhaustedOnce.Do(func() { close(a.exhausted) })
}

// ListOptions returns the options of every List call so far, in call order.
func (a *API) ListOptions() []metav1.ListOptions {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]metav1.ListOptions(nil), a.listOpts...)
}

// WatchOptions returns the options of every Watch call so far, in call order, failed calls
// included.
func (a *API) WatchOptions() []metav1.ListOptions {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]metav1.ListOptions(nil), a.watchOpts...)
}

// Watches returns the watches handed out so far, in call order (failed Watch calls hand out
// none).
func (a *API) Watches() []*Watch {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*Watch(nil), a.handedOut...)
}

// NthWatch returns the i-th watch handed out (counting from 0), or nil while fewer were handed
// out, so a test can poll for a watch the code under test has yet to open.
func (a *API) NthWatch(i int) *Watch {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i < 0 || i >= len(a.handedOut) {
		return nil
	}
	return a.handedOut[i]
}

// PendingListAnswers returns how many scripted list answers no List call has taken yet.
func (a *API) PendingListAnswers() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.lists)
}
