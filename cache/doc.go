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
//	     │          Replace. DeltaFIFO, which coalesces per key, can be chosen instead
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
