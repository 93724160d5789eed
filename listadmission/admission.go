package listadmission

import (
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// DefaultLimit is the number of lists an Admission built with a zero
// Options.MaxConcurrent lets run at once.
//
// Why 10: a controller with a handful of informers (most have fewer than ten)
// never waits, so it starts exactly as it does with client-go; ten is
// rest.Config's default Burst, so a client on client-go's default rate
// limiter (QPS 5, Burst 10) could not send more requests at once anyway; and
// a process with more informers than that (one with dozens of CRDs, or a
// fleet of controllers sharing one Admission) no longer opens all its
// lists at the same moment, which is what makes kube-apiserver's API
// Priority and Fairness answer 429 and its memory peak (every list being
// encoded at once).
const DefaultLimit = 10

// DefaultRetryAfter is how long an Admission pauses after a 429 that names
// no Retry-After, when Options.DefaultRetryAfter is zero: one second, what
// kube-apiserver sends.
const DefaultRetryAfter = time.Second

// DefaultJitter is Options.Jitter's default: a pause of d lasts between d
// and 1.5d.
const DefaultJitter = 0.5

// DefaultMaxRetryAfter is the longest Retry-After kinformer honours by
// default: an Admission's pause (Options.MaxRetryAfter) and a Reflector's
// wait before it retries (cache.ReflectorOptions.MaxRetryAfter,
// cache.SharedIndexInformerOptions.MaxRetryAfter) read a longer one as
// this. A server asks for a few seconds (kube-apiserver's API Priority and
// Fairness sends 1 to 10); a Retry-After of hours or a year comes from a
// misbehaving aggregated API server or proxy, and honouring it would freeze
// the caches that long while they still report synced.
//
// What kinformer does not cap: client-go's REST client itself sleeps the
// full Retry-After of a 429 (or of a 5xx that sends one) before each of
// its own retries, up to 10 of them, before the Reflector sees the error;
// kinformer does not change the REST client. A transport wrapped with
// Admission.WrapTransport lets the group slow down at the first 429, but
// the request that got it still waits in the REST client.
const DefaultMaxRetryAfter = 60 * time.Second

// Options configures New. The zero value is the default of the factories.
type Options struct {
	// MaxConcurrent is how many lists may run at once; zero means
	// DefaultLimit, a negative value no limit (only the pauses after a 429
	// then hold lists back).
	MaxConcurrent int

	// Jitter spreads the end of a pause: after a 429 asking to retry after
	// d, lists wait d plus a random share of Jitter*d, so that a group of
	// processes throttled together does not come back together. Zero means
	// DefaultJitter, negative no jitter.
	Jitter float64

	// DefaultRetryAfter is the pause after a 429 that names no Retry-After;
	// zero (or less) means the package's DefaultRetryAfter.
	DefaultRetryAfter time.Duration

	// MaxRetryAfter is the longest Retry-After a pause honours: a longer
	// one pauses the group for MaxRetryAfter (plus the jitter), and is
	// counted (Stats.RetryAfterCapped). Zero means DefaultMaxRetryAfter,
	// negative no maximum. A DefaultRetryAfter above it is capped too.
	MaxRetryAfter time.Duration

	// Clock measures the pauses; nil means the real clock.
	Clock clock.Clock

	// Rand draws the jitter; nil means a generator seeded at random. It is
	// used under the Admission's lock only, so it need not be safe for
	// concurrent use (tests pass a seeded one).
	Rand *rand.Rand
}

// Admission limits how many initial lists and relists (LIST requests with
// all their pages, and streaming lists until their end bookmark) the
// informers that share it run at once, and slows them all down when the
// server answers 429. kinformer extension, not in client-go.
//
// An informer asks for a slot (Acquire) before each LIST or streaming-list
// request and holds it until the list is complete (its last page arrived,
// or the bookmark that ends a streaming list's initial events) or failed;
// watches need no slot. Informers that wait are admitted by priority (the
// highest first; see cache.SharedIndexInformerOptions.ListAdmissionPriority),
// and in the order they asked among equal priorities. An informer that is
// stopped while it waits leaves the line, and one stopped while it lists
// gives its slot back.
//
// When an informer's LIST or streaming list is answered 429 Too Many
// Requests (a wrapped transport reports it at once, see WrapTransport; the
// informer itself once its REST client gave up retrying), the whole group
// slows down: the number of lists admitted at once is halved, and once it
// is down to one, a 429 also pauses the group: no list is admitted until
// the Retry-After the server sent (Options.DefaultRetryAfter when it sent
// none; at most Options.MaxRetryAfter, DefaultMaxRetryAfter by default)
// plus a random jitter has passed. Only the 429s answering the informers'
// own lists count (see WrapTransport); the pause shows in Stats and in each
// informer's cache.InformerStatus.ListsPausedUntil. Every list that
// completes without error raises the number by one, up to MaxConcurrent
// again. Lists running when the 429 arrives go on (their REST client waits
// the Retry-After before it retries them), and the 429s that answer them
// later do not slow the group again: it already slowed down for them (see
// Throttled).
//
// Why halve first and pause last: after a server restart every informer
// relists at once, and a server that rejects some of them can still serve
// the rest. Pausing the whole group at every 429 leaves it idle, then
// releases the waiting lists together at the pause's end, which is the
// burst that draws the next 429 (make bench-storm measured 45 s to relist
// 50 informers that way, against 8.5 s when the limit alone adapts).
//
// What listers and handlers observe does not change: only when lists are
// requested does. The Reflector's list duration (its metrics and logs)
// includes the wait for a slot. The factories (packages informers,
// dynamicinformer and metadatainformer) give each factory its own
// Admission by default; to cover a whole process, build one and pass it to
// every factory (informers.WithListAdmission, ...) and informer
// (cache.SharedIndexInformerOptions.ListAdmission). A nil *Admission admits
// everything at once, as client-go does; the zero Admission is not ready
// for use (build one with New).
//
// All methods are safe for concurrent use; an Admission starts no
// goroutine.
type Admission struct {
	clock             clock.Clock
	limit             int // < 0: none
	jitter            float64
	defaultRetryAfter time.Duration
	maxRetryAfter     time.Duration // < 0: none

	mu   sync.Mutex
	rand *rand.Rand
	// current is the number of lists admitted at once now: limit, or
	// less after a 429.
	current  int
	inFlight int
	waiters  waitQueue
	seq      uint64
	// pausedUntil is when the pause after the last 429 ends; changed is
	// closed (and replaced) whenever it moves, to wake the waiters so that
	// they wait for the new end.
	pausedUntil time.Time
	changed     chan struct{}
	// pauseRetryAfter is the Retry-After of the 429 that set pausedUntil.
	pauseRetryAfter time.Duration
	// epoch counts the times the group slowed down (halved and paused);
	// each slot records the epoch it was handed out in.
	epoch uint64

	peak      int
	admitted  uint64
	throttled uint64
	capped    uint64
}

// New returns an Admission configured by options (see Options for what
// its zero fields mean).
func New(options Options) *Admission {
	limit := options.MaxConcurrent
	if limit == 0 {
		limit = DefaultLimit
	}
	jitter := options.Jitter
	switch {
	case jitter == 0:
		jitter = DefaultJitter
	case jitter < 0:
		jitter = 0
	}
	retryAfter := options.DefaultRetryAfter
	if retryAfter <= 0 {
		retryAfter = DefaultRetryAfter
	}
	maxRetryAfter := options.MaxRetryAfter
	if maxRetryAfter == 0 {
		maxRetryAfter = DefaultMaxRetryAfter
	}
	r := options.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	clk := options.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Admission{
		clock:             clk,
		limit:             limit,
		jitter:            jitter,
		defaultRetryAfter: retryAfter,
		maxRetryAfter:     maxRetryAfter,
		rand:              r,
		current:           limit,
		changed:           make(chan struct{}),
	}
}

// Stats is what an Admission has done so far.
type Stats struct {
	// Limit is Options.MaxConcurrent (negative: none); CurrentLimit is how
	// many lists are admitted at once now (lower than Limit after a 429).
	Limit, CurrentLimit int
	// InFlight lists hold a slot; Waiting informers wait for one.
	InFlight, Waiting int
	// PeakInFlight is the most lists that ever held a slot at once.
	PeakInFlight int
	// Admitted counts the slots handed out; Throttled the 429s reported.
	Admitted, Throttled uint64
	// PausedUntil is when the pause after the last 429 ends (zero before
	// any); the group is paused while it is in the future. PauseRetryAfter
	// is the Retry-After that pause honours, after the cap.
	PausedUntil     time.Time
	PauseRetryAfter time.Duration
	// RetryAfterCapped counts the 429s whose Retry-After was longer than
	// Options.MaxRetryAfter, and was read as that maximum.
	RetryAfterCapped uint64
}

// Stats returns what a has done so far; a nil a returns zeros.
func (a *Admission) Stats() Stats {
	if a == nil {
		return Stats{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return Stats{
		Limit:        a.limit,
		CurrentLimit: a.current,
		InFlight:     a.inFlight,
		Waiting:      len(a.waiters),
		PeakInFlight: a.peak,
		Admitted:     a.admitted,
		Throttled:    a.throttled,
		PausedUntil:  a.pausedUntil,

		PauseRetryAfter:  a.pauseRetryAfter,
		RetryAfterCapped: a.capped,
	}
}

// Throttled tells a that the server answered 429 to a list, asking to retry
// after retryAfter (zero or less: it did not say; Options.DefaultRetryAfter
// applies). The number of lists admitted at once is halved; when it is one
// already (or a has no limit), no list is admitted until retryAfter plus
// the jitter has passed. A 429 that arrives during such a pause and asks
// for no longer a wait than the one that started it answers the same burst:
// it changes nothing; one asking for a longer wait extends the pause. A
// retryAfter longer than Options.MaxRetryAfter is read as that maximum.
//
// The informers sharing a report the 429s of their own lists with more
// precision than Throttled can (ThrottledBy, with the slot of the list the
// 429 answers): a 429 answering a list admitted before the group last
// slowed down is an answer to the burst it slowed down for (the REST client
// retries such a list by itself, and its retries may be answered after the
// group slowed down), so it changes nothing unless it asks for a longer
// wait than a pause in progress. Only a 429 answering a list admitted since
// slows the group again. Throttled itself, which cannot tell, reads a 429
// during a pause as the former and any other as the latter.
//
// Informers call ThrottledBy themselves for the 429s they see;
// WrapTransport reports those the REST client retries by itself. Safe on a
// nil a (no-op).
func (a *Admission) Throttled(retryAfter time.Duration) {
	a.throttle(retryAfter, nil)
}

// ThrottledBy reports err to a when it is a 429 Too Many Requests (wrapped
// or not), with the Retry-After it carries, as Throttled does; any other
// error, and nil, change nothing. slot is the slot of the list err answers,
// which tells a whether the 429 answers a list admitted before the group
// last slowed down (see Throttled); nil when not known. Safe on a nil a
// (no-op).
func (a *Admission) ThrottledBy(err error, slot *Slot) {
	if a == nil || !apierrors.IsTooManyRequests(err) {
		return
	}
	var d time.Duration
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		d = time.Duration(seconds) * time.Second
	}
	a.throttle(d, slot)
}

// throttle is Throttled for a 429 answering the list that holds slot (nil
// when not known).
func (a *Admission) throttle(retryAfter time.Duration, slot *Slot) {
	if a == nil {
		return
	}
	if retryAfter <= 0 {
		retryAfter = a.defaultRetryAfter
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.throttled++
	if a.maxRetryAfter > 0 && retryAfter > a.maxRetryAfter {
		retryAfter = a.maxRetryAfter
		a.capped++
	}
	now := a.clock.Now()
	paused := now.Before(a.pausedUntil)
	stale := slot != nil && slot.epoch < a.epoch
	if slot == nil && paused {
		// Not attributed: read it as an answer to the burst being paused.
		stale = true
	}
	if stale {
		// An answer to the burst the group already slowed down for: only
		// a longer wait than the pause's moves its end.
		if paused && retryAfter > a.pauseRetryAfter {
			a.pauseRetryAfter = retryAfter
			a.pauseLocked(now, retryAfter)
		}
		return
	}
	a.epoch++
	if a.current > 1 {
		a.current /= 2
		return
	}
	// Down to one list at a time (or no limit): only waiting helps.
	a.pauseRetryAfter = retryAfter
	a.pauseLocked(now, retryAfter)
}

// pauseLocked makes the pause last until retryAfter plus the jitter from
// now, unless it already lasts longer, and wakes the waiters when its end
// moves.
func (a *Admission) pauseLocked(now time.Time, retryAfter time.Duration) {
	until := now.Add(retryAfter)
	if a.jitter > 0 {
		until = until.Add(time.Duration(a.jitter * a.rand.Float64() * float64(retryAfter)))
	}
	if until.After(a.pausedUntil) {
		a.pausedUntil = until
		close(a.changed)
		a.changed = make(chan struct{})
	}
}
