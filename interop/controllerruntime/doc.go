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
//     (its own clients, its own decoding), so field projection and
//     kinformer's decoder, which need kinformer's factories and their
//     transport, do not apply; nor do snapshots (warm restarts), which are tied
//     to a factory's cluster, scope and projection. Those settings have no
//     clientgo.Option for this reason (see package interop/clientgo). List
//     admission and the memory-lean mode do apply: pass
//     clientgo.WithListAdmission and clientgo.WithMemoryLean to
//     WithInformerOptions for one admission and one intern table over the
//     whole cache (and wrap the manager's rest.Config with the admission's
//     WrapTransport for its 429 pause).
//   - The informers' Reflector runs with kinformer's defaults, which are
//     client-go's except where kinformer's COMPATIBILITY.md says otherwise
//     (a panicking handler is recovered, the watch error handler hears of
//     every failure, a silent watch is reopened, ...).
//
// # Read-your-writes consistency
//
// controller-runtime's client.CacheOptions.EnableReadYourWritesConsistency
// works on the hook's informers as on client-go's, with nothing to set: after
// a write through the manager's client, a cache read of the written key
// returns the write's resourceVersion or newer, and after a delete
// NotFound. The module's tests check it on both engines for typed objects
// (create, update, patch, the status subresource, delete), unstructured
// apply configurations, metadata-only patches and deletes, and across a
// relist, and BenchmarkConsistentReadAfterWrite measures the wait.
//
// controller-runtime learns what the cache has seen through an event handler
// it adds to the informer (waiting on the registration's HasSyncedChecker
// before it trusts it). The handler keeps a single number per kind and
// representation (typed, unstructured, metadata-only): the highest
// resourceVersion of any object it has been handed. A read waits until that
// number reaches the write's resourceVersion. This is correct only while the
// informer applies changes to its cache in resourceVersion order and tells
// its handlers after applying them: one watch feeding one cache, as in
// client-go's informers and kinformer's, whatever the handler buffer policy
// (HandlerBufferCoalesceByKey may deliver a newer object before an older
// one, but only after the cache holds both). It does not hold where several
// watches, each at its own pace, feed one handler:
//
//   - controller-runtime's multi-namespace caches (DefaultNamespaces, or a
//     ByObject's Namespaces, with more than one namespace) run one informer
//     per namespace and add the handler to each, so the number one namespace
//     reached can be ahead of another namespace's cache, and a read there
//     may return a state older than the write (controller-runtime documents
//     the option as not working with more than one namespace);
//   - sharded informers (several informers for one kind, each over part of
//     it, their events merged into one handler) break it the same way.
//
// A delete that the API server answers without a resourceVersion (the
// object left storage at once and the server returned a Status) is waited
// for through the handler's OnDelete of that object's UID. Under
// HandlerBufferCoalesceByKey (clientgo.WithHandlerBufferPolicy) an object
// added and deleted before the handler was handed the add is never
// delivered at all, so such a delete can be waited for until the read's
// context ends: keep the default, unbounded, policy for informers the
// read-your-writes client reads through.
//
// Two limits of controller-runtime v0.25.2 hold on both engines: a Create,
// Update or Patch of an *unstructured.Unstructured is recorded under the
// typed representation of its kind, so an unstructured cache read after it
// does not wait (an apply configuration from
// client.ApplyConfigurationFromUnstructured, and a Delete, are recorded
// correctly); and the handler is added once per kind, to the informer of
// the time, so after RemoveInformer a read after a write waits for the
// removed informer until its context ends.
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
