package cache

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"
)

// Lister performs the initial list of a resource.
//
// New implementations should also implement ListerWithContext; the Reflector
// adapts a plain Lister with ToListerWithContext.
type Lister interface {
	// List returns a list object (for example *v1.PodList). The reflector
	// stores the list's items and starts its watch at the list's
	// resourceVersion.
	//
	// Deprecated: use ListerWithContext.ListWithContext instead.
	List(options metav1.ListOptions) (runtime.Object, error)
}

// ListerWithContext performs the initial list of a resource, honouring the
// cancellation of its context.
type ListerWithContext interface {
	// ListWithContext returns a list object (for example *v1.PodList). The
	// reflector stores the list's items and starts its watch at the list's
	// resourceVersion. It should return promptly once ctx is done.
	ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
}

// ToListerWithContext returns l itself when it already implements
// ListerWithContext, and otherwise an adapter whose ListWithContext calls
// l.List and ignores the context. A nil l gives nil.
func ToListerWithContext(l Lister) ListerWithContext {
	if l == nil {
		return nil
	}
	if lc, ok := l.(ListerWithContext); ok {
		return lc
	}
	return listerContextAdapter{lister: l}
}

// listerContextAdapter gives a context-free Lister the ListerWithContext method.
type listerContextAdapter struct {
	lister Lister
}

func (a listerContextAdapter) ListWithContext(_ context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return a.lister.List(options)
}

// Watcher starts a watch on a resource.
//
// New implementations should also implement WatcherWithContext; the
// Reflector adapts a plain Watcher with ToWatcherWithContext.
type Watcher interface {
	// Watch starts a watch at options.ResourceVersion. When it returns an
	// error it must have released everything it started (including stopping
	// a watch it opened), so that the caller may drop the result.
	//
	// Deprecated: use WatcherWithContext.WatchWithContext instead.
	Watch(options metav1.ListOptions) (watch.Interface, error)
}

// WatcherWithContext starts a watch on a resource, honouring the cancellation
// of its context.
type WatcherWithContext interface {
	// WatchWithContext starts a watch at options.ResourceVersion. When it
	// returns an error it must have released everything it started
	// (including stopping a watch it opened), so that the caller may drop
	// the result.
	WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// ToWatcherWithContext returns w itself when it already implements
// WatcherWithContext, and otherwise an adapter whose WatchWithContext calls
// w.Watch and ignores the context. A nil w gives nil.
func ToWatcherWithContext(w Watcher) WatcherWithContext {
	if w == nil {
		return nil
	}
	if wc, ok := w.(WatcherWithContext); ok {
		return wc
	}
	return watcherContextAdapter{watcher: w}
}

// watcherContextAdapter gives a context-free Watcher the WatcherWithContext method.
type watcherContextAdapter struct {
	watcher Watcher
}

func (a watcherContextAdapter) WatchWithContext(_ context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return a.watcher.Watch(options)
}

// ListerWatcher lists a resource and watches it from the list's
// resourceVersion. It is what a Reflector and the informers consume.
//
// New implementations should also implement ListerWatcherWithContext.
type ListerWatcher interface {
	Lister
	Watcher
}

// ListerWatcherWithContext is the context-aware form of ListerWatcher.
type ListerWatcherWithContext interface {
	ListerWithContext
	WatcherWithContext
}

// ToListerWatcherWithContext returns lw itself when it already implements
// ListerWatcherWithContext, and otherwise an adapter that calls lw's
// context-free methods. A nil lw gives nil.
//
// The adapter keeps lw's answer to IsWatchListSemanticsUnSupported, so a
// client that cannot stream lists is still recognised after adaptation.
func ToListerWatcherWithContext(lw ListerWatcher) ListerWatcherWithContext {
	if lw == nil {
		return nil
	}
	if lwc, ok := lw.(ListerWatcherWithContext); ok {
		return lwc
	}
	return listerWatcherContextAdapter{
		ListerWithContext:  listerContextAdapter{lister: lw},
		WatcherWithContext: watcherContextAdapter{watcher: lw},
		noWatchList:        watchlist.DoesClientNotSupportWatchListSemantics(lw),
	}
}

// listerWatcherContextAdapter combines the two single-method adapters.
type listerWatcherContextAdapter struct {
	ListerWithContext
	WatcherWithContext
	noWatchList bool
}

func (a listerWatcherContextAdapter) IsWatchListSemanticsUnSupported() bool {
	return a.noWatchList
}

// listWatchWithWatchListSupport is the ListerWatcher returned by
// ToListWatcherWithWatchListSemantics: a *ListWatch that also reports whether
// the client it was built from can serve streaming lists.
type listWatchWithWatchListSupport struct {
	*ListWatch
	watchListUnsupported bool
}

// IsWatchListSemanticsUnSupported reports true when the client the
// ListerWatcher was built from cannot serve streaming lists (WatchList), in
// which case a Reflector uses a paged LIST even when the WatchListClient
// feature is enabled.
func (l *listWatchWithWatchListSupport) IsWatchListSemanticsUnSupported() bool {
	return l.watchListUnsupported
}

// ToListWatcherWithWatchListSemantics wraps lw so that a Reflector built on it
// knows whether client supports streaming lists (WatchList). The client says
// it does not by implementing IsWatchListSemanticsUnSupported() bool and
// returning true, as the fake clientsets of client-go do; any other client
// (including nil) is taken to support them.
//
// The result behaves exactly as lw for List, Watch and their context forms.
func ToListWatcherWithWatchListSemantics(lw *ListWatch, client any) ListerWatcher {
	return &listWatchWithWatchListSupport{
		ListWatch:            lw,
		watchListUnsupported: watchlist.DoesClientNotSupportWatchListSemantics(client),
	}
}

// ListFunc lists a resource with the given options.
//
// Deprecated: use ListWithContextFunc instead.
type ListFunc func(options metav1.ListOptions) (runtime.Object, error)

// ListWithContextFunc lists a resource with the given options; it should
// return promptly once ctx is done.
type ListWithContextFunc func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)

// WatchFunc starts a watch on a resource with the given options.
//
// Deprecated: use WatchFuncWithContext instead.
type WatchFunc func(options metav1.ListOptions) (watch.Interface, error)

// WatchFuncWithContext starts a watch on a resource with the given options;
// the watch should end once ctx is done.
type WatchFuncWithContext func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)

// ListWatch is a ListerWatcher (and ListerWatcherWithContext) made of
// functions. Set ListWithContextFunc or ListFunc, and WatchFuncWithContext or
// WatchFunc; when both forms are set, the context methods call the context
// function and the context-free methods call the context-free function.
// (The two WithContext names are spelled inconsistently; that is part of the
// public API.)
//
// A ListWatch holds no state: it is safe for concurrent use when its
// functions are.
type ListWatch struct {
	// Deprecated: use ListWithContextFunc instead.
	ListFunc ListFunc
	// Deprecated: use WatchFuncWithContext instead.
	WatchFunc WatchFunc

	ListWithContextFunc  ListWithContextFunc
	WatchFuncWithContext WatchFuncWithContext

	// DisableChunking asks the Reflector not to page the lists it makes
	// through this ListWatch; kinformer's Reflector honours it.
	// Differs from client-go v0.37.2; see COMPATIBILITY.md.
	DisableChunking bool
}

var (
	_ ListerWatcher            = &ListWatch{}
	_ ListerWatcherWithContext = &ListWatch{}
)

// errListWatchNoList and errListWatchNoWatch are returned when a ListWatch
// lacks the function a call needs.
var (
	errListWatchNoList  = errors.New("cache.ListWatch: neither ListWithContextFunc nor ListFunc is set")
	errListWatchNoWatch = errors.New("cache.ListWatch: neither WatchFuncWithContext nor WatchFunc is set")
)

// List lists the resource through ListFunc, or ListWithContextFunc with a
// background context when ListFunc is nil. The ListWatch does not page: the
// Reflector does. When neither function is set it returns an error.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
//
// Deprecated: use ListWithContext instead.
func (lw *ListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	switch {
	case lw.ListFunc != nil:
		return lw.ListFunc(options)
	case lw.ListWithContextFunc != nil:
		return lw.ListWithContextFunc(context.Background(), options)
	}
	return nil, errListWatchNoList
}

// ListWithContext lists the resource through ListWithContextFunc, or ListFunc
// (which cannot see ctx) when ListWithContextFunc is nil. The ListWatch does
// not page: the Reflector does. When neither function is set it returns an
// error. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (lw *ListWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	switch {
	case lw.ListWithContextFunc != nil:
		return lw.ListWithContextFunc(ctx, options)
	case lw.ListFunc != nil:
		return lw.ListFunc(options)
	}
	return nil, errListWatchNoList
}

// Watch starts a watch through WatchFunc, or WatchFuncWithContext with a
// background context when WatchFunc is nil. When neither function is set it
// returns an error. Differs from client-go v0.37.2; see COMPATIBILITY.md.
//
// Deprecated: use WatchWithContext instead.
func (lw *ListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	switch {
	case lw.WatchFunc != nil:
		return lw.WatchFunc(options)
	case lw.WatchFuncWithContext != nil:
		return lw.WatchFuncWithContext(context.Background(), options)
	}
	return nil, errListWatchNoWatch
}

// WatchWithContext starts a watch through WatchFuncWithContext, or WatchFunc
// (which cannot see ctx) when WatchFuncWithContext is nil. When neither
// function is set it returns an error. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (lw *ListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	switch {
	case lw.WatchFuncWithContext != nil:
		return lw.WatchFuncWithContext(ctx, options)
	case lw.WatchFunc != nil:
		return lw.WatchFunc(options)
	}
	return nil, errListWatchNoWatch
}

// Getter is the part of a REST client (rest.Interface) that
// NewListWatchFromClient needs: a way to start a GET request.
type Getter interface {
	Get() *restclient.Request
}

// NewListWatchFromClient returns a ListWatch that lists and watches resource
// in namespace (metav1.NamespaceAll for every namespace) through c, restricted
// by fieldSelector. All four function fields are set, so callers that only
// know ListFunc and WatchFunc keep working. A nil fieldSelector selects
// everything.
func NewListWatchFromClient(c Getter, resource string, namespace string, fieldSelector fields.Selector) *ListWatch {
	return NewFilteredListWatchFromClient(c, resource, namespace, func(options *metav1.ListOptions) {
		if fieldSelector == nil {
			options.FieldSelector = ""
			return
		}
		options.FieldSelector = fieldSelector.String()
	})
}

// NewFilteredListWatchFromClient returns a ListWatch that lists and watches
// resource in namespace through c. Before every request optionsModifier (when
// not nil) may change the options, for example to set a label or field
// selector. The options are encoded as query parameters with
// metav1.ParameterCodec. All four function fields are set; the context-free
// ones use a background context.
func NewFilteredListWatchFromClient(c Getter, resource string, namespace string, optionsModifier func(options *metav1.ListOptions)) *ListWatch {
	request := func(options *metav1.ListOptions) *restclient.Request {
		if optionsModifier != nil {
			optionsModifier(options)
		}
		return c.Get().
			Namespace(namespace).
			Resource(resource).
			VersionedParams(options, metav1.ParameterCodec)
	}
	listCtx := func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
		return request(&options).Do(ctx).Get()
	}
	watchCtx := func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		options.Watch = true
		return request(&options).Watch(ctx)
	}
	return &ListWatch{
		ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
			return listCtx(context.Background(), options)
		},
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			return watchCtx(context.Background(), options)
		},
		ListWithContextFunc:  listCtx,
		WatchFuncWithContext: watchCtx,
	}
}
