package listadmission

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
)

// admissionClockStart is where the fake clocks of these tests start.
var admissionClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// admissionUntil waits until cond holds of a's stats, or fails t.
func admissionUntil(t *testing.T, a *Admission, what string, cond func(Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(a.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stats %+v", what, a.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// admissionRun is one Acquire call running in its own goroutine.
type admissionRun struct {
	name string
	slot *Slot
	err  error
	done chan struct{}
}

// admissionLine starts Acquire calls one after the other, each only once
// the one before is in line, and records the order they are admitted in.
type admissionLine struct {
	t     *testing.T
	a     *Admission
	order chan *admissionRun
}

func newAdmissionLine(t *testing.T, a *Admission) *admissionLine {
	return &admissionLine{t: t, a: a, order: make(chan *admissionRun, 64)}
}

// join starts an Acquire of priority under ctx and waits until it waits in
// line or was admitted.
func (l *admissionLine) join(ctx context.Context, name string, priority int) *admissionRun {
	l.t.Helper()
	before := l.a.Stats()
	r := &admissionRun{name: name, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.slot, r.err = l.a.Acquire(ctx, priority)
		if r.err == nil {
			l.order <- r
		}
	}()
	admissionUntil(l.t, l.a, name+" in line", func(s Stats) bool {
		return s.Waiting > before.Waiting || s.Admitted > before.Admitted
	})
	return r
}

// next returns the next run admitted.
func (l *admissionLine) next() *admissionRun {
	l.t.Helper()
	select {
	case r := <-l.order:
		return r
	case <-time.After(10 * time.Second):
		l.t.Fatalf("nothing admitted; stats %+v", l.a.Stats())
		return nil
	}
}

// none checks that nobody is admitted (after the admissions in flight have
// had the time to happen: the stats say who is admitted synchronously).
func (l *admissionLine) none(wantInFlight int) {
	l.t.Helper()
	if s := l.a.Stats(); s.InFlight != wantInFlight {
		l.t.Fatalf("%d lists in flight, want %d; stats %+v", s.InFlight, wantInFlight, s)
	}
	select {
	case r := <-l.order:
		l.t.Fatalf("%s admitted, want nobody", r.name)
	default:
	}
}

func TestAdmissionLimitsConcurrentLists(t *testing.T) {
	ctx := t.Context()
	a := New(Options{MaxConcurrent: 2, Clock: testingclock.NewFakeClock(admissionClockStart)})
	line := newAdmissionLine(t, a)
	first := line.join(ctx, "first", 0)
	second := line.join(ctx, "second", 0)
	if got := []string{line.next().name, line.next().name}; got[0] != "first" || got[1] != "second" {
		t.Fatalf("admitted %v, want [first second]", got)
	}
	third := line.join(ctx, "third", 0)
	line.none(2)
	if s := a.Stats(); s.Waiting != 1 {
		t.Fatalf("waiting %d, want 1", s.Waiting)
	}
	first.slot.Release(true)
	if got := line.next(); got != third {
		t.Fatalf("admitted %s, want third", got.name)
	}
	first.slot.Release(true) // a second release does nothing
	second.slot.Release(false)
	third.slot.Release(true)
	want := Stats{Limit: 2, CurrentLimit: 2, PeakInFlight: 2, Admitted: 3}
	if s := a.Stats(); s != want {
		t.Fatalf("stats %+v, want %+v", s, want)
	}
}

func TestAdmissionOrdersByPriorityThenArrival(t *testing.T) {
	ctx := t.Context()
	a := New(Options{MaxConcurrent: 1, Clock: testingclock.NewFakeClock(admissionClockStart)})
	line := newAdmissionLine(t, a)
	holder := line.join(ctx, "holder", 0)
	line.next()
	for _, w := range []struct {
		name     string
		priority int
	}{{"a0", 0}, {"b5", 5}, {"c0", 0}, {"d5", 5}, {"e-1", -1}, {"f9", 9}} {
		line.join(ctx, w.name, w.priority)
	}
	var got []string
	current := holder
	for range 6 {
		current.slot.Release(true)
		current = line.next()
		got = append(got, current.name)
		line.none(1)
	}
	current.slot.Release(true)
	want := []string{"f9", "b5", "d5", "a0", "c0", "e-1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admitted in the order %v, want %v", got, want)
	}
}

func TestAdmissionCancelledWaiterLeavesTheLine(t *testing.T) {
	ctx := t.Context()
	a := New(Options{MaxConcurrent: 1, Clock: testingclock.NewFakeClock(admissionClockStart)})
	line := newAdmissionLine(t, a)
	holder := line.join(ctx, "holder", 0)
	line.next()
	cancelCtx, cancel := context.WithCancel(ctx)
	gone := line.join(cancelCtx, "gone", 10)
	stays := line.join(ctx, "stays", 0)
	cancel()
	<-gone.done
	if !errors.Is(gone.err, context.Canceled) || gone.slot != nil {
		t.Fatalf("cancelled waiter got slot %v, error %v; want no slot and context.Canceled", gone.slot, gone.err)
	}
	if s := a.Stats(); s.Waiting != 1 || s.InFlight != 1 {
		t.Fatalf("stats %+v, want 1 waiting and 1 in flight", s)
	}
	holder.slot.Release(true)
	if got := line.next(); got != stays {
		t.Fatalf("admitted %s, want stays", got.name)
	}
	stays.slot.Release(true)
	if s := a.Stats(); s.InFlight != 0 || s.Waiting != 0 || s.Admitted != 2 {
		t.Fatalf("stats %+v, want nothing in flight or waiting, 2 admitted", s)
	}
}

func TestAdmissionCancelledBeforeAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	a := New(Options{MaxConcurrent: 1})
	// A free slot is handed out whatever the context: the list itself
	// notices the cancellation. A full one is not waited for.
	slot, err := a.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on a full admission with a cancelled context: %v, want context.Canceled", err)
	}
	slot.Release(true)
	if s := a.Stats(); s.Waiting != 0 || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAdmissionNilAdmitsEverything(t *testing.T) {
	var a *Admission
	for range 100 {
		slot, err := a.Acquire(t.Context(), 0)
		if err != nil || slot != nil {
			t.Fatalf("nil admission: slot %v, error %v", slot, err)
		}
		slot.Release(true)
	}
	a.Throttled(time.Second)
	a.ThrottledBy(apierrors.NewTooManyRequests("x", 1), nil)
	if s := a.Stats(); s != (Stats{}) {
		t.Fatalf("stats of nil: %+v", s)
	}
}

func TestAdmissionUnlimited(t *testing.T) {
	a := New(Options{MaxConcurrent: -1})
	var slots []*Slot
	for range 200 {
		slot, err := a.Acquire(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, slot)
	}
	if s := a.Stats(); s.InFlight != 200 || s.PeakInFlight != 200 {
		t.Fatalf("stats %+v", s)
	}
	for _, s := range slots {
		s.Release(true)
	}
}

// TestAdmissionPauseJitter checks the length of the pause after a 429:
// Retry-After plus jitter in [0, Jitter*Retry-After), exactly what the
// seeded generator draws.
func TestAdmissionPauseJitter(t *testing.T) {
	cases := []struct {
		name       string
		jitter     float64
		retryAfter time.Duration
		want       func(draw float64) time.Duration
	}{
		{"default jitter", 0, 4 * time.Second, func(f float64) time.Duration {
			return 4*time.Second + time.Duration(DefaultJitter*f*float64(4*time.Second))
		}},
		{"jitter 1", 1, 2 * time.Second, func(f float64) time.Duration { return 2*time.Second + time.Duration(f*float64(2*time.Second)) }},
		{"no jitter", -1, 3 * time.Second, func(float64) time.Duration { return 3 * time.Second }},
		{"no Retry-After: the default", -1, 0, func(float64) time.Duration { return DefaultRetryAfter }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				clk := testingclock.NewFakeClock(admissionClockStart)
				a := New(Options{MaxConcurrent: 1, Jitter: tc.jitter, Clock: clk, Rand: rand.New(rand.NewPCG(seed, 1))})
				a.Throttled(tc.retryAfter)
				draw := rand.New(rand.NewPCG(seed, 1)).Float64()
				if tc.jitter < 0 {
					draw = 0
				}
				got := a.Stats().PausedUntil.Sub(admissionClockStart)
				if want := tc.want(draw); got != want {
					t.Fatalf("seed %d: pause %v, want %v", seed, got, want)
				}
				base := tc.retryAfter
				if base <= 0 {
					base = DefaultRetryAfter
				}
				j := tc.jitter
				if j == 0 {
					j = DefaultJitter
				}
				if j < 0 {
					j = 0
				}
				if got < base || (j > 0 && got >= base+time.Duration(j*float64(base))) {
					t.Fatalf("seed %d: pause %v outside [%v, %v)", seed, got, base, base+time.Duration(j*float64(base)))
				}
			}
		})
	}
}

// TestAdmissionTooManyRequestsHalvesTheLimit: a 429 halves the number of
// lists admitted at once without pausing the group (the lists running go
// on), and completed lists raise it again; failed ones do not.
func TestAdmissionTooManyRequestsHalvesTheLimit(t *testing.T) {
	ctx := t.Context()
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 4, Jitter: -1, Clock: clk})
	line := newAdmissionLine(t, a)
	var running []*admissionRun
	for _, name := range []string{"r1", "r2", "r3", "r4"} {
		running = append(running, line.join(ctx, name, 0))
		line.next()
	}

	// A 429 with Retry-After: 2 reported by an informer.
	a.ThrottledBy(apierrors.NewTooManyRequests("slow down", 2), nil)
	if s := a.Stats(); s.CurrentLimit != 2 || s.Throttled != 1 || !s.PausedUntil.IsZero() {
		t.Fatalf("after a 429: %+v", s)
	}
	w1 := line.join(ctx, "w1", 0)
	w2 := line.join(ctx, "w2", 0)
	w3 := line.join(ctx, "w3", 0)
	// Two failed lists leave two running: still at the halved limit.
	running[0].slot.Release(false)
	running[1].slot.Release(false)
	line.none(2)
	// One more ends: one list may start.
	running[2].slot.Release(false)
	if got := line.next(); got != w1 {
		t.Fatalf("admitted %s, want w1", got.name)
	}
	line.none(2)
	// A completed list raises the limit to 3: two more may run.
	running[3].slot.Release(true)
	// Both are admitted by the same release; their goroutines report in
	// either order.
	if got := []*admissionRun{line.next(), line.next()}; !(got[0] == w2 && got[1] == w3 || got[0] == w3 && got[1] == w2) {
		t.Fatalf("admitted %s, %s; want w2 and w3", got[0].name, got[1].name)
	}
	if s := a.Stats(); s.CurrentLimit != 3 || s.InFlight != 3 {
		t.Fatalf("stats %+v, want current limit 3 and 3 in flight", s)
	}
	// A failed list gives its slot back without raising the limit.
	w1.slot.Release(false)
	w2.slot.Release(true)
	w3.slot.Release(true)
	if s := a.Stats(); s.CurrentLimit != 4 || s.InFlight != 0 {
		t.Fatalf("stats %+v, want current limit 4 and nothing in flight", s)
	}
}

// TestAdmissionAtOneListATimeA429PausesTheGroup: once the limit is down
// to one, a 429 stops every admission until its Retry-After (plus jitter)
// has passed; another 429 of the same burst extends nothing.
func TestAdmissionAtOneListATimeA429PausesTheGroup(t *testing.T) {
	ctx := t.Context()
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 2, Jitter: -1, Clock: clk})
	line := newAdmissionLine(t, a)
	a.Throttled(2 * time.Second)
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.IsZero() {
		t.Fatalf("after the first 429: %+v", s)
	}
	a.Throttled(2 * time.Second)
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.Equal(admissionClockStart.Add(2*time.Second)) {
		t.Fatalf("after a 429 at one list at a time: %+v", s)
	}
	a.Throttled(time.Second)
	if s := a.Stats(); s.CurrentLimit != 1 || s.Throttled != 3 || !s.PausedUntil.Equal(admissionClockStart.Add(2*time.Second)) {
		t.Fatalf("after a 429 of the same burst: %+v", s)
	}
	// Nobody is admitted during the pause, though a slot is free.
	w1 := line.join(ctx, "w1", 0)
	w2 := line.join(ctx, "w2", 0)
	line.none(0)
	clk.Step(1999 * time.Millisecond)
	line.none(0)
	// At its end, as many as the limit allows: one.
	admissionUntil(t, a, "waiters to wait for the pause's end", func(Stats) bool { return clk.HasWaiters() })
	clk.Step(time.Millisecond)
	if got := line.next(); got != w1 {
		t.Fatalf("admitted %s, want w1", got.name)
	}
	line.none(1)
	w1.slot.Release(true)
	if got := line.next(); got != w2 {
		t.Fatalf("admitted %s, want w2", got.name)
	}
	w2.slot.Release(true)
	if s := a.Stats(); s.CurrentLimit != 2 || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestAdmissionLongerPauseWakesWaiters: a waiter that waits for the end
// of a pause waits for the new end when a later 429 extends it.
func TestAdmissionLongerPauseWakesWaiters(t *testing.T) {
	ctx := t.Context()
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
	line := newAdmissionLine(t, a)
	a.Throttled(time.Second)
	w := line.join(ctx, "w", 0)
	admissionUntil(t, a, "the waiter's timer", func(Stats) bool { return clk.HasWaiters() })
	a.Throttled(5 * time.Second)
	clk.Step(time.Second)
	line.none(0)
	admissionUntil(t, a, "the waiter's new timer", func(Stats) bool { return clk.HasWaiters() })
	clk.Step(4 * time.Second)
	if got := line.next(); got != w {
		t.Fatalf("admitted %s", got.name)
	}
	w.slot.Release(true)
}

func TestAdmissionWrapTransportReportsTooManyRequests(t *testing.T) {
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
	responses := []*http.Response{
		{StatusCode: http.StatusOK, Header: http.Header{}},
		{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"5"}}},
		{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"5"}}},
		{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}},
	}
	rt := a.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		r := responses[0]
		responses = responses[1:]
		return r, nil
	}))
	req, _ := http.NewRequest(http.MethodGet, "https://example.invalid/api/v1/pods", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Throttled != 0 {
		t.Fatalf("a 200 throttled: %+v", s)
	}
	// 429s answering a plain watch and a write do not pause the lists.
	watchReq, _ := http.NewRequest(http.MethodGet, "https://example.invalid/api/v1/pods?watch=true", nil)
	writeReq, _ := http.NewRequest(http.MethodPost, "https://example.invalid/api/v1/namespaces/a/pods", nil)
	for _, r := range []*http.Request{watchReq, writeReq} {
		if _, err := rt.RoundTrip(r); err != nil {
			t.Fatal(err)
		}
	}
	if s := a.Stats(); s.Throttled != 0 {
		t.Fatalf("a 429 to a watch or a write throttled: %+v", s)
	}
	// A streaming list of one of a's informers (its slot on the context).
	slot, err := a.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Release(false)
	streamReq, _ := http.NewRequestWithContext(ContextWithSlot(t.Context(), slot), http.MethodGet, "https://example.invalid/api/v1/pods?watch=true&sendInitialEvents=true", nil)
	if _, err := rt.RoundTrip(streamReq); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Throttled != 1 || !s.PausedUntil.Equal(admissionClockStart.Add(3*time.Second)) {
		t.Fatalf("after a 429 with Retry-After 3: %+v", s)
	}
	var nilAdmission *Admission
	if got := nilAdmission.WrapTransport(http.DefaultTransport); got != http.DefaultTransport {
		t.Fatalf("a nil admission wrapped the transport")
	}
}

func TestAdmissionThrottledByIgnoresOtherErrors(t *testing.T) {
	a := New(Options{MaxConcurrent: 1, Clock: testingclock.NewFakeClock(admissionClockStart)})
	for _, err := range []error{
		nil,
		errors.New("connection refused"),
		apierrors.NewInternalError(errors.New("boom")),
		apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")),
	} {
		a.ThrottledBy(err, nil)
	}
	if s := a.Stats(); s.Throttled != 0 || !s.PausedUntil.IsZero() {
		t.Fatalf("throttled by errors other than 429: %+v", s)
	}
	a.ThrottledBy(fmt.Errorf("failed to list: %w", apierrors.NewTooManyRequests("x", 0)), nil)
	s := a.Stats()
	if pause := s.PausedUntil.Sub(admissionClockStart); s.Throttled != 1 || pause < time.Second || pause >= time.Second+time.Second/2 {
		t.Fatalf("a wrapped 429 without Retry-After: %+v", s)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestAdmissionLateAnswersToAnEarlierBurstDoNotSlowTheGroupAgain: the
// 429s answering lists admitted before the group slowed down (their REST
// client retries them, and a retry may be answered just after the pause
// ended) neither halve the limit again nor start a new pause; a 429
// answering a list admitted since does both. Lists report through the
// transport, which finds their slot in the request's context.
func TestAdmissionLateAnswersToAnEarlierBurstDoNotSlowTheGroupAgain(t *testing.T) {
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 8, Jitter: -1, Clock: clk})
	rt := a.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}, nil
	}))
	answer429 := func(slot *Slot) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ContextWithSlot(t.Context(), slot), http.MethodGet, "https://example.invalid/api/v1/pods", nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	var burst []*Slot
	for range 8 {
		slot, err := a.Acquire(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		burst = append(burst, slot)
	}

	answer429(burst[0])
	if s := a.Stats(); s.CurrentLimit != 4 || !s.PausedUntil.IsZero() {
		t.Fatalf("after the first 429: %+v", s)
	}
	// The burst's retries are answered 429 again, a second later.
	clk.Step(time.Second)
	for _, slot := range burst[1:] {
		answer429(slot)
	}
	if s := a.Stats(); s.CurrentLimit != 4 || s.Throttled != 8 || !s.PausedUntil.IsZero() {
		t.Fatalf("late answers to the first burst slowed the group again: %+v", s)
	}
	// Reported by the informer after its REST client gave up: the same.
	a.ThrottledBy(apierrors.NewTooManyRequests("x", 1), burst[0])
	if s := a.Stats(); s.CurrentLimit != 4 || !s.PausedUntil.IsZero() {
		t.Fatalf("the informer's own report of a late answer slowed the group: %+v", s)
	}
	for _, slot := range burst[:5] {
		slot.Release(false)
	}
	// A list admitted after the slow-down is answered 429: new information.
	later, err := a.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	answer429(later)
	if s := a.Stats(); s.CurrentLimit != 2 || !s.PausedUntil.IsZero() {
		t.Fatalf("after a 429 answering a later list: %+v", s)
	}
	// 429s whose list the transport cannot tell answer no informer's list:
	// they change nothing. Throttled, which the caller calls knowingly,
	// slows the group: down to one list at a time, then a pause.
	answer429(nil)
	if s := a.Stats(); s.CurrentLimit != 2 || s.Throttled != 10 {
		t.Fatalf("after an unattributed 429: %+v", s)
	}
	a.Throttled(time.Second)
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.IsZero() {
		t.Fatalf("after Throttled: %+v", s)
	}
	a.Throttled(time.Second)
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.Equal(admissionClockStart.Add(2*time.Second)) {
		t.Fatalf("after Throttled at one list at a time: %+v", s)
	}
	// During the pause, a late answer to a list admitted before it,
	// asking for a longer wait, extends it.
	clk.Step(500 * time.Millisecond)
	a.throttle(3*time.Second, later)
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.Equal(admissionClockStart.Add(4500*time.Millisecond)) {
		t.Fatalf("after a longer Retry-After during the pause: %+v", s)
	}
	for _, slot := range append(burst[5:], later) {
		slot.Release(false)
	}
}

// TestAdmissionWrapTransportCountsOnlyTheInformersOwnListReads: the
// transport of a client shared with other code sees 429s that answer no
// informer list (a GET of one object of an aggregated API, a list made by
// the application, a list of another admission's informer). None of them
// slows the group down, whatever Retry-After it asks for; a 429 answering a
// read that carries one of this admission's slots does.
func TestAdmissionWrapTransportCountsOnlyTheInformersOwnListReads(t *testing.T) {
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
	other := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
	rt := a.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"31536000"}}}, nil
	}))
	otherSlot, err := other.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer otherSlot.Release(true)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		url  string
	}{
		{"a GET of one object", t.Context(), "https://example.invalid/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/p"},
		{"a list the application makes", t.Context(), "https://example.invalid/api/v1/pods"},
		{"a streaming list without a slot", t.Context(), "https://example.invalid/api/v1/pods?watch=true&sendInitialEvents=true"},
		{"a list holding another admission's slot", ContextWithSlot(t.Context(), otherSlot), "https://example.invalid/api/v1/pods"},
	} {
		req, _ := http.NewRequestWithContext(tc.ctx, http.MethodGet, tc.url, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if s := a.Stats(); s.Throttled != 0 || s.CurrentLimit != 1 || !s.PausedUntil.IsZero() {
			t.Fatalf("%s answered 429 slowed the group: %+v", tc.name, s)
		}
	}
	slot, err := a.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Release(false)
	req, _ := http.NewRequestWithContext(ContextWithSlot(t.Context(), slot), http.MethodGet, "https://example.invalid/api/v1/pods", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Throttled != 1 || s.PausedUntil.IsZero() {
		t.Fatalf("a 429 answering the informer's own list: %+v, want a pause", s)
	}
}

// TestAdmissionMaxRetryAfterSetsTheCap: MaxRetryAfter replaces the
// default maximum (negative: none), the pause reports the Retry-After it
// honours, and the capped ones are counted.
func TestAdmissionMaxRetryAfterSetsTheCap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		max        time.Duration
		retryAfter time.Duration
		want       time.Duration
		capped     uint64
	}{
		{"10 s cap, asked 11 s", 10 * time.Second, 11 * time.Second, 10 * time.Second, 1},
		{"10 s cap, asked 10 s", 10 * time.Second, 10 * time.Second, 10 * time.Second, 0},
		{"no cap", -1, 365 * 24 * time.Hour, 365 * 24 * time.Hour, 0},
		{"default cap", 0, 2 * time.Hour, DefaultMaxRetryAfter, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(admissionClockStart)
			a := New(Options{MaxConcurrent: 1, Jitter: -1, MaxRetryAfter: tc.max, Clock: clk})
			a.Throttled(tc.retryAfter)
			s := a.Stats()
			if got := s.PausedUntil.Sub(admissionClockStart); got != tc.want || s.PauseRetryAfter != tc.want || s.RetryAfterCapped != tc.capped {
				t.Fatalf("pause %v, stats %+v; want a pause of %v and %d capped", got, s, tc.want, tc.capped)
			}
		})
	}
}

// TestParseRetryAfter: whole seconds above zero, as client-go's REST client
// reads them; nothing else.
func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{"120", 2 * time.Minute, true},
		{"+5", 5 * time.Second, true},
		{"31536000", 31536000 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true},
		{"9223372037", 0, false},
		{"99999999999999999999", 0, false},
		{"", 0, false},
		{"0", 0, false},
		{"-3", 0, false},
		{"1.5", 0, false},
		{" 5", 0, false},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0, false},
	} {
		got, ok := ParseRetryAfter(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestAdmissionCapsThePauseAtSixtySecondsByDefault: a Retry-After of a
// year pauses the group for the default maximum, sixty seconds, not a year;
// shorter ones are honoured as sent.
func TestAdmissionCapsThePauseAtSixtySecondsByDefault(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"a year", 365 * 24 * time.Hour, 60 * time.Second},
		{"61 s", 61 * time.Second, 60 * time.Second},
		{"60 s", 60 * time.Second, 60 * time.Second},
		{"5 s", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(admissionClockStart)
			a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
			a.Throttled(tc.retryAfter)
			if got := a.Stats().PausedUntil.Sub(admissionClockStart); got != tc.want {
				t.Fatalf("pause %v, want %v", got, tc.want)
			}
		})
	}
}
