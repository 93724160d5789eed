package cache

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// DefaultListAdmissionLimit is the number of lists a ListAdmission built with
// a zero MaxConcurrent lets run at once.
//
// Why 10: a controller with a handful of informers (most have fewer than ten)
// never waits, so it starts exactly as it does with client-go; ten is
// rest.Config's default Burst, so a client on client-go's default rate
// limiter (QPS 5, Burst 10) could not send more requests at once anyway; and
// a process with more informers than that (one with dozens of CRDs, or a
// fleet of controllers sharing one ListAdmission) no longer opens all its
// lists at the same moment, which is what makes kube-apiserver's API
// Priority and Fairness answer 429 and its memory peak (every list being
// encoded at once).
const DefaultListAdmissionLimit = 10

// DefaultListAdmissionRetryAfter is how long a ListAdmission pauses after a
// 429 that names no Retry-After, when ListAdmissionOptions.DefaultRetryAfter
// is zero: one second, what kube-apiserver sends.
const DefaultListAdmissionRetryAfter = time.Second

// DefaultListAdmissionJitter is ListAdmissionOptions.Jitter's default: a pause
// of d lasts between d and 1.5d.
const DefaultListAdmissionJitter = 0.5

// DefaultMaxRetryAfter is the longest Retry-After kinformer honours by
// default: a ListAdmission's pause (ListAdmissionOptions.MaxRetryAfter) and
// a Reflector's wait before it retries (ReflectorOptions.MaxRetryAfter,
// SharedIndexInformerOptions.MaxRetryAfter) read a longer one as this. A
// server asks for a few seconds (kube-apiserver's API Priority and Fairness
// sends 1 to 10); a Retry-After of hours or a year comes from a
// misbehaving aggregated API server or proxy, and honouring it would freeze
// the caches that long while they still report synced.
//
// What kinformer does not cap: client-go's REST client itself sleeps the
// full Retry-After of a 429 (or of a 5xx that sends one) before each of
// its own retries, up to 10 of them, before the Reflector sees the error;
// kinformer does not change the REST client. A transport wrapped with
// ListAdmission.WrapTransport lets the group slow down at the first 429,
// but the request that got it still waits in the REST client.
const DefaultMaxRetryAfter = 60 * time.Second

// ListAdmissionOptions configures NewListAdmission. The zero value is the
// default of the factories.
type ListAdmissionOptions struct {
	// MaxConcurrent is how many lists may run at once; zero means
	// DefaultListAdmissionLimit, a negative value no limit (only the
	// pauses after a 429 then hold lists back).
	MaxConcurrent int

	// Jitter spreads the end of a pause: after a 429 asking to retry after
	// d, lists wait d plus a random share of Jitter*d, so that a group of
	// processes throttled together does not come back together. Zero means
	// DefaultListAdmissionJitter, negative no jitter.
	Jitter float64

	// DefaultRetryAfter is the pause after a 429 that names no Retry-After;
	// zero means DefaultListAdmissionRetryAfter.
	DefaultRetryAfter time.Duration

	// MaxRetryAfter is the longest Retry-After a pause honours: a longer
	// one pauses the group for MaxRetryAfter (plus the jitter), and is
	// counted (ListAdmissionStats.RetryAfterCapped). Zero means
	// DefaultMaxRetryAfter, negative no maximum. A DefaultRetryAfter above
	// it is capped too.
	MaxRetryAfter time.Duration

	// Clock measures the pauses; nil means the real clock.
	Clock clock.Clock

	// Rand draws the jitter; nil means a generator seeded at random. It is
	// used under the ListAdmission's lock only, so it need not be safe for
	// concurrent use (tests pass a seeded one).
	Rand *rand.Rand
}

// ListAdmission limits how many initial lists and relists (LIST requests with
// all their pages, and streaming lists until their end bookmark) the
// informers that share it run at once, and slows them all down when the
// server answers 429. kinformer extension, not in client-go.
//
// An informer asks for a slot before each LIST or streaming-list request and
// holds it until the list is complete (its last page arrived, or the
// bookmark that ends a streaming list's initial events) or failed; watches
// need no slot. Informers that wait are admitted by priority (the highest
// first; see SharedIndexInformerOptions.ListAdmissionPriority), and in the
// order they asked among equal priorities. An informer that is stopped while
// it waits leaves the line, and one stopped while it lists gives its slot
// back.
//
// When an informer's LIST or streaming list is answered 429 Too Many
// Requests (a wrapped transport reports it at once, see WrapTransport; the
// informer itself once its REST client gave up retrying), the whole group
// slows down: the number of lists admitted at once is halved, and once it
// is down to one, a 429 also pauses the group: no list is admitted until
// the Retry-After the server sent (DefaultRetryAfter when it sent none; at
// most MaxRetryAfter, DefaultMaxRetryAfter by default) plus a random jitter
// has passed. Only the 429s answering the informers' own lists count (see
// WrapTransport); the pause shows in Stats and in each informer's
// InformerStatus.ListsPausedUntil. Every list that completes without error
// raises the number by one, up to MaxConcurrent again. Lists running when
// the 429 arrives go on (their REST client waits the Retry-After before it
// retries them), and the 429s that answer them later do not slow the group
// again: it already slowed down for them (see Throttled).
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
// includes the wait for a slot. The factories (packages informers, dynamicinformer and
// metadatainformer) give each factory its own ListAdmission by default; to
// cover a whole process, build one and pass it to every factory
// (informers.WithListAdmission, ...) and informer
// (SharedIndexInformerOptions.ListAdmission). A nil *ListAdmission admits
// everything at once, as client-go does.
//
// All methods are safe for concurrent use; a ListAdmission starts no
// goroutine.
type ListAdmission struct {
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
	waiters  admissionQueue
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

// NewListAdmission returns a ListAdmission configured by options.
func NewListAdmission(options ListAdmissionOptions) *ListAdmission {
	limit := options.MaxConcurrent
	if limit == 0 {
		limit = DefaultListAdmissionLimit
	}
	jitter := options.Jitter
	switch {
	case jitter == 0:
		jitter = DefaultListAdmissionJitter
	case jitter < 0:
		jitter = 0
	}
	retryAfter := options.DefaultRetryAfter
	if retryAfter <= 0 {
		retryAfter = DefaultListAdmissionRetryAfter
	}
	maxRetryAfter := options.MaxRetryAfter
	if maxRetryAfter == 0 {
		maxRetryAfter = DefaultMaxRetryAfter
	}
	r := options.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &ListAdmission{
		clock:             clockOrReal(options.Clock),
		limit:             limit,
		jitter:            jitter,
		defaultRetryAfter: retryAfter,
		maxRetryAfter:     maxRetryAfter,
		rand:              r,
		current:           limit,
		changed:           make(chan struct{}),
	}
}

// ListAdmissionStats is what a ListAdmission has done so far.
type ListAdmissionStats struct {
	// Limit is ListAdmissionOptions.MaxConcurrent (negative: none);
	// CurrentLimit is how many lists are admitted at once now (lower than
	// Limit after a 429).
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
	// ListAdmissionOptions.MaxRetryAfter, and was read as that maximum.
	RetryAfterCapped uint64
}

// Stats returns what a has done so far; a nil a returns zeros.
func (a *ListAdmission) Stats() ListAdmissionStats {
	if a == nil {
		return ListAdmissionStats{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return ListAdmissionStats{
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
// after retryAfter (zero or less: it did not say; DefaultRetryAfter
// applies). The number of lists admitted at once is halved; when it is one
// already (or a has no limit), no list is admitted until retryAfter plus
// the jitter has passed. A 429 that arrives during such a pause and asks
// for no longer a wait than the one that started it answers the same burst:
// it changes nothing; one asking for a longer wait extends the pause. A
// retryAfter longer than ListAdmissionOptions.MaxRetryAfter is read as
// that maximum.
//
// The informers sharing a report the 429s of their own lists with more
// precision than Throttled can: a 429 answering a list admitted before the
// group last slowed down is an answer to the burst it slowed down for (the
// REST client retries such a list by itself, and its retries may be
// answered after the group slowed down), so it changes nothing unless it
// asks for a longer wait than a pause in progress. Only a 429 answering a
// list admitted since slows the group again. Throttled itself, which cannot
// tell, reads a 429 during a pause as the former and any other as the
// latter.
//
// Informers call it themselves for the 429s they see; WrapTransport calls it
// for those the REST client retries by itself. Safe on a nil a (no-op).
func (a *ListAdmission) Throttled(retryAfter time.Duration) {
	a.throttle(retryAfter, nil)
}

// throttle is Throttled for a 429 answering the list that holds slot (nil
// when not known).
func (a *ListAdmission) throttle(retryAfter time.Duration, slot *admissionSlot) {
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
func (a *ListAdmission) pauseLocked(now time.Time, retryAfter time.Duration) {
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

// throttledBy calls throttle for err when it is a 429, with the
// Retry-After it carries; slot is the slot of the list err answers (nil
// when not known).
func (a *ListAdmission) throttledBy(err error, slot *admissionSlot) {
	if a == nil || !apierrors.IsTooManyRequests(err) {
		return
	}
	var d time.Duration
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		d = time.Duration(seconds) * time.Second
	}
	a.throttle(d, slot)
}

// admissionSlotKey is the context key under which a Reflector's list
// requests carry their slot, so that WrapTransport can tell which list a 429
// answers.
type admissionSlotKey struct{}

// withAdmissionSlot returns ctx carrying slot (ctx itself when slot is nil).
func withAdmissionSlot(ctx context.Context, slot *admissionSlot) context.Context {
	if slot == nil {
		return ctx
	}
	return context.WithValue(ctx, admissionSlotKey{}, slot)
}

// admissionSlotFrom returns the slot ctx carries for a, or nil.
func admissionSlotFrom(ctx context.Context, a *ListAdmission) *admissionSlot {
	slot, _ := ctx.Value(admissionSlotKey{}).(*admissionSlot)
	if slot == nil || slot.a != a {
		return nil
	}
	return slot
}

// WrapTransport returns a RoundTripper that passes requests to rt and
// reports to a every 429 answering one of its informers' own collection
// reads: a LIST or streaming list whose request context carries a slot of a
// (the Reflectors of the informers sharing a put it there), with the
// Retry-After header it carries (capped at
// ListAdmissionOptions.MaxRetryAfter; see ParseRetryAfter). Every other 429
// goes through unseen: those answering a GET of one object, a list the
// application makes with the same client, another admission's lists,
// writes and plain watches. client-go's REST client retries a 429 by itself
// (up to ten times, sleeping its whole Retry-After before each) before an
// informer sees it, so wrapping the transport of the informers' client
// (rest.Config.Wrap(admission.WrapTransport)) lets the whole group slow down
// at the first one. A nil a returns rt. kinformer extension.
//
// Difference from earlier kinformer versions: any 429 to a GET that was no
// watch used to pause the group, so that one GET of an aggregated API
// answered with a Retry-After of a year stopped every informer's relists.
func (a *ListAdmission) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if a == nil {
		return rt
	}
	return &admissionTransport{a: a, next: rt}
}

type admissionTransport struct {
	a    *ListAdmission
	next http.RoundTripper
}

func (t *admissionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || !isListRequest(req) {
		return resp, err
	}
	// Only the lists of a's own informers carry one of its slots.
	if slot := admissionSlotFrom(req.Context(), t.a); slot != nil {
		d, _ := ParseRetryAfter(resp.Header.Get("Retry-After"))
		t.a.throttle(d, slot)
	}
	return resp, err
}

// ParseRetryAfter parses the value of a Retry-After header as kinformer
// honours it: a whole number of seconds above zero, in decimal, as
// client-go's REST client reads it (strconv.Atoi: a leading sign is
// allowed, spaces are not). Anything else (empty, an HTTP date, a
// fraction, zero or less, more seconds than a time.Duration holds) returns
// 0 and false; the caller then applies its default. The result is not
// capped: callers cap it at their MaxRetryAfter. kinformer extension.
func ParseRetryAfter(value string) (time.Duration, bool) {
	seconds, err := strconv.ParseInt(value, 10, 64)
	if err != nil || seconds <= 0 || seconds > int64(math.MaxInt64/time.Second) {
		return 0, false
	}
	return time.Duration(seconds) * time.Second, true
}

// isListRequest reports whether req reads a collection: a GET that is no
// watch, or a streaming list (a watch sending initial events).
func isListRequest(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	q := req.URL.Query()
	if w := q.Get("watch"); w != "true" && w != "1" {
		return true
	}
	return q.Get("sendInitialEvents") == "true"
}

// admissionSlot is a list's permission to run; release gives it back.
type admissionSlot struct {
	a *ListAdmission
	// epoch is the admission's epoch when the slot was handed out.
	epoch uint64
	done  bool
}

// release gives the slot back; ok says the list completed, which raises the
// number of lists admitted at once after a 429. Later calls do nothing.
func (s *admissionSlot) release(ok bool) {
	if s == nil || s.done {
		return
	}
	s.done = true
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
	if ok && a.limit > 0 && a.current < a.limit {
		a.current++
	}
	a.grantLocked(a.clock.Now())
}

// admissionWaiter is an informer waiting for a slot.
type admissionWaiter struct {
	priority int
	seq      uint64
	index    int
	granted  bool
	epoch    uint64 // the admission's epoch when granted
	ready    chan struct{}
}

// admissionQueue is a heap of waiters: the highest priority first, then the
// earliest.
type admissionQueue []*admissionWaiter

func (q admissionQueue) Len() int { return len(q) }
func (q admissionQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
	}
	return q[i].seq < q[j].seq
}
func (q admissionQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *admissionQueue) Push(x any) {
	w := x.(*admissionWaiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *admissionQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.index = -1
	return w
}

// free reports whether one more list may run at now.
func (a *ListAdmission) freeLocked(now time.Time) bool {
	return (a.limit < 0 || a.inFlight < a.current) && !now.Before(a.pausedUntil)
}

// takeLocked counts a slot handed out.
func (a *ListAdmission) takeLocked() {
	a.inFlight++
	a.admitted++
	if a.inFlight > a.peak {
		a.peak = a.inFlight
	}
}

// grantLocked admits waiters, in order, while slots are free.
func (a *ListAdmission) grantLocked(now time.Time) {
	for len(a.waiters) > 0 && a.freeLocked(now) {
		w := heap.Pop(&a.waiters).(*admissionWaiter)
		w.granted = true
		w.epoch = a.epoch
		a.takeLocked()
		close(w.ready)
	}
}

// acquire waits for a slot for a list of the given priority. It returns
// ctx's error, and no slot, when ctx ends first. A nil a hands out a nil
// slot at once (whose release does nothing).
func (a *ListAdmission) acquire(ctx context.Context, priority int) (*admissionSlot, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	if len(a.waiters) == 0 && a.freeLocked(a.clock.Now()) {
		a.takeLocked()
		epoch := a.epoch
		a.mu.Unlock()
		return &admissionSlot{a: a, epoch: epoch}, nil
	}
	a.seq++
	w := &admissionWaiter{priority: priority, seq: a.seq, ready: make(chan struct{})}
	heap.Push(&a.waiters, w)
	// Slots may be free while others wait for the end of a pause that is
	// over: whoever is first in line goes now.
	a.grantLocked(a.clock.Now())
	a.mu.Unlock()

	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		a.mu.Lock()
		if w.granted {
			a.mu.Unlock()
			return &admissionSlot{a: a, epoch: w.epoch}, nil
		}
		// While a pause lasts, every waiter wakes at its end (or when it
		// moves) and admits whoever is first in line.
		var wake <-chan time.Time
		if now := a.clock.Now(); now.Before(a.pausedUntil) {
			if timer != nil {
				timer.Stop()
			}
			timer = a.clock.NewTimer(a.pausedUntil.Sub(now))
			wake = timer.C()
		}
		changed := a.changed
		a.mu.Unlock()

		select {
		case <-w.ready:
		case <-changed:
		case <-wake:
			a.mu.Lock()
			a.grantLocked(a.clock.Now())
			a.mu.Unlock()
		case <-ctx.Done():
			a.mu.Lock()
			if w.granted {
				// Admitted as ctx ended: the slot goes to the next.
				a.mu.Unlock()
				(&admissionSlot{a: a}).release(false)
				return nil, ctx.Err()
			}
			heap.Remove(&a.waiters, w.index)
			// The timer this waiter leaves may have been the one to admit
			// the others at the end of a pause.
			a.grantLocked(a.clock.Now())
			a.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}
