// Package diag is the engine of an informer's diagnostics: the counters
// behind its status and metrics (stats.go), how current its cache is
// (freshness.go), the callers waiting for its cache to reach a
// resourceVersion (rv_waiters.go), and the fail-fast wait for informers to
// sync (sync_wait.go).
//
// It knows no informer, Reflector or store: the cache's watermark reaches it
// as a function returning a resourceVersion, an informer's sync as a
// channel, and a list or watch failure as an error. Package cache declares
// the public types (InformerStatus, RelistReason, InformerSyncError,
// ErrInformerStopped, ...) and fills them from here. This package imports no
// other package of kinformer.
//
// # Contract
//
// Stats are written by the Reflector (lists, watches, events, errors,
// Retry-After waits, confirmations) and by the informer (deltas applied,
// snapshots skipped, transform refusals, start), and read at any time by
// whoever builds a status. Freshness counts a confirmation of the server
// (a resourceVersion it said was current at a time) once the cache's
// watermark reached it. ResourceVersionWaiters release a waiter once the
// watermark is at or past its version, or with an error once they are
// stopped or the versions cannot be compared.
//
// # Invariants
//
//   - Recording never blocks on a reader and allocates nothing per event:
//     counters and times are atomics; only errors and confirmations, which
//     are rare, take a mutex.
//   - A confirmation counts only once the watermark has reached its
//     resourceVersion, and with the time its answer arrived, so the
//     confirmed time never claims a state the cache does not hold yet. At
//     most 16 confirmations wait; the oldest is dropped beyond that (the
//     staleness reported then errs on the high side).
//   - Resource versions are compared as integers (KEP 4988); ones that are
//     not integers confirm only when equal, and a wait on them fails with
//     an error instead of blocking.
//   - A waiter registers before it reads the watermark, and Notify reads
//     the watermark after the move, so no move between the two is missed.
//     Every waiter receives exactly one result; after Stop, every wait
//     fails at once with the cause given.
//   - Notify and WatermarkMoved cost one atomic load while nobody waits.
//   - The fail-fast sync wait starts no goroutine and does not poll: it
//     takes a waitee's error signal before reading its error, so an error
//     recorded in between still wakes it.
package diag
