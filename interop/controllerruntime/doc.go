// Package controllerruntime hands kinformer informers to controller-runtime
// (sigs.k8s.io/controller-runtime), the framework most Kubernetes controllers
// are written with. It is its own Go module, nested in kinformer's, so that
// a program using kinformer without controller-runtime never downloads
// controller-runtime; and it imports no controller-runtime package, so that
// controller-runtime's cache could call it without an import cycle.
//
// # The one-line change
//
// controller-runtime's cache builds every informer through its
// cache.Options.NewInformer hook, client-go's NewSharedIndexInformer unless
// it is set. Setting it to NewInformer makes them kinformer informers:
//
//	mgr, err := manager.New(cfg, manager.Options{
//		Cache: cache.Options{NewInformer: controllerruntime.NewInformer},
//	})
//
// Everything else (controllers, sources, the manager's client and its cache
// reads, field indexers, ByObject selectors, transforms, RemoveInformer)
// keeps working as it does over client-go's informers, because the hook's
// informers are client-go SharedIndexInformers built by package
// interop/clientgo over kinformer's, whose package documentation states the
// contract. NewInformerFunc builds a hook with kinformer's extensions chosen
// per informer: for all of them (WithInformerOptions), per Go type of the
// object (ForType), or per kind of unstructured and metadata-only objects
// (ForGroupVersionKind).
//
// The ListerWatcher controller-runtime gives the hook is used as it is,
// except that stopping one of its watches also drains it until it closes.
// controller-runtime wraps metadata-only watches in apimachinery's
// watch.Filter, whose goroutine otherwise stays blocked forever on the last
// event of a stopped watch (the error of its cancelled request): client-go's
// Reflector leaves it so now and then when a manager stops or an informer is
// removed, and kinformer's, which takes a stop before further events, would
// every time.
//
// # What the hook does not cover
//
//   - Informers that do not go through controller-runtime's cache: one a
//     program builds itself and hands to controller-runtime (source.Informer
//     over a client-go informer, say) stays what it was built as. Build it
//     with kinformer's factories, or with clientgo.NewSharedIndexInformer,
//     to make it kinformer's.
//   - kinformer's wire path: controller-runtime supplies the ListerWatcher
//     (its own clients, its own decoding), so field projection, kinformer's
//     decoder and list admission, which need kinformer's factories and their
//     transport, do not apply; nor do snapshots (warm restarts), which are tied
//     to a factory's cluster, scope and projection. Those settings have no
//     clientgo.Option for this reason (see package interop/clientgo).
//   - The informers' Reflector runs with kinformer's defaults, which are
//     client-go's except where kinformer's COMPATIBILITY.md says otherwise
//     (a panicking handler is recovered, the watch error handler hears of
//     every failure, a silent watch is reopened, ...).
//
// # Reaching kinformer's status
//
// controller-runtime's cache.GetInformer returns the informer the hook built;
// Unwrap (or clientgo.Unwrap after a type assertion to client-go's
// SharedIndexInformer) gives the kinformer informer behind it, for
// cache.GetInformerStatus, health, diagnostics and WaitForResourceVersion.
// When the cache names namespaces (DefaultNamespaces, or a ByObject's
// Namespaces), controller-runtime returns its own wrapper over one informer
// per namespace instead, and Unwrap reports false.
//
// # Concurrency
//
// NewInformer, the functions NewInformerFunc returns and Unwrap are safe for
// concurrent use. The informers are kinformer's, safe as they are.
package controllerruntime
