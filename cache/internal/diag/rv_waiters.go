package diag

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// ResourceVersionWaiters holds the callers waiting for one informer's cache
// to reach a resourceVersion. The processing loop calls Notify after the
// watermark moved; it costs one atomic load while nobody waits. Safe for
// concurrent use; the zero value is ready to use.
type ResourceVersionWaiters struct {
	// waiting counts registered waiters; Notify looks at the watermark
	// only when it is not zero.
	waiting atomic.Int32

	mu      sync.Mutex
	waiters map[*rvWaiter]struct{}
	// stopped, once not nil, is the cause every wait fails with.
	stopped error
}

// rvWaiter is one blocked Wait call.
type rvWaiter struct {
	rv   string
	done chan error // buffered, receives exactly one value
}

// rvCaughtUp compares the watermark reached with want; it returns an error
// when reached is not comparable.
func rvCaughtUp(reached, want string) (bool, error) {
	if reached == "" {
		return false, nil // nothing applied yet
	}
	cmp, err := resourceversion.CompareResourceVersion(reached, want)
	if err != nil {
		return false, fmt.Errorf("the informer's resourceVersion %q cannot be compared with %q: %w", reached, want, err)
	}
	return cmp >= 0, nil
}

// Wait blocks until the watermark that watermark returns is at or past
// want. It returns nil once it is (at once when it already is); an error
// wrapping resourceversion's InvalidResourceVersion when want, or the
// watermark, is not a comparable resourceVersion; an error wrapping the
// cause given to Stop when the waiters are stopped first (or were); and an
// error wrapping ctx's cause when ctx ends first.
func (w *ResourceVersionWaiters) Wait(ctx context.Context, want string, watermark func() string) error {
	if _, err := resourceversion.CompareResourceVersion(want, want); err != nil {
		return fmt.Errorf("cannot wait for resourceVersion %q: %w", want, err)
	}
	waiter := &rvWaiter{rv: want, done: make(chan error, 1)}
	w.mu.Lock()
	if w.stopped != nil {
		w.mu.Unlock()
		return fmt.Errorf("waiting for resourceVersion %q: %w", want, w.stopped)
	}
	if w.waiters == nil {
		w.waiters = map[*rvWaiter]struct{}{}
	}
	w.waiters[waiter] = struct{}{}
	w.waiting.Add(1)
	w.mu.Unlock()
	defer w.remove(waiter)

	// Registered first, then looked at the watermark: a batch applied
	// before the registration is seen here, one applied after it calls
	// Notify.
	if ok, err := rvCaughtUp(watermark(), want); err != nil || ok {
		return err
	}
	select {
	case err := <-waiter.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for resourceVersion %q (cache at %q): %w", want, watermark(), context.Cause(ctx))
	}
}

func (w *ResourceVersionWaiters) remove(waiter *rvWaiter) {
	w.mu.Lock()
	if _, ok := w.waiters[waiter]; ok {
		delete(w.waiters, waiter)
		w.waiting.Add(-1)
	}
	w.mu.Unlock()
}

// Notify releases the waiters that the watermark watermark returns has
// caught up with, and those it cannot be compared with (with the error);
// watermark is called only when someone waits.
func (w *ResourceVersionWaiters) Notify(watermark func() string) {
	if w.waiting.Load() == 0 {
		return
	}
	rv := watermark()
	w.mu.Lock()
	defer w.mu.Unlock()
	for waiter := range w.waiters {
		ok, err := rvCaughtUp(rv, waiter.rv)
		if err == nil && !ok {
			continue
		}
		waiter.done <- err
		delete(w.waiters, waiter)
		w.waiting.Add(-1)
	}
}

// Stop releases every waiter with an error wrapping cause, which must not
// be nil, and makes later waits fail at once the same way.
func (w *ResourceVersionWaiters) Stop(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = cause
	for waiter := range w.waiters {
		waiter.done <- fmt.Errorf("waiting for resourceVersion %q: %w", waiter.rv, cause)
		delete(w.waiters, waiter)
		w.waiting.Add(-1)
	}
}
