package controllerruntime

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// drainLimit bounds how long Stop of a drainingWatch reads what the stopped
// watch still delivers, waiting for it to close its channel. A watch over
// an HTTP stream closes it as soon as its response body is closed; the
// bound only matters for a watch that breaks the contract of Stop.
const drainLimit = 10 * time.Second

// drainingListerWatcher is the ListerWatcher controller-runtime gave the
// hook, whose watches are drainingWatches. It has the context forms and
// answers IsWatchListSemanticsUnSupported as the wrapped ListerWatcher does
// (false when it does not say), so kinformer's Reflector lists and watches
// through it as through the original.
type drainingListerWatcher struct {
	lw  toolscache.ListerWatcher
	ctx toolscache.ListerWatcherWithContext
}

// drainWatches wraps lw so that its watches drain on Stop; nil stays nil.
func drainWatches(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	if lw == nil {
		return nil
	}
	return &drainingListerWatcher{lw: lw, ctx: toolscache.ToListerWatcherWithContext(lw)}
}

// List lists through the wrapped ListerWatcher.
func (d *drainingListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return d.lw.List(options)
}

// Watch opens a watch through the wrapped ListerWatcher; it drains on Stop.
func (d *drainingListerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return drainOnStop(d.lw.Watch(options))
}

// ListWithContext lists through the wrapped ListerWatcher's context form.
func (d *drainingListerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return d.ctx.ListWithContext(ctx, options)
}

// WatchWithContext opens a watch through the wrapped ListerWatcher's context
// form; it drains on Stop.
func (d *drainingListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return drainOnStop(d.ctx.WatchWithContext(ctx, options))
}

// IsWatchListSemanticsUnSupported is the wrapped ListerWatcher's answer, or
// false when it gives none (which is what an absent method means to a
// Reflector).
func (d *drainingListerWatcher) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(d.lw)
}

// drainOnStop wraps w, when there is one, in a drainingWatch.
func drainOnStop(w watch.Interface, err error) (watch.Interface, error) {
	if w == nil {
		return nil, err
	}
	return drainingWatch{w}, err
}

// drainingWatch is a watch whose Stop, after stopping it, reads and drops
// what it still delivers until its channel closes (or drainLimit passes).
//
// controller-runtime wraps the watches of metadata-only informers in
// apimachinery's watch.Filter, whose goroutine hands each event on with a
// blocking send. When a manager stops, the ended request makes the stream
// under the filter deliver one last event (the error of the cancelled
// read), and the filter's goroutine blocks forever sending it to a
// Reflector that has stopped reading: Stop alone never frees it. client-go's
// Reflector leaves it blocked when its select happens to take the context's
// end before that event; kinformer's always takes a stop first. Reading
// until the channel closes lets the goroutine finish.
//
// The Reflector no longer reads a watch it has stopped, so nothing it
// would have read is taken from it.
type drainingWatch struct {
	watch.Interface
}

// Stop stops the watch and drains its channel; see drainingWatch. Safe to
// call more than once and concurrently.
func (w drainingWatch) Stop() {
	w.Interface.Stop()
	results := w.Interface.ResultChan()
	timer := time.NewTimer(drainLimit)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-results:
			if !ok {
				return
			}
		case <-timer.C:
			return
		}
	}
}
