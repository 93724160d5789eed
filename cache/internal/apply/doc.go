// Package apply is the engine that applies the deltas an informer pops from
// its queue to its cache and tells its handlers what changed: one Applier
// per informer (and per low-level controller of cache.NewInformer), and,
// for a shared informer, one Notes collecting the notifications of each
// batch for the fanout processor.
//
// The engine never imports package cache. It is generic over the caller's
// delta type D and reads each delta through Ops (its kind and object; the
// list, resync and bookmark records; the tombstone of a deleted object
// whose final state is unknown), so that a delta is never copied into
// another record and back. It writes to any value with the methods of
// client-go's Store it calls (Store); a store of package cache is written
// through its engine directly (Cache: cache/internal/store, with the
// store's key function and transform), and a store of the caller's that
// applies transactions through Transactor. Handlers are fanout.Handler.
// Package cache adapts: cache.Delta and its Info records become an Ops,
// a *cache an apply.Cache.
//
// # Contract
//
// Process applies the deltas of one popped item, oldest first;
// ProcessBatch applies a batch (each key at most once) the same way, its
// adds, updates and deletes in one store transaction, so that readers
// never see part of it. The handler is told of each applied change, in
// order, after the store holds it:
//
//   - Added, Updated, Replaced and Sync store the object: an update (with
//     the previously cached object as old) when the key was cached, else
//     an add (with isInInitialList);
//   - Deleted removes the key and reports a delete of the delta's object
//     (possibly a tombstone);
//   - ReplacedAll makes the list the whole content in one step, then
//     reports a tombstone delete for every key that vanished, in key
//     order, then an add or update for every listed object, in list order;
//   - SyncAll reports an update (cached, cached) for every cached object;
//   - Bookmark records the resourceVersion (and, when it ends a list
//     applied piece by piece, sets the watermark to it).
//
// Keys are computed once per object: the queue's when it computed them
// with the store's key function and nothing transforms objects in
// between (Config.KeysOf), else by the store.
//
// # Invariants
//
//   - One bad object never stops the others: an object the store does not
//     take (no key, a failing transform) is logged and counted
//     (Rejected), and every other delta of the item or batch, and the rest
//     of a list, is applied. An object an index function fails on is
//     stored outside that index, notified as any other, and counted
//     (Unindexed). A delta whose record cannot be read (a ReplacedAll
//     without a list) is an error: ProcessBatch returns it without
//     applying the rest of the batch.
//   - Handlers hear only of what the store holds: a change not applied is
//     not notified, and a list the store refused as a whole notifies
//     nothing.
//   - The watermark of an informer's cache (Cache.Watermark) moves only
//     after the deltas that bring it are applied: to the queue's watermark
//     when it keeps one (Config.QueueWatermark), else to the
//     resourceVersion of the newest watch change applied (not of a
//     tombstone, a listed or a resynced object). A complete list sets it,
//     even lower; the objects of a list applied piece by piece do not
//     move it.
//   - Applied counts the deltas a pop applied (a list its objects and the
//     deletions it derived), for the informer's statistics.
//   - Deliver and DeliverItem, a shared informer's pop functions
//     (Config.Delivery), apply a popped item with the Delivery's lock
//     held, tell Popped what was applied, and hand the Notes collected for
//     it to the processor in one Distribute call before the lock is
//     released: whoever takes the lock (a handler being added, a snapshot)
//     sees each item either not applied or applied and handed on. An
//     update whose old and new resourceVersions are equal is a resync
//     note, for the handlers due for a resync only.
//
// Differs from client-go v0.37.2 (processDeltas); see COMPATIBILITY.md.
//
// # Concurrency
//
// An Applier and a Notes are used by one goroutine at a time (the
// informer's processing loop); Rejected and Unindexed may be read from any
// goroutine.
package apply
