package gvrfactory

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

// run is one informer started by a Factory: cancel stops it alone, done is
// closed once its RunWithContext returned.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startRun runs informer in a goroutine counted by wg, under a context of
// its own derived from ctx.
func startRun(ctx context.Context, wg *sync.WaitGroup, informer cache.SharedIndexInformer) *run {
	ctx, cancel := context.WithCancel(ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	wg.Go(func() {
		defer close(r.done)
		defer cancel()
		informer.RunWithContext(ctx)
	})
	return r
}

// ReleaseResource stops the informer of gvr, waits for its goroutines to
// return (or ctx to end), drops it so that the next ForResource builds a new
// one, and empties its cache. It returns false when there is no informer for
// gvr, and an error wrapping ctx's error when ctx ended before the informer
// stopped (it is dropped all the same and stops in the background; Shutdown
// still waits for it). It implements informers.ResourceReleaser.
func (f *Factory) ReleaseResource(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
	f.mu.Lock()
	i, ok := f.informers[gvr]
	r := f.runs[gvr]
	delete(f.informers, gvr)
	delete(f.started, gvr)
	delete(f.runs, gvr)
	f.mu.Unlock()
	if !ok {
		return false, nil
	}
	if r != nil {
		r.cancel()
		select {
		case <-r.done:
		case <-ctx.Done():
			return true, fmt.Errorf("releasing the informer of %s: it has not stopped yet: %w", gvr, context.Cause(ctx))
		}
	}
	// Nothing writes to the cache any more; free what it holds.
	if err := i.informer.GetIndexer().Replace(nil, ""); err != nil {
		return true, fmt.Errorf("releasing the informer of %s: emptying its cache: %w", gvr, err)
	}
	return true, nil
}
