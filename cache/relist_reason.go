package cache

import "github.com/kinformer/kinformer/cache/internal/diag"

// RelistReason says why a Reflector made a list (a paged LIST or a streaming
// list). The values are stable: they are used as metric label values.
type RelistReason string

// The reasons a Reflector lists.
const (
	// RelistInitial is the first list of a Reflector.
	RelistInitial RelistReason = "initial"
	// RelistExpired follows a watch (or streaming list) that ended because
	// the resource version it resumed from is gone: 410 Gone / Expired,
	// typically after an etcd compaction, or one the server has not seen
	// yet.
	RelistExpired RelistReason = "expired"
	// RelistWatchError follows a watch that ended with an error other than
	// 410, or that could not be opened for a reason the Reflector does not
	// retry by itself (403, 404, ...).
	RelistWatchError RelistReason = "watch_error"
	// RelistShortWatch follows a watch that closed within a second without
	// an event (VeryShortWatchError).
	RelistShortWatch RelistReason = "short_watch"
	// RelistListError retries a list that failed (or a streaming list that
	// failed with a refused connection, 429 or an expired resource version,
	// or that the server closed before its end bookmark).
	RelistListError RelistReason = "list_error"
	// RelistStreamFallback is the LIST made after a streaming list that
	// failed or did not complete (see Reflector): it counts the fallbacks
	// from streaming lists to LIST, one per cycle that fell back.
	RelistStreamFallback RelistReason = "stream_fallback"
)

// relistReasons lists every RelistReason at the index of the diag list
// reason it stands for.
var relistReasons = [...]RelistReason{RelistInitial, RelistExpired, RelistWatchError, RelistShortWatch, RelistListError, RelistStreamFallback}

// RelistReasons returns every RelistReason a Reflector reports, in a fixed
// order. The slice is new on every call.
func RelistReasons() []RelistReason {
	return append([]RelistReason(nil), relistReasons[:]...)
}

// The list reasons the Reflector's core notes (reflector_step.go), by their
// index in relistReasons, which is their diag.ListReason.
const (
	relistIdxExpired        = uint32(diag.ReasonExpired)
	relistIdxWatchError     = uint32(diag.ReasonWatchError)
	relistIdxStreamFallback = uint32(diag.ReasonStreamFallback)
)

// relistReasons has one entry per diag list reason: either declaration
// has a negative length, and does not compile, when the counts differ.
var (
	_ [diag.ListReasons - len(relistReasons)]struct{}
	_ [len(relistReasons) - diag.ListReasons]struct{}
)

// relistReasonAfterWatch is the reason of the list that follows a watch
// that ended with err.
func relistReasonAfterWatch(err error) diag.ListReason {
	switch _, short := err.(*VeryShortWatchError); {
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		return diag.ReasonExpired
	case short:
		return diag.ReasonShortWatch
	default:
		return diag.ReasonWatchError
	}
}
