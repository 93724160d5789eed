// Package cache is kinformer's reimplementation of k8s.io/client-go/tools/cache: the machinery
// that keeps a client-side, indexed, event-driven cache of Kubernetes API objects in step with
// the API server.
//
// The exported names and signatures are those of client-go v0.37.2, so a program moves over by
// changing its import path. Where client-go has a known defect, the signature is kept and the
// behaviour is fixed: the identifier's doc comment states the contract it keeps and ends with
// "Differs from client-go v0.37.2; see COMPATIBILITY.md.", and COMPATIBILITY.md at the root of
// the module says what client-go does, what kinformer does, why, and which option, if any,
// gives client-go's behaviour back.
//
// # The public surface and the engines
//
// This package is the surface: it declares every type a user names, client-go's API (Store,
// Indexer, Deltas, DeletedFinalStateUnknown, Reflector, SharedIndexInformer, the error types)
// and kinformer's documented additions. The engines that do the work live under
// cache/internal, one package per concern, each with a doc.go stating its contract and the
// invariants it keeps, and its tests beside it.
//
// An engine never imports cache. It declares the plain types and small interfaces it needs:
// objects are any, keys are strings, an index function is func(any) ([]string, error), a
// source of lists and watches is any value with client-go's List and Watch methods. This
// package adapts at the boundary: a public type holds its engine in an unexported field and
// converts on the way in and out (an engine's key error becomes a KeyError); an engine that
// handles a public type in bulk (the queue, the applier) is generic over it and reads it
// through a small value of functions, so that nothing is copied per item. Where a public
// interface already has an engine interface's method set (ListerWatcher, and the Store the
// applier writes to), the value is passed through as it is. No engine type
// is re-exported through an alias: the API check treats an alias as a different declaration,
// and users would meet internal names in their error messages and godoc.
//
// The engines import one another in one direction only:
//
//	apply ──▶ store, fanout
//	reflector, queue, store, fanout, diag, snapshot: import no other engine
//
// The Reflector writes into a sink interface it declares; the queue reconciles against a
// key lister interface it declares; the applier is the one engine that knows two others: it
// writes to a store engine and collects fanout notifications. It is generic over the delta
// type and reads each Delta through a small value of functions (delta_apply.go), so a Delta is
// not converted on its way through. This package wires them together.
//
// # The data path
//
// A SharedIndexInformer owns everything on the way from the server to the handlers. Each
// step, with the files it lives in:
//
//	SharedInformerFactory  informers/factory.go builds each type's informer once (InformerFor)
//	     │                 on the factory engine (informers/internal/factoryengine). Its
//	     │                 options are one value (factoryengine.Options); the settings every
//	     │                 informer gets are one SharedIndexInformerOptions in it
//	     │                 (Options.Informer), which each factory package's With... options set
//	     │                 field by field. A typed informer gets them before Run through
//	     │                 ConfigureInformer (factoryengine.Configure); the dynamic and metadata
//	     │                 factories (informers/internal/gvrfactory) build theirs with them
//	     ▼
//	SharedIndexInformer    shared_informer.go: NewSharedIndexInformerWithOptions, RunWithContext.
//	     │                 It keeps the SharedIndexInformerOptions as given (an informerConfig,
//	     │                 which ConfigureInformer and the Set methods change until Run;
//	     │                 shared_informer_options.go). RunWithContext resolves them once
//	     │                 (informerConfig.resolve: every default applied, every "off" a zero)
//	     │                 into the queue's settings, the Reflector's reflectorConfig
//	     │                 (reflector_config.go) and the probe interval; nothing below holds an
//	     │                 unresolved value. Handlers are registered in
//	     │                 shared_informer_handlers.go; status and snapshots in
//	     │                 shared_informer_status.go, shared_informer_snapshot.go, over the
//	     │                 engines cache/internal/diag and cache/internal/snapshot
//	     ▼
//	 controller            controller.go: built at Run with the queue (newInformerQueue) and
//	     │                 the resolved reflectorConfig (newController(Config,
//	     │                 controllerInternals)); a controller built by New resolves its Config
//	     │                 instead (Config.reflectorConfig). It runs the Reflector and the
//	     │                 processing loop
//	     ▼
//	 Reflector             reflector.go: the type, its options, Run and ListAndWatch; it holds
//	     │                 its engine (internal/reflector), built from the store, the
//	     │                 ListerWatcher and the adapters of reflector_engine.go; the settings
//	     │                 fixed for its life are one reflector.Settings, filled by the
//	     │                 defaulting step. Every decision is one pure function, the core
//	     │                 (internal/reflector: core.go, its transitions in step.go): from
//	     │                 what happened (a list returned, an event arrived, a watch closed,
//	     │                 a delay ran out) to the next state and what to do. The driver
//	     │                 (driver.go) does it: LIST (list.go) or streaming list and WATCH
//	     │                 over the ListerWatcher (listwatch.go), backoff (backoff.go),
//	     │                 resync, the liveness deadline (liveness.go); the observer
//	     │                 (observer.go) turns the core's notes into metrics, counters, log
//	     │                 lines and watch error handler calls (reflector_observer.go). Watch
//	     │                 events go to the store; for a RealFIFO or DeltaFIFO of this package,
//	     │                 straight to its engine (engineStore). Every list reaches the queue
//	     │                 as one sequence through the engine's Lists, a listSink here
//	     │                 (fifo.go)
//	     ▼
//	  queue                the Deltas (deltas.go) between Reflector and processing loop, held
//	     │                 by the queue engine (internal/queue), generic over Delta. RealFIFO,
//	     │                 the default, in watch order, a relist one atomic ReplacedAll:
//	     │                 the_real_fifo.go over queue.Real (real.go; lists and relists in
//	     │                 real_list.go; Pop, PopBatch in real_pop.go). DeltaFIFO, which
//	     │                 coalesces per key: delta_fifo.go over queue.Keyed (keyed.go,
//	     │                 keyed_list.go, watermark.go). The list sinks: internal/queue/sink.go;
//	     │                 relists page by page, for both: internal/queue/pagewise.go
//	     ▼
//	processing loop        controller.go's processLoop pops the queue engine straight into
//	     │                 the informer's applier (informerPop, delta_apply.go); a controller
//	     │                 built by New pops its Queue into its Process functions
//	     ▼
//	  apply                the informer's applier, the apply engine (internal/apply/applier.go,
//	     │                 built in delta_apply.go, which tells it how to read a Delta). Its
//	     │                 Deliver holds the informer's blockDeltas while it applies the batch
//	     │                 to the Indexer in one transaction, written straight to the store
//	     │                 engine (internal/apply/commit.go, internal/store/transaction.go),
//	     │                 collects every change as a notification (internal/apply/notes.go)
//	     │                 and hands them on
//	     ▼
//	  indexer              the Indexer: store.go over the store engine, cache/internal/store
//	     │                 (indices, watermark, replace, transactions; thread_safe_store.go
//	     │                 adapts it to ThreadSafeStore), key → object plus named indices.
//	     │                 Listers read it (listers.go) and never talk to the server
//	     ▼
//	 processor             internal/fanout/processor.go: the applier hands each batch's
//	     │                 notifications to the informer's fanout.Processor (built in
//	     │                 handler_fanout.go), which hands them to every listener
//	     ▼
//	 listener              internal/fanout/listener.go: one per registered handler (its
//	     │                 registration, handler_fanout.go), each with its own unbounded buffer
//	     │                 (or a coalescing one, internal/fanout/coalesce.go; the policies in
//	     │                 handler_fanout.go) and goroutine, its own resync period and its own
//	     │                 HasSynced
//	     ▼
//	  handler              the ResourceEventHandler (event_handler.go), called one notification
//	                       at a time, in order
//
// # One watch event, from the Reflector to a handler
//
// A MODIFIED event of a pod on an open watch, with the default RealFIFO and a handler added
// with AddEventHandler, crosses eight files, each entered once and in this order; every file
// hands the event to the next. The calls in brackets are helpers that return to the file that
// made them.
//
//  1. internal/reflector/driver.go (received, apply), on the Reflector's goroutine: the event
//     comes off the watch's result channel [the liveness deadline notes it, liveness.go;
//     acceptEvent checks its object, baddata.go] and goes to the Reflector's store, which for
//     an informer is the queue engine itself: queue.Real.Update. [Then the core takes the
//     event, step.go, and the driver publishes its resourceVersion and records its arrival,
//     internal/diag/stats.go.]
//  2. internal/queue/real.go (Update, Change): the queue computes the key [kind.go, with the
//     queue's key function, MetaNamespaceKeyFunc], makes the Updated Delta [deltaOps,
//     deltas.go] and pushes it on its ring [ring.go], waking the processing loop.
//  3. internal/queue/real_pop.go (PopBatch), on the processing loop's goroutine (controller.go's
//     processLoop runs the pop informerPop built): the run of deltas holding the event goes
//     to the applier's Deliver.
//  4. internal/apply/applier.go (Deliver, ProcessBatch): under the informer's blockDeltas, the
//     applier reads the delta [splitDelta, delta_apply.go] and takes the key the queue
//     computed [PoppedKeys, real_pop.go], and commits the batch.
//  5. internal/apply/commit.go (commitOwn): the batch's writes go to the store engine in one
//     transaction.
//  6. internal/store/transaction.go (Transaction): the object replaces the cached one and the
//     indices follow [store.go, index.go]; each write is reported to the commit's observer
//     [commit.go], which collects the update [Notes.OnUpdate, internal/apply/notes.go]. Back
//     in Deliver [applier.go], the cache's watermark moves [internal/store/resource_version.go],
//     the informer counts the batch [Delivery.Popped, delta_apply.go] and the notifications
//     go to the processor.
//  7. internal/fanout/processor.go (Distribute): every listener gets the batch.
//  8. internal/fanout/listener.go (Enqueue, then run, deliver, handle on the listener's
//     goroutine): the notification is buffered, then the handler's OnUpdate is called
//     (ResourceEventHandlerFuncs in event_handler.go, or the user's handler).
//
// # Lists and relists
//
// Every state that reaches the queue (a LIST, paged or not; a streaming list; a snapshot
// loaded at start) arrives as one sequence: the start of a list, its objects in order, and its
// end at a resourceVersion (the list protocol, internal/queue's doc.go). The queue decides
// when the state becomes visible. By default, as
// in client-go v0.37, a relist is atomic: listers see the old state until the complete listed
// state replaces it in one step, then handlers get a delete (DeletedFinalStateUnknown) for
// every object that vanished, followed by an update or add for every listed object in list
// order. A listed object whose resourceVersion and UID are the cached one's is not held
// twice: the cached object is kept (so the transform does not run again on it, and its update
// carries the same object as old and new). The first list after resuming from a snapshot or
// after the server said a version is too large keeps no cached object. SharedIndexInformerOptions.RelistPageByPage applies relists
// page by page instead, trading partial states and late deletions for less memory (what
// handlers and listers then see: internal/queue's doc.go).
//
// The resourceVersion of an informer's cache (LastStoreSyncResourceVersion) is a watermark:
// every change at or below it has been applied. It moves only after a complete list or once
// the changes up to it are applied, and never ahead of the content with either queue. Events
// and bookmarks move it forward only; a version that does not parse as an unsigned 64-bit
// integer is bad data and does not move it. A complete list is the server's truth: once it
// is applied (atomically, page by page or through a DeltaFIFO), the watermark is the list's
// version, even a lower one (after a bogus huge version from a misbehaving server, or an
// etcd restored from a backup); during a relist the old watermark holds. A
// WaitForResourceVersion call that returned while the watermark stood at a bogus version is
// not called back; calls made after the reset wait until the cache reaches their version
// again. WaitForResourceVersion and snapshots rely on the watermark.
//
// An object on which a user's index function fails is stored all the same and left out of
// that index only, whether it comes in a list or a watch event; the informer counts it and
// logs the error, and handlers are notified as for any object (differs from client-go
// v0.37.2; see COMPATIBILITY.md).
//
// Keys are "namespace/name" for namespaced objects and "name" for cluster-scoped ones
// (MetaNamespaceKeyFunc). Objects that vanished while the informer was disconnected reach
// delete handlers wrapped in DeletedFinalStateUnknown.
//
// # Concurrency
//
// Stores, queues and informers are safe for concurrent use. Handlers are called from their
// listener's goroutine, one event at a time and in order; different handlers run
// concurrently. Objects handed to handlers and returned by stores and listers are shared with
// the cache and must be treated as read-only.
package cache
