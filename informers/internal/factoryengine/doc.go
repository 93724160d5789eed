// Package factoryengine is the engine under kinformer's three informer
// factories: the typed one (package informers, keyed by the Go type of the
// objects), and the dynamic and metadata ones (keyed by
// group/version/resource). The factories are thin shells over it: each keeps
// its client-go names, its own option type and its own way of building one
// informer, and hands everything else here.
//
// It provides two things:
//
//   - Engine, the informer map of a factory: one informer per key, built on
//     first use under the engine's lock, started together, waited for
//     together, released one by one and shut down together.
//   - Options, the one value every factory option writes into, defaulted
//     once by Default before the factory builds its first informer; and
//     InformerSettings, the one function deriving from it what a single
//     informer gets, with Configure applying that to an informer already
//     built (the typed factory's informers are built by client-go-shaped
//     constructors that take no kinformer options); and NewInformer, the
//     one constructor of an informer over a ListerWatcher, which builds a
//     sharding.Informer instead when the options hold a Membership (whose
//     settings must then be given at construction, not by Configure).
//
// Invariants kept:
//
//   - an informer is built at most once per key while it is in the map; the
//     build function runs under the engine's lock, so it may use state that
//     needs that lock and must not call back into the engine;
//   - Start launches each informer at most once (until it is released);
//     after Shutdown it launches nothing, and Shutdown returns only once
//     every goroutine the engine launched has returned;
//   - Options are read-only once Default ran: the zero value of every field
//     keeps the meaning its factory option documents (the informers'
//     defaults), so a factory built without options behaves as client-go's.
//
// It imports cache, sharding and the informers' internal helpers, never the
// factory packages (informers, its dynamic and metadata packages) themselves.
package factoryengine
