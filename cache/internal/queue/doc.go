// Package queue is the engine of the queues between an informer's Reflector
// and its processing loop: Real (package cache's RealFIFO), which hands
// every change over in arrival order, and Keyed (DeltaFIFO), which
// accumulates the changes of each key until it is popped; the list sinks
// through which lists reach them; and the application of relists page by
// page. FIFO, which keeps only the latest object per key, stays in package
// cache; it uses Ring and SyncGate from here.
//
// It never imports cache nor any other engine. The queues are generic over
// the caller's delta type D and an Ops value that tells them how to make a
// D from a Kind and an object and read them back, and how to build and
// recognise the objects of the atomic kinds (ReplacedAll, Bookmark,
// SyncAll) and the tombstones of deletions whose final state is unknown.
// Package cache instantiates them with its public Delta, so a delta is
// queued and popped as it is: no per-delta conversion, no extra
// allocation. Key functions and transforms are plain funcs, the objects a
// consumer already holds a KeyLister, metrics Gauge and Histogram.
//
// # Contract
//
// Producers (the Reflector) call Change, Delete (Keyed), Bookmark (Real),
// Resync, Replace and the list protocol below; one consumer goroutine calls
// Pop, or PopBatch (Real), and gets what was queued, in queue order, with
// whether it belongs to the initial batch. All methods are safe for
// concurrent use. The process functions run with the queue's lock held,
// except on a Real configured with UnlockWhileProcessing while fewer than
// two full batches wait. A zero-value queue is usable; Configure sets it up
// before its first use.
//
// # Invariants
//
//   - Order: Real pops its deltas in the order they were queued, at most
//     DefaultBatchSize at once, no two of the same key in one batch, an
//     atomic kind always alone. Keyed pops each key once per queueing, in
//     the order keys were first queued, with all of its deltas; two
//     trailing deletions of one key collapse into the more informative.
//   - Initial batch (SyncGate): the first list, when it comes before any
//     change, makes what it queued (with what was queued before it) the
//     initial batch; Synced turns true once all of it was popped and
//     processed (also when processing panicked), or with the first change
//     when no list came first. It never turns false again.
//   - Errors leave the queue untouched: a key error or a transform error
//     queues nothing, for a change as for a whole list. A transform that
//     refuses an object (Ops.Refused) drops it alone; a deletion of it is
//     queued with a tombstone.
//   - Close wakes every waiting consumer and producer; what is queued
//     stays poppable, and pops of an empty closed queue return Ops.Closed.
//   - Watermark (Keyed with Watermark): PoppedWatermark is the
//     resourceVersion up to which every change received has been popped
//     once the pop in progress is applied; a complete list starts a new
//     epoch, whose mark the cache takes even when lower.
//   - With ReusePopBuffers, the slices PopBatch hands out are the queue's
//     and valid until the process function returns; PoppedKeys returns the
//     keys the queue computed for them. Otherwise every pop hands out new
//     slices, one allocation per batch and nothing per delta.
//
// # The list protocol
//
// However a state reaches a Reflector's store (a LIST, paged or not; a
// streaming list, which is a watch sending the initial state before a
// bookmark; a snapshot loaded at start), it arrives as one sequence on a
// Sink:
//
//	BeginList(source)   the queue returns a Sink for the list
//	Put / Remove        the listed objects, in list order; a streaming list
//	                    may also put a newer state of an object it put
//	                    before, or remove one
//	PageEnd             a page of the list is complete
//	End(rv)             the list is complete, and current at rv
//
// A list that fails, or starts over (an expired continue token), is simply
// dropped: its sink is never ended. The structure follows kube-rs's watcher
// (its Init, InitApply and InitDone events and the store writer consuming
// them); unlike kube-rs's writer, no sink here holds a second copy of what
// did not change.
//
// The queue decides when the listed state becomes visible:
//
//   - an atomic Real takes the whole list (Gather) and queues it as one
//     ReplacedAll at its end: the consumer's store keeps the old state
//     until the processing loop swaps in the new one in one step, as
//     client-go v0.37 does. A listed object in the state the cache holds
//     (same non-empty resourceVersion and UID) is replaced by the cached
//     one, so that only changed objects are held twice during a relist;
//   - with Lists.PageByPage, both queues apply the pages of a relist as
//     they arrive and queue the deletions of what the list no longer has
//     after its last page (below);
//   - a Keyed, a non-atomic Real, and any other store (Gather, in package
//     cache) take the whole list and apply their Replace logic at its end.
//
// # Relists applied page by page
//
// With Lists.PageByPage (SharedIndexInformerOptions.RelistPageByPage, a
// kinformer extension), the queue takes a relist page by page: the objects
// of a page are queued (as Replaced deltas) when the page is complete, and
// PageEnd returns, so that the Reflector fetches the next page, only once
// the processing loop has popped them: at most two pages are in flight.
// When the last page has been applied, the queue looks at the cache
// (Lists.Cached) for the keys the list did not have and queues their
// deletions (carrying tombstones with the cached object, in key order),
// then, on a Real, a Bookmark ending the list at its resourceVersion. The
// first list of an informer is always taken whole: there is no old state
// for it to replace.
//
// What handlers and listers see, compared with an atomic relist:
//   - the same events for the same objects: an update for every listed key
//     that was cached, an add for every other listed key, and a delete
//     carrying a tombstone for every cached key that was not listed;
//   - but the deletions come after the adds and updates, not before them:
//     which keys vanished is only known once the last page is applied;
//   - listers see partial states while a relist runs: some objects already
//     in their new state, others still in their old one, and objects the
//     server no longer has. Every object is always a state the server
//     reported;
//   - a list that fails in the middle leaves what its pages applied in the
//     cache and deletes nothing; the next list starts over and decides the
//     deletions. Its objects that were applied already are reported again
//     as updates. The same holds when a continue token expires in the
//     middle of a list: it starts over with one unpaged request.
//
// The cache's resourceVersion stays a watermark: the Replaced deltas of the
// pages do not move it; the Bookmark after the deletions (Real), or the
// watermark of the queue (Keyed), does once the relist is complete.
package queue
