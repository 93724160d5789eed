package clientgo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/lean"
)

// The wrapper is a client-go SharedIndexInformer, its Indexer a client-go
// Indexer, its registrations client-go registrations and its controller a
// client-go Controller.
var (
	_ toolscache.SharedIndexInformer              = (*informer)(nil)
	_ toolscache.Indexer                          = (*indexer)(nil)
	_ toolscache.ResourceEventHandlerRegistration = (*registration)(nil)
	_ toolscache.Controller                       = controller{}
)

// NewSharedIndexInformer returns a client-go SharedIndexInformer that is a
// kinformer informer underneath: it builds a cache.SharedIndexInformer with
// cache.NewSharedIndexInformerWithOptions over lw, for objects of the type of
// exampleObject, with defaultEventHandlerResyncPeriod as the default resync
// period of handlers (zero: no resyncs), the given indices and what opts set,
// and returns it wrapped as Wrap does. Its signature is the shape of
// controller-runtime's cache.Options.NewInformer plus options, so
//
//	NewInformer: func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
//		return clientgo.NewSharedIndexInformer(lw, obj, resync, idx)
//	}
//
// hands kinformer informers to controller-runtime.
//
// lw is used as it is: kinformer's Reflector calls its context forms
// (ListWithContext, WatchWithContext) when it has them, and asks
// IsWatchListSemanticsUnSupported() before a streaming list, as client-go's
// Reflector does, so a ListerWatcher built with
// toolscache.ToListWatcherWithWatchListSemantics over a client that cannot
// stream lists (client-go's fake clientsets) is listed with LIST. A nil lw
// gives an informer whose Run fails to list, as kinformer's own.
//
// Nothing runs until Run or RunWithContext is called. Options are applied in
// order; a nil Option is skipped.
//
// The informer is kinformer's: where kinformer's informer differs from
// client-go's, so does this one, and a nil watch error handler restores the
// default one. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewSharedIndexInformer(lw toolscache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers toolscache.Indexers, opts ...Option) toolscache.SharedIndexInformer {
	var s settings
	for _, opt := range opts {
		if opt != nil {
			opt(&s)
		}
	}
	options := s.informer
	options.ResyncPeriod = defaultEventHandlerResyncPeriod
	options.Indexers = toKinformerIndexers(indexers)
	var source cache.ListerWatcher
	if lw != nil {
		source = lw
	}
	k := cache.NewSharedIndexInformerWithOptions(source, exampleObject, options)
	w := newInformer(k, s.bufferPolicy)
	if s.lean != nil {
		w.lean = s.lean
		// The informer has not run: the transform is taken.
		_ = k.SetTransform(lean.Compose(nil, s.lean))
	}
	return w
}

// Wrap returns k as a client-go SharedIndexInformer: every method of
// client-go v0.37.2's interface calls k (see the package documentation for
// what each does), handlers added through it get client-go's types, and
// their registrations are client-go registrations. A nil k gives nil.
//
// Each call returns a new wrapper. Wrappers of one informer share its cache
// and its handlers: a registration made through one can be removed through
// another. Handlers added through the wrapper use
// cache.HandlerBufferUnbounded, as client-go's; NewSharedIndexInformer with
// WithHandlerBufferPolicy chooses another policy.
//
// The informer is kinformer's, as for NewSharedIndexInformer. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func Wrap(k cache.SharedIndexInformer) toolscache.SharedIndexInformer {
	if k == nil {
		return nil
	}
	return newInformer(k, cache.HandlerBufferUnbounded)
}

// Unwrap returns the kinformer informer behind wrapped, and true, when
// wrapped was returned by NewSharedIndexInformer or Wrap; otherwise nil and
// false. Through it a caller reaches kinformer's own API (status,
// diagnostics, WaitForResourceVersion, cache.ConfigureInformer, the
// registration-level buffer policies) for an informer a library holds as a
// client-go one.
func Unwrap(wrapped toolscache.SharedIndexInformer) (cache.SharedIndexInformer, bool) {
	w, ok := wrapped.(*informer)
	if !ok || w == nil {
		return nil, false
	}
	return w.k, true
}

// informer is the client-go SharedIndexInformer over a kinformer one. Its
// fields are set at construction and never change, except the client-go
// Reflector handed to watch error handlers, built once on first use.
type informer struct {
	k            cache.SharedIndexInformer
	indexer      *indexer
	bufferPolicy cache.HandlerBufferPolicy
	// lean, when not nil, is the memory-lean step that follows every
	// transform set through the wrapper (WithMemoryLean).
	lean *lean.Table

	reflectorOnce sync.Once
	reflector     *toolscache.Reflector
}

// newInformer wraps k; handlers added through the wrapper get policy.
func newInformer(k cache.SharedIndexInformer, policy cache.HandlerBufferPolicy) *informer {
	return &informer{k: k, indexer: &indexer{k: k.GetIndexer()}, bufferPolicy: policy}
}

// AddEventHandler registers handler with the informer's default resync
// period, as client-go's does; see AddEventHandlerWithOptions.
func (w *informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return w.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers handler with its own resync
// period, as client-go's does; see AddEventHandlerWithOptions.
func (w *informer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resyncPeriod time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return w.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions registers handler on the kinformer informer with
// options' Logger and ResyncPeriod, and the wrapper's buffer policy. The
// handler is called with the objects the cache holds; a deletion whose final
// state is unknown reaches OnDelete as a toolscache.DeletedFinalStateUnknown.
// The registration returned is a client-go registration over kinformer's.
// Errors are kinformer's: the informer has stopped, or handler is nil.
func (w *informer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	var h cache.ResourceEventHandler
	if handler != nil {
		h = eventHandler{handler: handler}
	}
	reg, err := w.k.AddEventHandlerWithOptions(h, cache.HandlerOptions{
		Logger:       options.Logger,
		ResyncPeriod: options.ResyncPeriod,
		BufferPolicy: w.bufferPolicy,
	})
	if err != nil {
		return nil, err
	}
	return &registration{reg: reg}, nil
}

// RemoveEventHandler unregisters the handler of handle, a registration
// returned by a wrapper of this informer; one of another informer, or one
// already removed, is a no-op. Any other registration gets the error
// client-go's informer gives a registration it did not make.
func (w *informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok {
		// The text of client-go's error for a foreign registration.
		return fmt.Errorf("invalid key type %t", handle)
	}
	if r == nil {
		return nil
	}
	return w.k.RemoveEventHandler(r.reg)
}

// GetStore returns the informer's cache as a client-go Store: the same
// value GetIndexer returns.
func (w *informer) GetStore() toolscache.Store { return w.indexer }

// GetIndexer returns the informer's cache as a client-go Indexer over
// kinformer's: reads return the objects the cache holds, not copies. Use it
// for reading only.
func (w *informer) GetIndexer() toolscache.Indexer { return w.indexer }

// AddIndexers adds indices to the cache; it fails once the informer has
// stopped and for names that exist already (kinformer's errors).
func (w *informer) AddIndexers(indexers toolscache.Indexers) error {
	return w.k.AddIndexers(toKinformerIndexers(indexers))
}

// GetController returns a client-go Controller over kinformer's: its Run
// methods do nothing and the others report the informer's state.
func (w *informer) GetController() toolscache.Controller {
	return controller{k: w.k.GetController()}
}

// Run runs the informer until stopCh is closed; see RunWithContext.
func (w *informer) Run(stopCh <-chan struct{}) { w.k.Run(stopCh) }

// RunWithContext runs the kinformer informer until ctx ends and returns once
// all its goroutines, its handlers' included, have stopped. An informer runs
// once; a second call returns at once.
func (w *informer) RunWithContext(ctx context.Context) { w.k.RunWithContext(ctx) }

// HasSynced reports whether the cache has been filled by a complete initial
// list.
func (w *informer) HasSynced() bool { return w.k.HasSynced() }

// HasSyncedChecker is HasSynced as a client-go DoneChecker: kinformer's
// checker, whose Done channel closes when the informer has synced.
func (w *informer) HasSyncedChecker() toolscache.DoneChecker { return w.k.HasSyncedChecker() }

// LastSyncResourceVersion returns the resourceVersion of the last list or
// watch event the informer saw, "" before Run.
func (w *informer) LastSyncResourceVersion() string { return w.k.LastSyncResourceVersion() }

// SetWatchErrorHandler sets the function called when a list or watch fails;
// see SetWatchErrorHandlerWithContext.
func (w *informer) SetWatchErrorHandler(handler toolscache.WatchErrorHandler) error {
	if handler == nil {
		return w.SetWatchErrorHandlerWithContext(nil)
	}
	return w.SetWatchErrorHandlerWithContext(func(_ context.Context, r *toolscache.Reflector, err error) {
		handler(r, err)
	})
}

// SetWatchErrorHandlerWithContext sets the function the kinformer informer
// calls when a list or watch fails (kinformer calls it for every failure,
// those client-go only logs included; see cache.WatchErrorHandlerWithContext).
// The handler gets a client-go Reflector, never nil, built once per wrapper
// with the name and type description of kinformer's Reflector and never run:
// it is there to be read (Name, TypeDescription), as
// toolscache.DefaultWatchErrorHandler does. The last call wins; a nil
// handler restores kinformer's default handler, which logs as client-go's
// does. After Run it returns the error client-go's returns ("informer has
// already started") and changes nothing.
func (w *informer) SetWatchErrorHandlerWithContext(handler toolscache.WatchErrorHandlerWithContext) error {
	if handler == nil {
		return w.k.SetWatchErrorHandlerWithContext(nil)
	}
	return w.k.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		handler(ctx, w.clientGoReflector(r), err)
	})
}

// SetTransform sets the function applied once to every object received
// from the server before it is cached and handed to handlers (kinformer's
// SetTransform). After Run it returns the error client-go's returns
// ("informer has already started") and changes nothing.
func (w *informer) SetTransform(handler toolscache.TransformFunc) error {
	var user cache.TransformFunc
	if handler != nil {
		user = cache.TransformFunc(handler)
	}
	return w.k.SetTransform(lean.Compose(user, w.lean))
}

// IsStopped reports whether the informer has stopped.
func (w *informer) IsStopped() bool { return w.k.IsStopped() }

// controller is the client-go Controller over a kinformer informer's.
type controller struct {
	k cache.Controller
}

// RunWithContext does what kinformer's informer controller does: nothing.
func (c controller) RunWithContext(ctx context.Context) { c.k.RunWithContext(ctx) }

// Run does what kinformer's informer controller does: nothing.
func (c controller) Run(stopCh <-chan struct{}) { c.k.Run(stopCh) }

// HasSynced reports whether the informer has synced.
func (c controller) HasSynced() bool { return c.k.HasSynced() }

// HasSyncedChecker is HasSynced as a client-go DoneChecker.
func (c controller) HasSyncedChecker() toolscache.DoneChecker { return c.k.HasSyncedChecker() }

// LastSyncResourceVersion is the informer's LastSyncResourceVersion.
func (c controller) LastSyncResourceVersion() string { return c.k.LastSyncResourceVersion() }
