package cache

import (
	"context"
	"errors"
	"io"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// relistReason is the diagnostics' reason of the next list the core gives.
func relistReason(reason reflector.ListReason) diag.ListReason {
	switch reason {
	case reflector.ListReasonExpired:
		return diag.ReasonExpired
	case reflector.ListReasonStreamFallback:
		return diag.ReasonStreamFallback
	}
	return diag.ReasonWatchError
}

// reportWatchFailure passes a failure the Reflector handles by itself (and
// so does not return) to a watch error handler set by the informer.
func (r *Reflector) reportWatchFailure(ctx context.Context, err error) {
	r.stats.RecordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
	}
}

// handleListAndWatchError passes an error returned by ListAndWatch to the
// watch error handler, or to DefaultWatchErrorHandler when none is set.
func (r *Reflector) handleListAndWatchError(ctx context.Context, err error) {
	r.stats.RecordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
		return
	}
	DefaultWatchErrorHandler(ctx, r, err)
}

// WatchErrorHandler is called with a list or watch failure of a Reflector;
// the Reflector then backs off and retries. Handlers must return quickly.
//
// Contextual logging: use WatchErrorHandlerWithContext in code that supports
// it.
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is called with a list or watch failure of a
// Reflector; the Reflector then backs off and retries. Handlers must return
// quickly; anything expensive belongs on another goroutine.
//
// A handler set on an informer (SetWatchErrorHandler /
// SetWatchErrorHandlerWithContext) reaches its Reflector, and is called for
// every failure, including those the Reflector handles by itself without
// ending its cycle (a watch that cannot be opened because the connection is
// refused or the server answers 429, a watch that ends with 410 Gone /
// Expired, an internal error that is retried, a very short watch, a
// streaming list retried after a refused connection or a 429): a handler
// sees why an informer is not current. As in client-go, a handler never
// hears of a streaming list that falls back to LIST (the server cannot
// stream lists, the stream failed or stayed silent): the LIST's own
// failure, if any, is what it gets. DefaultWatchErrorHandler (used when no
// handler is set) only receives the errors that end a ListAndWatch, as in
// client-go. Differs from client-go v0.37.2; see COMPATIBILITY.md.
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// DefaultWatchErrorHandler logs err the way client-go does: an expired or
// gone resource version at V(4), io.EOF (a normal close) not at all,
// io.ErrUnexpectedEOF at V(1), anything else as an error through
// utilruntime.HandleErrorWithContext. It accepts a nil Reflector.
// io.EOF and io.ErrUnexpectedEOF are recognised when wrapped too. Differs
// from client-go v0.37.2; see COMPATIBILITY.md.
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	name, description := "", ""
	if r != nil {
		name, description = r.name, r.typeDescription
	}
	switch {
	case isExpiredError(err):
		// The relist asks for data at least as new as the last resource
		// version seen, so this is routine.
		klog.FromContext(ctx).V(4).Info("Watch closed", "reflector", name, "type", description, "err", err)
	case errors.Is(err, io.EOF):
	case errors.Is(err, io.ErrUnexpectedEOF):
		klog.FromContext(ctx).V(1).Info("Watch closed with unexpected EOF", "reflector", name, "type", description, "err", err)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", name, "type", description)
	}
}
