package controllerruntime

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/interop/clientgo"
)

// NewInformer builds a kinformer informer for controller-runtime: it has the
// type of controller-runtime's cache.Options.NewInformer, so
//
//	cache.Options{NewInformer: controllerruntime.NewInformer}
//
// makes every informer of a controller-runtime cache a kinformer informer
// with kinformer's defaults. It is clientgo.NewSharedIndexInformer with no
// Option: an informer over lw for objects of the type of obj, with resync as
// the default resync period of its handlers and the given indices, returned
// as a client-go SharedIndexInformer that is kinformer's underneath
// (clientgo.Unwrap, or Unwrap here, gives it back). Nothing runs until
// controller-runtime runs it.
//
// lw is used through a thin wrapper that changes one thing: stopping one of
// its watches also reads what the watch still delivers until it closes its
// channel (for at most 10 seconds), so that the goroutine controller-runtime
// puts between a metadata-only watch and the informer
// (apimachinery's watch.Filter) cannot stay blocked after the informer
// stopped. Lists, watches, their context forms and the answer to
// IsWatchListSemanticsUnSupported are lw's.
//
// Safe for concurrent use; it keeps no state between calls. The informers
// are kinformer's, not client-go's. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return clientgo.NewSharedIndexInformer(drainWatches(lw), obj, resync, indexers)
}

// NewInformerFunc returns a hook of the type of controller-runtime's
// cache.Options.NewInformer that builds kinformer informers as NewInformer
// does, with the clientgo.Options that opts choose for each informer: those
// of WithInformerOptions, then those of ForType for the Go type of the
// example object controller-runtime passes, then those of
// ForGroupVersionKind for the kind of an unstructured or metadata-only
// example object. The last clientgo.Option to set a field wins, so the more
// specific choice wins over the more general one. A nil Option is skipped.
//
// opts are read once, here; the returned function keeps no other state and
// is safe for concurrent use, as controller-runtime's caches may call it
// from several goroutines. The informers are NewInformer's, with the chosen
// options. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewInformerFunc(opts ...Option) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return clientgo.NewSharedIndexInformer(drainWatches(lw), obj, resync, indexers, c.optionsFor(obj)...)
	}
}

// Unwrap returns the kinformer informer behind informer, and true, when
// informer was built by NewInformer, by a function NewInformerFunc returned,
// or by package clientgo; otherwise nil and false. informer is what
// controller-runtime's cache.GetInformer returns (its cache.Informer
// interface, whose dynamic value is the SharedIndexInformer the hook built),
// so
//
//	informer, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
//	k, ok := controllerruntime.Unwrap(informer)
//	status, _ := cache.GetInformerStatus(k)
//
// reaches kinformer's status and diagnostics. It gives false for the
// informers of controller-runtime's default engine, and for the wrapper
// controller-runtime returns for a type whose cache names its namespaces
// (cache.Options.DefaultNamespaces, or ByObject's Namespaces, even with a
// single entry): that wrapper holds one informer per namespace and does not
// expose them.
func Unwrap(informer any) (cache.SharedIndexInformer, bool) {
	sii, ok := informer.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, false
	}
	return clientgo.Unwrap(sii)
}
