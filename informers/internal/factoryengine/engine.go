package factoryengine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/sharding"
)

// Engine holds a factory's informers, one per key K (a reflect.Type or a
// schema.GroupVersionResource), as values V (the shared informer itself, or
// a value wrapping it, such as a generic informer with its lister). All
// methods are safe for concurrent use.
type Engine[K comparable, V any] struct {
	// name says which informer a key stands for, in errors and in the
	// order of ListInformers.
	name func(K) string
	// informerOf returns the shared informer a value holds.
	informerOf func(V) cache.SharedIndexInformer

	mu sync.Mutex
	// entries holds the one value per key.
	entries map[K]V
	// started records which of them Start has launched.
	started map[K]bool
	// runs holds, per started informer, what stops it alone.
	runs map[K]*run
	// shuttingDown turns Start into a no-op once Shutdown was called.
	shuttingDown bool
	// running counts the goroutines Start launched; Shutdown waits for them.
	running sync.WaitGroup
}

// New returns an empty Engine. name names a key (reflect.Type.String,
// schema.GroupVersionResource.String); informerOf returns the shared
// informer of a value and must not return nil for a value the engine holds.
func New[K comparable, V any](name func(K) string, informerOf func(V) cache.SharedIndexInformer) *Engine[K, V] {
	return &Engine[K, V]{
		name:       name,
		informerOf: informerOf,
		entries:    map[K]V{},
		started:    map[K]bool{},
		runs:       map[K]*run{},
	}
}

// Get returns the value of key. When there is none and build is not nil, it
// calls build under the engine's lock and keeps what build returns unless
// build reports false; it returns false when there is (still) no value. An
// informer added while the factory runs is launched by the next
// StartWithContext.
func (e *Engine[K, V]) Get(key K, build func() (V, bool)) (V, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.entries[key]; ok {
		return v, true
	}
	if build == nil {
		var zero V
		return zero, false
	}
	v, ok := build()
	if !ok {
		return v, false
	}
	e.entries[key] = v
	return v, true
}

// StartWithContext runs every informer not yet running, each in a goroutine
// of its own, until ctx is done or it is released. It does not block, and
// does nothing after Shutdown.
func (e *Engine[K, V]) StartWithContext(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shuttingDown {
		return
	}
	for key, v := range e.entries {
		if e.started[key] {
			continue
		}
		e.started[key] = true
		e.runs[key] = startRun(ctx, &e.running, e.informerOf(v))
	}
}

// WaitForCacheSync blocks until every informer Start has launched has
// synced, ctx is done or, with options.FailFast, one of them failed with an
// error retrying will not cure (see cache.WaitForCacheSyncWithOptions). It
// reports per key whether the informer synced, and, when one did not, an
// error: cache.WaitForCacheSyncWithOptions's, which names every unsynced
// informer, or the cause of ctx when only an informer not built by package
// cache went back to unsynced.
func (e *Engine[K, V]) WaitForCacheSync(ctx context.Context, options cache.SyncOptions) (map[K]bool, error) {
	started := e.startedInformers()
	list := make([]cache.SharedInformer, 0, len(started))
	for _, informer := range started {
		list = append(list, informer)
	}
	waited := cache.WaitForCacheSyncWithOptions(ctx, options, list...)
	// The result is keyed by the factory's keys, which need not be the
	// types the cache package sees (a typed factory may be given any
	// informer). Syncing is one-way: if all have synced by now, nothing
	// failed.
	synced := make(map[K]bool, len(started))
	all := true
	for key, informer := range started {
		ok := informer.HasSynced()
		synced[key] = ok
		all = all && ok
	}
	if all {
		return synced, nil
	}
	if waited.Err != nil {
		return synced, waited.Err
	}
	return synced, context.Cause(ctx)
}

// startedInformers returns a snapshot of the informers Start has launched.
func (e *Engine[K, V]) startedInformers() map[K]cache.SharedIndexInformer {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[K]cache.SharedIndexInformer, len(e.started))
	for key := range e.started {
		out[key] = e.informerOf(e.entries[key])
	}
	return out
}

// ListInformers returns every informer built so far, ordered by the names
// of their keys; it implements cache.InformerSource.
func (e *Engine[K, V]) ListInformers() []cache.SharedIndexInformer {
	e.mu.Lock()
	defer e.mu.Unlock()
	keys := make([]K, 0, len(e.entries))
	for key := range e.entries {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b K) int { return strings.Compare(e.name(a), e.name(b)) })
	out := make([]cache.SharedIndexInformer, len(keys))
	for i, key := range keys {
		out[i] = e.informerOf(e.entries[key])
	}
	return out
}

// Release stops the informer of key, waits for its goroutines to return (or
// ctx to end), drops it so that the next Get builds a new one, and empties
// its cache (a *sharding.Informer empties its own when it stops). It
// returns false when there is no informer for key, and an error wrapping
// ctx's cause when ctx ended before the informer stopped (it is dropped all
// the same and stops in the background; Shutdown still waits for it).
func (e *Engine[K, V]) Release(ctx context.Context, key K) (bool, error) {
	e.mu.Lock()
	v, ok := e.entries[key]
	r := e.runs[key]
	delete(e.entries, key)
	delete(e.started, key)
	delete(e.runs, key)
	e.mu.Unlock()
	if !ok {
		return false, nil
	}
	what := e.name(key)
	if r != nil {
		r.cancel()
		select {
		case <-r.done:
		case <-ctx.Done():
			return true, fmt.Errorf("releasing the informer of %s: it has not stopped yet: %w", what, context.Cause(ctx))
		}
	}
	if informer := e.informerOf(v); informer != nil {
		if _, sharded := sharding.InformerOf(informer); sharded {
			// Its cache is read only; stopping dropped every range.
			return true, nil
		}
		// Nothing writes to the cache any more; free what it holds.
		if err := informer.GetIndexer().Replace(nil, ""); err != nil {
			return true, fmt.Errorf("releasing the informer of %s: emptying its cache: %w", what, err)
		}
	}
	return true, nil
}

// Shutdown makes later starts no-ops and waits until every goroutine the
// engine launched has returned (once its context is done). It may be called
// repeatedly and concurrently.
func (e *Engine[K, V]) Shutdown() {
	e.mu.Lock()
	e.shuttingDown = true
	e.mu.Unlock()
	// No goroutine can be added from here on: Start checks shuttingDown
	// under mu before it adds any.
	e.running.Wait()
}

// run is one informer launched by an Engine: cancel stops it alone, done is
// closed once its RunWithContext returned.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startRun runs informer in a goroutine counted by wg, under a context of
// its own derived from ctx.
func startRun(ctx context.Context, wg *sync.WaitGroup, informer cache.SharedInformer) *run {
	ctx, cancel := context.WithCancel(ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	wg.Go(func() {
		defer close(r.done)
		defer cancel()
		informer.RunWithContext(ctx)
	})
	return r
}
