package cache

import (
	"context"
	"errors"
	"fmt"
)

// ResourceVersionWaiter is implemented by the shared informers of this
// package (and, through the package-level WaitForResourceVersion, by the
// typed and factory-made informers wrapping them). kinformer extension, not
// in client-go.
type ResourceVersionWaiter interface {
	// WaitForResourceVersion blocks until the informer's cache has caught
	// up to resourceVersion; see the package-level WaitForResourceVersion
	// for the exact contract.
	WaitForResourceVersion(ctx context.Context, resourceVersion string) error
}

// ErrInformerStopped is returned (wrapped) by WaitForResourceVersion when the
// informer stopped, or had stopped, before its cache caught up.
var ErrInformerStopped = errors.New("informer stopped")

// WaitForResourceVersion blocks until informer's cache has caught up to
// resourceVersion, typically one returned by a create, update, patch or
// delete the caller made, so that a lister read afterwards sees that write
// or a later state (read-your-writes). kinformer extension, not in client-go.
//
// Caught up means: the cache's resourceVersion, a watermark (every change at
// or below it has been applied to the cache), is greater than or equal to
// resourceVersion. It moves when a watch event or bookmark is applied and
// every change before it was, and when a list is complete: never in the
// middle of a relist (atomic or page by page), and, with UseDeltaFIFO,
// never while an earlier change is still queued. Resource versions are compared as the API defines for
// etcd-backed servers (k8s.io/apimachinery/pkg/util/resourceversion,
// KEP 4988): decimal integers without leading zeros, compared numerically.
// The comparison is only meaningful within one resource (and every resource
// of one etcd, which is how kube-apiserver stores the built-in ones). It
// returns as soon as the cache holds the state; the handlers may still be
// processing the notifications of that state.
//
// Wait for the resourceVersion of a write the informer sees (an object of
// its resource that its selectors select). A write it does not see (another
// resource, or filtered out) produces no event for it: the wait then ends
// with the next event or bookmark at or past resourceVersion, and
// kube-apiserver's bookmarks carry the newest version of the informer's own
// resource, which on an idle resource may not move for a long time (measured
// on kube-apiserver v0.37: bookmarks of an idle pods watch stayed at the same
// version for 60 s while secrets were written). An informer with UseDeltaFIFO does not pass bookmarks to
// its cache: there only a list or an event at or past resourceVersion ends
// the wait.
//
// It returns nil once caught up (at once when the cache already is); an
// error wrapping resourceversion.InvalidResourceVersion when resourceVersion
// is not such an integer ("" and "0" included), or when the informer's own
// resource versions are not (a server whose versions cannot be compared);
// an error wrapping ErrInformerStopped when the informer stops first; an
// error wrapping ctx's error when ctx ends first; and an error for a nil
// informer or one not built by this package. It may be called before the
// informer runs and from any goroutine; it must not be called from one of
// the informer's event handlers when waiting for an event that handler has
// not yet returned from (the cache is updated before handlers run, so that
// case cannot deadlock, but it is pointless).
func WaitForResourceVersion(ctx context.Context, informer SharedInformer, resourceVersion string) error {
	if informer == nil {
		return errors.New("cannot wait for a resourceVersion on a nil informer")
	}
	if s := sharedOf(informer); s != nil {
		return s.WaitForResourceVersion(ctx, resourceVersion)
	}
	if w, ok := informer.(ResourceVersionWaiter); ok {
		return w.WaitForResourceVersion(ctx, resourceVersion)
	}
	return fmt.Errorf("informer of type %T cannot wait for resourceVersions: it is not built by kinformer's cache package", informer)
}

// storeResourceVersion returns the newest resource version store has
// recorded, whatever the AtomicFIFO feature gate says.
func storeResourceVersion(store Store) string {
	if c, ok := store.(ownStore); ok {
		return c.resourceVersion()
	}
	return store.LastStoreSyncResourceVersion()
}

// watermark returns the resourceVersion of the informer's cache: every
// change at or below it has been applied.
func (s *sharedIndexInformer) watermark() string {
	return storeResourceVersion(s.indexer)
}
