// Package clientgo makes a kinformer informer usable where client-go's types are required:
// libraries whose signatures take k8s.io/client-go/tools/cache's SharedIndexInformer, Store,
// Indexer or ResourceEventHandlerRegistration, such as controller-runtime, whose
// cache.Options.NewInformer hook has the shape of NewSharedIndexInformer here. It is the one
// package of the module whose library code imports client-go's tools/cache.
//
// NewSharedIndexInformer builds a kinformer cache.SharedIndexInformer and returns it as a
// client-go toolscache.SharedIndexInformer; Wrap does the same for an informer built
// elsewhere (by a kinformer factory, say), and Unwrap gives the kinformer informer back, for
// kinformer's own API (status, diagnostics, WaitForResourceVersion, cache.ConfigureInformer).
//
// # The contract
//
// The wrapper is the kinformer informer: it holds no cache, queue or goroutine of its own, and
// each method of client-go v0.37.2's SharedIndexInformer calls the kinformer method of the
// same name, converting client-go's types on the way in and kinformer's on the way out. So
// the behaviour is kinformer's, which is client-go's except where COMPATIBILITY.md says
// otherwise (a panicking handler is recovered, the watch error handler hears of every list
// and watch failure, a nil handler is an error, ...). In particular:
//
//   - The ListerWatcher is passed to kinformer as it is (its method set is kinformer's): the
//     Reflector uses its context forms when it has them and asks its
//     IsWatchListSemanticsUnSupported before a streaming list, as client-go's does, so
//     toolscache.ToListWatcherWithWatchListSemantics keeps working.
//   - Handlers get the objects the cache holds, not copies. A deletion whose final state is
//     unknown (a relist that no longer finds an object) reaches OnDelete as a
//     toolscache.DeletedFinalStateUnknown with Key and Obj set, the type client-go's handlers
//     and controller-runtime assert; nothing else is converted.
//   - Registrations are client-go registrations over kinformer's: HasSynced and
//     HasSyncedChecker are the kinformer registration's, and they have ShutdownChan, so
//     toolscache.ShutDownEventHandler works. RemoveEventHandler accepts the registrations of
//     any wrapper of the same informer (one of another informer is a no-op, as in client-go)
//     and gives any other registration the error client-go gives a registration it did not
//     make.
//   - GetStore and GetIndexer return one client-go Indexer over kinformer's: reads return the
//     cached objects themselves; Indexers and IndexFuncs are converted between the two
//     packages' types (the functions stay the same); a client-go DeletedFinalStateUnknown
//     given to Delete or Get finds its key.
//   - SetTransform, SetWatchErrorHandler and SetWatchErrorHandlerWithContext work after
//     construction and until Run, and then fail with client-go's error, "informer has already
//     started". A watch error handler gets a client-go *toolscache.Reflector, never nil, with
//     the Name and TypeDescription of kinformer's Reflector (which
//     toolscache.DefaultWatchErrorHandler logs). It is built once per wrapper, at the first
//     failure, and never run: its ListerWatcher fails every call. A nil handler restores
//     kinformer's default handler, which logs as client-go's does.
//   - HasSyncedChecker, and the checkers of registrations and of GetController, are
//     kinformer's DoneCheckers, whose method set is client-go's.
//
// What is not the same: kinformer names a handler after its type in its diagnostics and
// metrics (cache.HandlerStatus.Name, handler latency, the names of sync checkers), and a
// handler added through the wrapper is seen there as this package's adapter type, not as the
// caller's handler type.
//
// # Options
//
// An Option sets one field of the cache.SharedIndexInformerOptions the informer is built
// with, or the buffer policy of the handlers added through the wrapper (client-go's
// HandlerOptions has no field for it). There are Options for what the glue can honour over
// any ListerWatcher: the object description, the metrics identifier and providers, the watch
// liveness deadline (WatchIdleTimeout), the staleness probe, the longest Retry-After, relists
// page by page, the DeltaFIFO, the handlers' buffer policy, the memory-lean mode
// (WithMemoryLean, whose intern table the Option value carries) and list admission
// (WithListAdmission, WithListAdmissionPriority; wrapping the client's transport with the
// admission's WrapTransport is the caller's, who builds the client).
//
// The settings that need kinformer's own wire path or knowledge of the cluster have no Option,
// so they cannot be offered here: they are set on kinformer's factories (package informers),
// which own that knowledge, or deliberately on the unwrapped informer with
// cache.ConfigureInformer by a caller who has it. They are:
//
//   - field projection (informers.WithProjection and the transform check it installs): it
//     filters objects while they are decoded, on the factory's own transport;
//   - snapshots (SnapshotFile and the rest): a snapshot file is tied to a scope (namespace and
//     selectors), a projection and the identity of the cluster, none of which a bare
//     ListerWatcher tells.
//
// Sync diagnostics are not an informer option either: cache.WaitForCacheSyncWithOptions and
// cache.SyncOptions work on the informers Unwrap returns.
//
// # Concurrency
//
// Everything is safe for concurrent use, as the kinformer informer is. Handlers are called
// from their listener's goroutine, one notification at a time and in order.
package clientgo
