// Package store is the engine of the cache package's stores: a map from
// keys to objects with named indices, safe for concurrent use, that keeps
// the resource version its content stands at. cache.NewStore,
// cache.NewIndexer and cache.NewThreadSafeStore hold a *Map and adapt it to
// client-go's interfaces; an informer's cache is one of them.
//
// The engine does not import the cache package and knows none of its
// types. Objects are any; keys are strings computed by the caller (the
// engine has no key function); an index function is func(any) ([]string,
// error). Namespaces and resource versions are read from the object
// metadata with ObjectMeta, which the cache package uses too. Errors are
// the engine's own (IndexError, IndexFailures, WriteFailure); the caller
// decides how a user meets them.
//
// # Content and indices
//
// Each key holds at most one object, the last written. Objects are stored
// and handed out as they are given: Get, List, Index and ByIndex return the
// stored objects themselves, and callers must treat them as read-only.
// Every index is exactly what its function computes for the stored
// objects, except as said below for failures and mutated objects: a key is
// under a value of an index if and only if the index function returned
// that value for the key's object when it was written (or when the index
// was added, for an object stored before). A value no stored
// object has is not kept (ListIndexFuncValues never lists it).
//
// The values of an index are remembered per key when the object is
// written, so moving or removing a key never calls an index function again
// and an object a caller mutates in place cannot corrupt an index (it is
// not re-indexed either). The exception is an index whose function is
// Config.NamespaceIndexFunc: its value is the object's namespace, read
// from the metadata without calling the function and without allocating,
// and not remembered. It takes the stored object's namespace at its word,
// as client-go does: a write that keeps the namespace a caller changed in
// place leaves the key under the old one, until the key is deleted or moves
// to another namespace (then it is found wherever it is held).
//
// # The index failure rule
//
// An object on which an index function fails (returns an error, is nil,
// or, for the namespace index, the object's metadata cannot be read) is
// stored all the same and left out of that index only: every other index
// lists it. This holds for every path: Put returns an *IndexError (several
// joined when several indices failed), a Transaction reports a
// WriteFailure with Applied set, and Replace applies the whole list and
// returns an *IndexFailures counting such objects, each once. IsIndexError
// tells these errors from others. A list is never dropped because of one
// object. AddIndexers is the one exception: a new index function that fails
// on a stored object fails the call, which then changes nothing.
//
// # Transactions
//
// Transaction applies a batch of writes (add, update, delete) in order
// under one acquisition of the write lock: readers never see part of a
// batch, and the caller may observe, under the lock, what each key held
// just before its write (to tell an add from an update without a Get). A
// write of an unknown operation is skipped and reported; the others apply
// regardless.
//
// # Replace
//
// Replace makes a list the whole content in one step: readers see the old
// content until the new one, with every index rebuilt, is installed. The
// new content is built without holding the lock (a large relist does not
// block readers); if AddIndexers changed the set of indices meanwhile, it
// is built again under the lock, so the installed content always has every
// index. A later duplicate key in the list wins.
//
// # The resource version and the watermark
//
// The store records a resource version (ResourceVersion; "" until one is
// recorded). How it moves depends on Config.Watermark:
//
//   - Without a watermark (client-go's behaviour), it is the newest version
//     seen: that of every written object with metadata (the last applied
//     write with metadata of a Transaction), of every Replace and of every
//     Bookmark, whatever its value.
//   - With a watermark (an informer's cache), it means that every change at
//     or below it has been applied. Writes of objects never move it: the
//     store cannot tell from one object whether every earlier change is
//     applied. The owner moves it forward with AdvanceResourceVersion once
//     that is true, and Bookmark moves it forward only. A complete list is
//     the server's truth: Replace, and ResetResourceVersion for a list the
//     owner applied in several steps, set it to the list's version even
//     when that is lower (after a bogus huge version, or an etcd restored
//     from a backup); an empty version leaves it alone.
//
// Moving forward compares versions as the API defines them (decimal
// integers): an empty version never moves it, and anything moves it from
// an empty one. A version that does not parse as an unsigned 64-bit
// integer is bad data when the recorded one does, and is ignored; when
// neither does (a server with opaque versions), the new one is taken, since
// versions come in the server's order. Config.OnResourceVersion hears of
// every version recorded, under the lock.
//
// # Concurrency
//
// Every method is safe for concurrent use. Readers share a read lock;
// writes, Transaction, the installation of a Replace and AddIndexers take
// the write lock. Index functions are called with or without the lock
// held and must not call the store.
package store
