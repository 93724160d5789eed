package diag

import (
	"context"
	"reflect"
)

// DoneChecker is what a sync wait watches: a channel closed once the
// informer has synced. cache's DoneChecker has this method.
type DoneChecker interface {
	Done() <-chan struct{}
}

// SyncWaitee is one informer a fail-fast sync wait watches.
type SyncWaitee struct {
	// Synced is closed once the informer synced.
	Synced DoneChecker
	// Stats are the informer's, or nil for an informer whose errors
	// cannot be seen (built outside kinformer): only its sync is awaited.
	Stats *Stats
}

// isDone reports whether checker's channel is closed.
func isDone(checker DoneChecker) bool {
	select {
	case <-checker.Done():
		return true
	default:
		return false
	}
}

// WaitFailFast waits until every waitee synced or ctx is done, or until a
// waitee that has not synced has a current error (Stats.CurrentError) that
// permanent says retrying will not cure. It reports true in that last case
// only. It starts no goroutine and does not poll: it wakes on ctx, on a
// waitee's sync and on an error recorded for a waitee, and looks again.
func WaitFailFast(ctx context.Context, waitees []SyncWaitee, permanent func(error) bool) bool {
	pending := append([]SyncWaitee(nil), waitees...)
	for {
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
		kept := pending[:0]
		for _, w := range pending {
			if isDone(w.Synced) {
				continue
			}
			if w.Stats != nil {
				// Take the signal before reading the error, so that an
				// error recorded in between still wakes us.
				sig := w.Stats.ErrorSignal()
				if permanent(w.Stats.CurrentError()) {
					return true
				}
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(sig)})
			}
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.Synced.Done())})
			kept = append(kept, w)
		}
		pending = kept
		if len(pending) == 0 {
			return false
		}
		if chosen, _, _ := reflect.Select(cases); chosen == 0 {
			return false
		}
	}
}
