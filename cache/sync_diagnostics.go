package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/diag"
)

// SyncOptions configures WaitForCacheSyncWithOptions (and a factory's
// WaitForCacheSyncWithContext, see informers.WithSyncOptions). The zero value
// waits until every informer synced or the context is done.
type SyncOptions struct {
	// FailFast stops waiting as soon as an informer that has not synced
	// failed with an error retrying will not cure (see
	// IsPermanentSyncError): the informer keeps retrying in the
	// background, but the caller learns at once that its credentials,
	// RBAC rules or resource names are wrong instead of at its deadline.
	// Errors that may pass (429, 5xx, timeouts, refused connections) never
	// end the wait early.
	FailFast bool
}

// ErrPermanentSyncFailure is part of SyncResult.Err when SyncOptions.FailFast
// ended the wait before the context did.
var ErrPermanentSyncFailure = errors.New("stopped waiting for caches to sync: an informer failed with an error that retrying does not cure")

// IsPermanentSyncError reports whether err, a list or watch failure, is one
// that retrying the same request will not cure, so that waiting for the
// informer to sync is pointless: 400 Bad Request (for example an unsupported
// field selector), 401 Unauthorized, 403 Forbidden, 404 Not Found (the
// server does not serve the resource: a wrong group/version/resource, or a
// CustomResourceDefinition that is not installed or not yet established),
// 405 Method Not Allowed, 406 Not Acceptable, 415 Unsupported Media Type and
// 422 Invalid, and an invalid Shard option (ErrInvalidShard). Everything else is taken as transient: 429, 5xx, timeouts, a
// refused or reset connection, 410 Gone (handled by a relist).
//
// 401, 403 and 404 can be cured by someone else (rotated credentials, an
// RBAC rule or a CRD created later); a caller that expects that should not
// fail fast.
func IsPermanentSyncError(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case apierrors.IsBadRequest(err), apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsInvalid(err), isInvalidShard(err):
		return true
	}
	return false
}

// InformerSyncError is one informer's part of SyncResult.Err: the informer
// did not sync, and Err is the last failure of its Reflector since its last
// successful list (nil when there was none: the informer was still listing
// or processing, or was never started). errors.Is and errors.As, and so
// apierrors.IsForbidden and friends, see through it to Err.
type InformerSyncError struct {
	// Type is the Go type of the informer's objects, e.g. "*v1.Pod".
	Type string
	// Resource describes the informer's resource: the group/version/resource
	// when known, as kubectl writes it ("pods.v1", "deployments.v1.apps"),
	// else the informer's object description, else Type.
	Resource string
	// Err is the Reflector's last failure, or nil.
	Err error
}

// Error names the informer and says why it did not sync.
func (e *InformerSyncError) Error() string {
	what := e.Type
	if e.Resource != "" && e.Resource != e.Type {
		what = fmt.Sprintf("%s (%s)", e.Type, e.Resource)
	}
	if e.Err == nil {
		return fmt.Sprintf("informer for %s has not synced (no list or watch error reported)", what)
	}
	return fmt.Sprintf("informer for %s has not synced: %v", what, e.Err)
}

// Unwrap returns the Reflector's last failure.
func (e *InformerSyncError) Unwrap() error { return e.Err }

// WaitForCacheSyncWithContext waits until every informer has synced or ctx
// is done, and says per informer that did not sync why (see
// WaitForCacheSyncWithOptions). It is the factories' WaitForCacheSyncWithContext
// for informers built by hand. kinformer extension, not in client-go.
func WaitForCacheSyncWithContext(ctx context.Context, informers ...SharedInformer) SyncResult {
	return WaitForCacheSyncWithOptions(ctx, SyncOptions{}, informers...)
}

// WaitForCacheSyncWithOptions waits until every informer has synced, ctx is
// done or, with options.FailFast, an unsynced informer failed with an error
// retrying will not cure. It starts no goroutine and does not poll.
//
// The result's Synced is keyed by the Go type of each informer's objects
// (informers of the same type, such as dynamic ones, share an entry that is
// true only when all of them synced). When an informer did not sync, Err is
// an errors.Join of context.Cause(ctx) (or ErrPermanentSyncFailure when
// FailFast ended the wait) and one *InformerSyncError per unsynced informer
// carrying its Reflector's last error, so that errors.Is(res.Err,
// context.DeadlineExceeded) and apierrors.IsForbidden(res.Err) both work.
// Nil informers are ignored. kinformer extension, not in client-go.
func WaitForCacheSyncWithOptions(ctx context.Context, options SyncOptions, informers ...SharedInformer) SyncResult {
	live := make([]SharedInformer, 0, len(informers))
	for _, informer := range informers {
		if informer != nil && !isNilInformer(informer) {
			live = append(live, informer)
		}
	}
	failedFast := waitForSync(ctx, options, live)
	res := SyncResult{Synced: make(map[reflect.Type]bool, len(live))}
	var parts []error
	for _, informer := range live {
		t := informerObjectType(informer)
		synced := informer.HasSynced()
		if prev, seen := res.Synced[t]; !seen || prev {
			res.Synced[t] = synced
		}
		if !synced {
			parts = append(parts, newInformerSyncError(informer))
		}
	}
	if len(parts) == 0 {
		return res
	}
	cause := context.Cause(ctx)
	if failedFast || cause == nil {
		cause = ErrPermanentSyncFailure
	}
	res.Err = errors.Join(append([]error{cause}, parts...)...)
	return res
}

// isNilInformer reports a typed nil pointer in an interface.
func isNilInformer(informer SharedInformer) bool {
	v := reflect.ValueOf(informer)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// waitForSync waits for the informers; it reports true when FailFast ended
// the wait.
func waitForSync(ctx context.Context, options SyncOptions, informers []SharedInformer) bool {
	checkers := make([]DoneChecker, len(informers))
	for i, informer := range informers {
		checkers[i] = informer.HasSyncedChecker()
	}
	if !options.FailFast {
		WaitFor(ctx, "", checkers...)
		return false
	}
	// Wake on ctx, on each informer's sync and, for each of ours, on its
	// next error; look for a permanent error at every wake-up.
	waitees := make([]diag.SyncWaitee, len(informers))
	for i, informer := range informers {
		waitees[i].Synced = checkers[i]
		if s := sharedOf(informer); s != nil {
			waitees[i].Stats = s.stats
		}
	}
	return diag.WaitFailFast(ctx, waitees, IsPermanentSyncError)
}

// informerObjectType returns the Go type of the informer's objects (nil for
// an informer of another package).
func informerObjectType(informer SharedInformer) reflect.Type {
	if s := sharedOf(informer); s != nil {
		return reflect.TypeOf(s.objectType)
	}
	return reflect.TypeOf(informer)
}

// newInformerSyncError describes why informer has not synced.
func newInformerSyncError(informer SharedInformer) *InformerSyncError {
	s := sharedOf(informer)
	if s == nil {
		t := fmt.Sprintf("%T", informer)
		return &InformerSyncError{Type: t, Resource: t}
	}
	e := &InformerSyncError{Type: fmt.Sprintf("%T", s.objectType), Err: s.stats.CurrentError()}
	switch gvr := s.config.Identifier.GroupVersionResource(); {
	case !gvr.Empty():
		e.Resource = resourceString(gvr)
	case s.config.ObjectDescription != "":
		e.Resource = s.config.ObjectDescription
	default:
		e.Resource = e.Type
	}
	return e
}

// resourceString writes gvr as kubectl does: resource.version.group, without
// the trailing dot of the core group.
func resourceString(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "." + gvr.Version
	}
	return gvr.Resource + "." + gvr.Version + "." + gvr.Group
}
