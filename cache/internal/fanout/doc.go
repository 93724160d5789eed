// Package fanout is the engine that hands an informer's notifications to
// its event handlers: one Processor per informer, one Listener per
// registered handler. It never imports package cache: handlers are any
// value with the three methods of client-go's ResourceEventHandler
// (Handler), notifications are its own type (Notification), and what it
// needs of the informer's objects (their keys, whether a deleted object is
// a placeholder of an unknown final state, the handlers' latency
// histograms) is given to NewProcessor as functions. Package cache adapts:
// its registrations wrap a Listener, its buffer policies map to Buffer.
//
// # Contract
//
// The informer applies a batch of changes to its store, collects the
// notifications they make and calls Distribute once per batch. Distribute
// appends the batch to the buffer of every registered listener and
// returns; it never waits for a handler. Each listener has its own
// goroutine, started by Run (or by Add once Run started), which takes what
// its buffer holds and calls its handler.
//
// A listener added while the informer runs is given the informer's
// current contents as initial adds (Enqueue) before it is added, under the
// same lock the informer distributes under, so that it misses no change
// and sees none twice.
//
// # Invariants
//
//   - Per-handler order: a handler is called from its listener's goroutine
//     only, one notification at a time, in the order Distribute (and
//     Enqueue) received them. Different handlers run concurrently, and a
//     slow or blocked handler delays no other handler and not the informer.
//   - Buffering: BufferUnbounded keeps every notification (the buffer of a
//     blocked handler grows without bound, as in client-go);
//     BufferCoalesceByKey keeps at most the latest state per object, under
//     the merge rules documented on it. A Resync notification goes only to
//     the listeners ShouldResync found due. A listener holds no reference
//     to a notification it has handled.
//   - HasSynced per handler: a listener has synced once the processor was
//     told the informer synced (UpstreamHasSynced, called after the initial
//     list was distributed) and its handler has processed every Initial
//     notification it was given, including those dropped by coalescing and
//     those whose handler panicked. A listener whose handler never goes
//     idle still syncs as soon as it has processed its initial list.
//   - Panics: a handler's panic is recovered, reported through
//     utilruntime.PanicHandlers as client-go reports it, logged with the
//     handler's name and counted (Processor.Panics, ListenerStatus.Panics);
//     the notification is skipped and delivery goes on.
//   - Shutdown: Remove stops one listener; the end of Run's context stops
//     all of them. A stopped listener drops what its buffer holds, calls
//     its handler no more once the call in progress returns, and then
//     closes its Finished channel. Run returns only when every listener
//     goroutine it started has returned; a listener added after that is
//     stopped at once. Nothing in the package starts a goroutine that Run's
//     context does not stop.
package fanout
