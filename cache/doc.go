// Package cache is kinformer's reimplementation of k8s.io/client-go/tools/cache: the machinery
// that keeps a client-side, indexed, event-driven cache of Kubernetes API objects in step with
// the API server.
//
// The exported names and signatures are those of client-go v0.37.2, so a program moves over by
// changing its import path. Where client-go has a known defect, the signature is kept, the
// behaviour is fixed, and the identifier's doc comment says so under "Difference from
// client-go".
//
// # The data path
//
// A SharedIndexInformer owns everything on the way from the server to the handlers:
//
//	ListerWatcher   LIST (paged, or a streaming list) and WATCH over a clientset
//	     │
//	 Reflector      lists, then watches from the list's resourceVersion; resumes a closed
//	     │          watch from the last resourceVersion it saw (bookmarks included);
//	     │          relists on 410 Gone; backs off with jitter; reports every failure to the
//	     │          watch error handler
//	     ▼
//	  RealFIFO      the queue of Deltas, in watch order (the default); a relist is one atomic
//	     │          ReplacedAll. DeltaFIFO, which coalesces per key, can be chosen instead
//	     ▼
//	processLoop     pops a batch of deltas, applies it to the Indexer in one transaction,
//	     │          then hands the notifications to every listener
//	     ▼
//	  Indexer       the cache: key → object, plus named indices (by namespace, …).
//	     │          Listers read it and never talk to the server
//	     ▼
//	 listeners      one per registered handler, each with its own unbounded buffer and
//	                goroutine, its own resync period and its own HasSynced
//
// # Lists and relists
//
// Every state that reaches the queue (a LIST, paged or not; a streaming list; a snapshot
// loaded at start) arrives as one sequence: the start of a list, its objects in order, and its
// end at a resourceVersion. The queue decides when the state becomes visible. By default, as
// in client-go v0.37, a relist is atomic: listers see the old state until the complete listed
// state replaces it in one step, then handlers get a delete (DeletedFinalStateUnknown) for
// every object that vanished, followed by an update or add for every listed object in list
// order. A listed object whose resourceVersion is the cached one's is not held twice: the
// cached object is kept (so the transform does not run again on it, and its update carries
// the same object as old and new). SharedIndexInformerOptions.RelistPageByPage applies relists
// page by page instead, trading partial states and late deletions for less memory.
//
// The resourceVersion of an informer's cache (LastStoreSyncResourceVersion) is a watermark:
// every change at or below it has been applied. It moves only after a complete list or once
// the changes up to it are applied, never backwards, and never ahead of the content with
// either queue. WaitForResourceVersion and snapshots rely on it.
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
