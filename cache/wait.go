package cache

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// InformerSynced reports whether an informer (or a handler registration) has
// synced. Typically a HasSynced method value.
type InformerSynced func() bool

const (
	// Polling intervals of WaitForCacheSync: the first check is immediate,
	// then the interval doubles from the minimum up to the maximum.
	syncedPollMin = 5 * time.Millisecond
	syncedPollMax = 100 * time.Millisecond
)

// WaitForNamedCacheSync is WaitForCacheSync with log messages naming the
// waiting controller: one before waiting, one on success, and on failure an
// error reported through utilruntime.HandleErrorWithContext (as client-go
// does, so its ErrorHandlers see it).
// Code with contextual logging should prefer
// WaitForNamedCacheSyncWithContext.
func WaitForNamedCacheSync(controllerName string, stopCh <-chan struct{}, cacheSyncs ...InformerSynced) bool {
	logger := klog.Background()
	logger.Info("Waiting for caches to sync", "controller", controllerName)
	if !WaitForCacheSync(stopCh, cacheSyncs...) {
		utilruntime.HandleErrorWithContext(context.Background(), nil, "Unable to sync caches", "controller", controllerName)
		return false
	}
	logger.Info("Caches are synced", "controller", controllerName)
	return true
}

// WaitForNamedCacheSyncWithContext waits like WaitForCacheSync until ctx is
// done, logging through the context's logger before waiting and on success;
// a failure is reported through utilruntime.HandleErrorWithContext with ctx,
// as client-go does. To log less, put a logger with a higher verbosity
// into ctx, e.g. klog.NewContext(ctx, logger.V(5)).
func WaitForNamedCacheSyncWithContext(ctx context.Context, cacheSyncs ...InformerSynced) bool {
	logger := klog.FromContext(ctx)
	logger.Info("Waiting for caches to sync")
	if !WaitForCacheSync(ctx.Done(), cacheSyncs...) {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unable to sync caches")
		return false
	}
	logger.Info("Caches are synced")
	return true
}

// WaitForCacheSync waits until every function returns true, or until stopCh
// is closed. It returns true on success and false when stopped first. The
// functions are checked immediately, so already synced caches return at
// once (even with a closed stopCh); while waiting, checks become less
// frequent, from 5ms up to every 100ms.
//
// To wait without any polling, use WaitFor with DoneCheckers.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func WaitForCacheSync(stopCh <-chan struct{}, cacheSyncs ...InformerSynced) bool {
	allSynced := func() bool {
		for _, synced := range cacheSyncs {
			if synced != nil && !synced() {
				return false
			}
		}
		return true
	}
	if allSynced() {
		return true
	}
	interval := syncedPollMin
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-stopCh:
			return false
		case <-timer.C:
		}
		if allSynced() {
			return true
		}
		interval = min(2*interval, syncedPollMax)
		timer.Reset(interval)
	}
}

// WaitFor waits until every checker is done and returns true, or returns
// false when ctx is done first. It does not poll and starts no goroutines.
//
// With a non-empty what, progress is logged through the context's logger at
// verbosity 0: "Waiting" before, "Done waiting" with the instance name as
// each checker completes, and "Timed out waiting" with the cause and the
// sorted names of the unfinished checkers. Lower the verbosity with
// klog.NewContext(ctx, klog.FromContext(ctx).V(2)).
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	logger := klog.FromContext(ctx)
	if what != "" {
		helper, l := logger.WithCallStackHelper()
		logger = l
		helper()
		logger.Info("Waiting", "for", what)
	}

	remaining := make([]DoneChecker, 0, len(checkers))
	for _, c := range checkers {
		if c != nil {
			remaining = append(remaining, c)
		}
	}
	// cases[0] is ctx.Done(); cases[i+1] belongs to remaining[i].
	cases := make([]reflect.SelectCase, 0, len(remaining)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	for _, c := range remaining {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.Done())})
	}
	// remove drops remaining[i] and returns it. The "Done waiting" lines
	// are logged in WaitFor's own body, so that the logger's call stack
	// helper names WaitFor's caller, as client-go's lines do.
	remove := func(i int) DoneChecker {
		c := remaining[i]
		remaining = slices.Delete(remaining, i, i+1)
		cases = slices.Delete(cases, i+1, i+2)
		return c
	}
	ctxDone := false
	for len(remaining) > 0 {
		// Collect everything already done first, so that the order of the
		// log messages does not depend on select's random choice. After ctx
		// is done this is the final check.
		for i := 0; i < len(remaining); {
			if isClosed(cases[i+1].Chan) {
				if c := remove(i); what != "" {
					logger.Info("Done waiting", "for", what, "instance", c.Name())
				}
				continue
			}
			i++
		}
		if len(remaining) == 0 || ctxDone {
			break
		}
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			ctxDone = true
			continue
		}
		if c := remove(chosen - 1); what != "" {
			logger.Info("Done waiting", "for", what, "instance", c.Name())
		}
	}
	if len(remaining) == 0 {
		return true
	}
	if what != "" {
		names := make([]string, len(remaining))
		for i, c := range remaining {
			names[i] = c.Name()
		}
		slices.Sort(names)
		logger.Info("Timed out waiting", "for", what, "cause", context.Cause(ctx), "instances", names)
	}
	return false
}

// isClosed reports whether a receive-only channel value is closed (or has a
// value ready) without blocking. A nil channel is never closed.
func isClosed(ch reflect.Value) bool {
	if ch.IsNil() {
		return false
	}
	chosen, _, _ := reflect.Select([]reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: ch},
		{Dir: reflect.SelectDefault},
	})
	return chosen == 0
}

// SyncResult summarises a shared informer factory's
// WaitForCacheSyncWithContext. The informers may have synced before the
// handlers registered with them; code that needs its own state to be current
// should also wait for the registrations' HasSyncedChecker.
type SyncResult struct {
	// Err is nil if all caches synced, otherwise why waiting stopped
	// (context.Cause of the context).
	Err error

	// Synced tells for each informer, by object type, whether it synced.
	Synced map[reflect.Type]bool
}

// AsError returns nil if all caches synced, else an error that wraps Err and
// lists the types of the unsynced informers in sorted order.
func (c SyncResult) AsError() error {
	if c.Err == nil {
		return nil
	}
	var unsynced []string
	for t, ok := range c.Synced {
		if !ok {
			unsynced = append(unsynced, t.String())
		}
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), c.Err)
}
