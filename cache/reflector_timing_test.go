package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

func TestReflectorBackoffDefaults(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Clock: clk})
	// Consecutive failures (each right after the previous delay) double
	// the base delay from 0.8s up to the 30s cap; jitter 1.0 draws each
	// delay from [base, 2*base).
	base := 800 * time.Millisecond
	for i := 0; i < 12; i++ {
		d := r.backoffDelay(nil)
		assert.GreaterOrEqual(t, d, base, "step %d", i)
		assert.Less(t, d, 2*base, "step %d", i)
		clk.Step(d)
		base *= 2
		if base > 30*time.Second {
			base = 30 * time.Second
		}
	}
	// Failures keep coming: no reset, even after more than two minutes
	// of them.
	d := r.backoffDelay(nil)
	assert.GreaterOrEqual(t, d, 30*time.Second)
	clk.Step(d)
	// Two minutes without a failure start the backoff over.
	clk.Step(reflectorBackoffReset + time.Second)
	d = r.backoffDelay(nil)
	assert.GreaterOrEqual(t, d, 800*time.Millisecond)
	assert.Less(t, d, 1600*time.Millisecond)
}

func TestReflectorBackoffCustom(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Steps: 100, Cap: 100 * time.Millisecond},
	})
	var got []time.Duration
	for i := 0; i < 6; i++ {
		got = append(got, r.backoffDelay(nil))
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms}, got)
}

func TestReflectorBackoffHonoursRetryAfter(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 1, Steps: 10},
	})
	assert.Equal(t, 7*time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 7)))
	assert.Equal(t, time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 0)))
	assert.Equal(t, time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 1)), "a shorter Retry-After does not shorten the backoff")
	assert.Equal(t, 3*time.Second, r.backoffDelay(apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "list", 3)))
}

// TestReflectorRunBacksOffBetweenCycles drives Run with a fake clock: a
// failed list is retried only once the backoff delay has passed.
func TestReflectorRunBacksOffBetweenCycles(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Err: errors.New("down")}, fakeapi.ListAnswer{Err: errors.New("down")}, fakeapi.ListAnswer{Object: newPodList("3", "")})
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Name:    "rf",
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10},
	})
	var errs watchErrors
	r.watchErrorHandler = errs.handler
	stop := startRun(t, r)

	requireEventually(t, func() bool { return len(s.ListOptions()) == 1 && clk.HasWaiters() }, "first list")
	clk.Step(999 * time.Millisecond)
	assert.Never(t, func() bool { return len(s.ListOptions()) > 1 }, 50*time.Millisecond, time.Millisecond, "retried before the backoff")
	clk.Step(time.Millisecond)
	requireEventually(t, func() bool { return len(s.ListOptions()) == 2 && clk.HasWaiters() }, "second list")
	clk.Step(1999 * time.Millisecond)
	assert.Never(t, func() bool { return len(s.ListOptions()) > 2 }, 50*time.Millisecond, time.Millisecond, "retried before the doubled backoff")
	clk.Step(time.Millisecond)
	requireEventually(t, func() bool { return len(watchOptionsWithoutTimeout(s)) == 1 }, "watch after the third list")
	stop()
	assert.Equal(t, []string{"other: failed to list *v1.Pod: down", "other: failed to list *v1.Pod: down"}, errorKinds(errs.snapshot()))
}

// TestReflectorWatchRetryWaitsForBackoff checks that a refused watch is
// reopened only after the backoff.
func TestReflectorWatchRetryWaitsForBackoff(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("3", "")}).WatchAnswers(fakeapi.WatchAnswer{Err: syscall.ECONNREFUSED})
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Name:    "rf",
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 1, Steps: 10},
	})
	stop := startRun(t, r)
	requireEventually(t, func() bool { return len(watchOptionsWithoutTimeout(s)) == 1 && clk.HasWaiters() }, "first watch")
	assert.Never(t, func() bool { return len(watchOptionsWithoutTimeout(s)) > 1 }, 50*time.Millisecond, time.Millisecond)
	clk.Step(time.Second)
	requireEventually(t, func() bool { return len(watchOptionsWithoutTimeout(s)) == 2 }, "second watch")
	stop()
	assert.Len(t, s.ListOptions(), 1, "no relist")
}

// TestReflectorStopsPromptly stops Run while it waits in each state and
// checks it returns (goleak in TestMain checks that nothing is left).
func TestReflectorStopsPromptly(t *testing.T) {
	t.Run("during the list", func(t *testing.T) {
		// Every call is held until its context ends: the gate is never
		// released.
		held := fakeapi.NewGate()
		pass := func(ctx context.Context, _ metav1.ListOptions) error { return held.Pass(ctx) }
		lw := fakeapi.New().BeforeList(pass).BeforeWatch(pass)
		r := NewReflectorWithOptions(lw, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf"})
		var errs watchErrors
		r.watchErrorHandler = errs.handler
		stop := startRun(t, r)
		select {
		case <-held.Arrived():
		case <-time.After(conditionTimeout):
			t.Fatal("the Reflector made no request")
		}
		stop()
		assert.Empty(t, errs.snapshot(), "a stop is not a failure")
	})
	t.Run("during the watch", func(t *testing.T) {
		s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", ResyncPeriod: time.Hour})
		stop := startRun(t, r)
		requireEventually(t, func() bool { return len(s.Watches()) == 1 }, "watch")
		stop()
		assert.True(t, s.NthWatch(0).IsStopped())
	})
	t.Run("during a backoff", func(t *testing.T) {
		clk := testingclock.NewFakeClock(time.Unix(1000, 0))
		s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Err: errors.New("down")})
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Clock: clk})
		stop := startRun(t, r)
		requireEventually(t, func() bool { return clk.HasWaiters() }, "backoff")
		stop()
	})
	t.Run("Run with a stop channel", func(t *testing.T) {
		s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf"})
		stopCh := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(stopCh)
		}()
		requireEventually(t, func() bool { return len(s.Watches()) == 1 }, "watch")
		close(stopCh)
		select {
		case <-done:
		case <-time.After(conditionTimeout):
			t.Fatal("Run did not return")
		}
	})
	t.Run("ListAndWatch with a stop channel", func(t *testing.T) {
		s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf"})
		stopCh := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- r.ListAndWatch(stopCh) }()
		requireEventually(t, func() bool { return len(s.Watches()) == 1 }, "watch")
		close(stopCh)
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(conditionTimeout):
			t.Fatal("ListAndWatch did not return")
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		s := fakeapi.New().WithoutWatchList()
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.NoError(t, r.ListAndWatchWithContext(ctx))
		r.RunWithContext(ctx)
		assert.Empty(t, s.ListOptions())
	})
}

// TestReflectorResync drives the resync timer with a fake clock.
func TestReflectorResync(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, ResyncPeriod: time.Minute})
	var allow atomic.Bool
	var asked atomic.Int32
	r.ShouldResync = func() bool {
		asked.Add(1)
		return allow.Load()
	}
	stop := startRun(t, r)
	requireEventually(t, func() bool { return len(s.Watches()) == 1 && clk.HasWaiters() }, "watching")

	clk.Step(time.Minute)
	requireEventually(t, func() bool { return asked.Load() == 1 && clk.HasWaiters() }, "first resync tick")
	assert.NotContains(t, rec.opsSnapshot(), "resync", "ShouldResync said no")

	allow.Store(true)
	clk.Step(time.Minute)
	requireEventually(t, func() bool { return asked.Load() == 2 && clk.HasWaiters() }, "second resync tick")
	assert.Equal(t, []string{"replace [] 1", "resync"}, rec.opsSnapshot())
	stop()
}

// TestReflectorResyncFailureEndsTheWatch checks that a failing Resync ends
// the watch and leads to a relist.
func TestReflectorResyncFailureEndsTheWatch(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	rec := newStoreRecorder()
	rec.fail("resync", errors.New("resync failed"))
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, ResyncPeriod: time.Minute})
	var errs watchErrors
	r.watchErrorHandler = errs.handler
	done := make(chan error, 1)
	go func() { done <- r.ListAndWatchWithContext(context.Background()) }()
	requireEventually(t, func() bool { return len(s.Watches()) == 1 && clk.HasWaiters() }, "watching")
	clk.Step(time.Minute)
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(conditionTimeout):
		t.Fatal("ListAndWatch did not end")
	}
	assert.True(t, s.NthWatch(0).IsStopped())
	assert.Equal(t, []string{"other: resync failed"}, errorKinds(errs.snapshot()))
}

// TestReflectorResyncNilShouldResync checks that a nil ShouldResync means
// always, and that no timer runs without a period.
func TestReflectorResyncNilShouldResync(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, ResyncPeriod: time.Second})
	stop := startRun(t, r)
	for i := 1; i <= 3; i++ {
		requireEventually(t, func() bool { return len(s.Watches()) == 1 && clk.HasWaiters() }, "waiting")
		clk.Step(time.Second)
		n := i
		requireEventually(t, func() bool { return len(rec.opsSnapshot()) == n+1 }, "resync %d", i)
	}
	stop()

	clk2 := testingclock.NewFakeClock(time.Unix(1000, 0))
	s2 := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	r2 := NewReflectorWithOptions(s2, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Clock: clk2})
	stop2 := startRun(t, r2)
	requireEventually(t, func() bool { return len(s2.Watches()) == 1 }, "watching")
	assert.False(t, clk2.HasWaiters(), "no resync timer without a period")
	stop2()
}

// TestReflectorVeryShortWatchUsesTheClock checks the one-second rule.
func TestReflectorVeryShortWatchUsesTheClock(t *testing.T) {
	for _, elapsed := range []time.Duration{0, 999 * time.Millisecond, time.Second} {
		clk := testingclock.NewFakeClock(time.Unix(1000, 0))
		s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).WatchAnswers(fakeapi.WatchAnswer{Hold: true})
		r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Clock: clk})
		var errs watchErrors
		r.watchErrorHandler = errs.handler
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.ListAndWatchWithContext(ctx) }()
		requireEventually(t, func() bool { return len(s.Watches()) == 1 }, "watching")
		clk.Step(elapsed)
		s.NthWatch(0).Close()
		if elapsed >= time.Second {
			// A normal close: the watch is reopened from the same version.
			waitExhausted(t, s)
			cancel()
		}
		require.NoError(t, <-done)
		cancel()
		if elapsed < time.Second {
			assert.Equal(t, []string{"short"}, errorKinds(errs.snapshot()), "after %v", elapsed)
			var short *VeryShortWatchError
			require.ErrorAs(t, errs.snapshot()[0], &short)
			assert.Equal(t, "rf", short.Name)
			assert.Equal(t, "very short watch: rf: Unexpected watch close - watch lasted less than a second and no items received", short.Error())
			continue
		}
		assert.Empty(t, errs.snapshot())
		assert.Equal(t, []metav1.ListOptions{watchOptionsFrom("1"), watchOptionsFrom("1")}, watchOptionsWithoutTimeout(s))
	}
}

// resettingStreamAPI is a server whose every watch is reset as soon as it
// opens: the stream ends with the ERROR event client-go's decoder makes for
// an HTTP/2 stream reset, or (clean) just closes, as after a GOAWAY. Lists
// succeed. Its script holds more cycles than a Reflector that does not back
// off makes before the test gives up on it. It returns the fake times of
// the watch requests.
func resettingStreamAPI(clk *testingclock.FakeClock, clean bool) (*fakeapi.API, func() []time.Time) {
	const cycles = 128
	api := fakeapi.New().WithoutWatchList()
	for range cycles {
		api.ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("a", "10"))})
		if clean {
			api.WatchAnswers(fakeapi.WatchAnswer{})
		} else {
			api.WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{decodingErrorEvent("stream error: stream ID 3; INTERNAL_ERROR; received from peer")}})
		}
	}
	hook, times := callTimes(clk)
	api.OnWatch(hook)
	return api, times
}

// TestReflectorResetStreamsObeyBackoff runs a Reflector against a server that
// resets every watch right after opening it, on a fake clock with a backoff
// of 1s doubling. As in client-go, a stream reset reported as a decoding
// error ends the watch with a 500 and the Reflector relists after the
// backoff, and a clean close obeys the very-short-watch rule (a relist after
// the backoff): one watch request per backoff step, never two within a
// second.
func TestReflectorResetStreamsObeyBackoff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clean   bool
		wantErr string
	}{
		{name: "reset reported as a decoding error", wantErr: "internal"},
		{name: "clean close", clean: true, wantErr: "short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			clk := testingclock.NewFakeClock(start)
			lw, watchTimes := resettingStreamAPI(clk, tc.clean)
			r := NewReflectorWithOptions(lw, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
				Name:    "rf",
				Clock:   clk,
				Backoff: &wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute},
			})
			var errs watchErrors
			r.watchErrorHandler = errs.handler
			stop := startRun(t, r)

			const steps = 5
			delay := time.Second
			for i := 1; i <= steps; i++ {
				// The Reflector is waiting out its backoff, or loops without
				// one (then the watches pile up on a clock that stands still).
				requireEventually(t, func() bool { return clk.HasWaiters() || len(watchTimes()) > 100 }, "cycle %d", i)
				require.Equal(t, i, len(watchTimes()), "watch requests before backoff step %d", i)
				clk.Step(delay)
				delay *= 2
			}
			stop()

			var want []time.Time
			at := start
			for i, d := 0, time.Second; i < steps; i, d = i+1, d*2 {
				want = append(want, at)
				at = at.Add(d)
			}
			got := watchTimes()
			assert.Equal(t, want, got[:steps], "watch requests at 0, 1, 3, 7, 15 s")
			assert.Equal(t, len(got), len(lw.ListOptions()), "a relist before every watch")
			kinds := errorKinds(errs.snapshot())
			require.NotEmpty(t, kinds)
			for _, k := range kinds {
				assert.Equal(t, tc.wantErr, k)
			}
			assert.Zero(t, r.badDataTotal(), "a reset connection is no bad data")
		})
	}
}

// TestReflectorBackoffResetsAfterAHealthyPeriod drives Run with a fake
// clock: failed watch openings back off exponentially (1s, 2s); after a
// watch that stayed healthy for longer than the reset period, the next
// failure backs off from the initial delay again (1s, not 4s).
func TestReflectorBackoffResetsAfterAHealthyPeriod(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "")}).WatchAnswers(
		fakeapi.WatchAnswer{Err: syscall.ECONNREFUSED},
		fakeapi.WatchAnswer{Err: syscall.ECONNREFUSED},
		fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{newEvent(watch.Added, newPod("a", "11"))}},
		fakeapi.WatchAnswer{Hold: true},
	)
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Name:    "backoff-reset",
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute},
	})
	stop := startRun(t, r)
	defer stop()

	// waitsFor checks that the next watch is opened exactly after d.
	waitsFor := func(d time.Duration, watches int) {
		t.Helper()
		requireEventually(t, func() bool { return len(watchOptionsWithoutTimeout(s)) == watches-1 && clk.HasWaiters() }, "watch %d pending", watches)
		clk.Step(d - time.Millisecond)
		assert.Never(t, func() bool { return len(watchOptionsWithoutTimeout(s)) >= watches }, 50*time.Millisecond, time.Millisecond, "watch %d opened before %v", watches, d)
		clk.Step(time.Millisecond)
		requireEventually(t, func() bool { return len(watchOptionsWithoutTimeout(s)) == watches }, "watch %d after %v", watches, d)
	}
	waitsFor(time.Second, 2)
	waitsFor(2*time.Second, 3)

	// Healthy for three minutes, then the watch ends with a 429.
	requireEventually(t, func() bool { return r.LastSyncResourceVersion() == "11" }, "event applied")
	clk.Step(3 * time.Minute)
	watches := s.Watches()
	w := watches[len(watches)-1]
	w.Send(newEvent(watch.Error, statusError(429, metav1.StatusReasonTooManyRequests)))
	waitsFor(time.Second, 4)
	assert.Len(t, s.ListOptions(), 1, "no relist")
}

// TestReflectorCapsRetryAfterAtSixtySecondsByDefault: the Reflector waits a
// server's Retry-After when it is longer than its backoff, but never longer
// than sixty seconds by default: a Retry-After of a year does not stop the
// informer for a year.
func TestReflectorCapsRetryAfterAtSixtySecondsByDefault(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 1, Steps: 10},
	})
	assert.Equal(t, 60*time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 31536000)))
	assert.Equal(t, 60*time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 61)))
	assert.Equal(t, 59*time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 59)))
	assert.Equal(t, 60*time.Second, r.backoffDelay(apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "list", 1<<30)))
}

// TestReflectorMaxRetryAfterSetsTheCap: ReflectorOptions.MaxRetryAfter
// replaces the default maximum (negative: none).
func TestReflectorMaxRetryAfterSetsTheCap(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	newR := func(max time.Duration) *Reflector {
		return NewReflectorWithOptions(fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{
			Clock:         clk,
			Backoff:       &wait.Backoff{Duration: time.Second, Factor: 1, Steps: 10},
			MaxRetryAfter: max,
		})
	}
	assert.Equal(t, 10*time.Second, newR(10*time.Second).backoffDelay(apierrors.NewTooManyRequests("busy", 3600)))
	assert.Equal(t, 3600*time.Second, newR(-1).backoffDelay(apierrors.NewTooManyRequests("busy", 3600)))
	r := newR(10 * time.Second)
	assert.Equal(t, 10*time.Second, r.backoffDelay(apierrors.NewTooManyRequests("busy", 11)))
	assert.Equal(t, uint64(1), r.stats.RetryAfterCapped())
	assert.Equal(t, clk.Now().Add(10*time.Second).UnixNano(), r.stats.RetryAfterUntil().UnixNano())
}

// TestInformerStatusReportsTheRetryAfterWait: an informer whose list is
// answered 429 with a Retry-After of an hour waits the maximum it was given,
// and its status says so and counts the capped Retry-After.
func TestInformerStatusReportsTheRetryAfterWait(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	requests := make(chan string, 16)
	lw := newGatedAPI("throttled", requests, admissionPodList("1", "", "p"))
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{MaxRetryAfter: 2 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	expectRequest(t, requests, "throttled list")
	start := time.Now()
	lw.gate.Release(apierrors.NewTooManyRequests("slow down", 3600))
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := GetInformerStatus(informer)
		if st.RetryAfterCapped == 1 {
			if st.RetryAfterUntil.Before(start.Add(2*time.Second)) || st.RetryAfterUntil.After(time.Now().Add(2*time.Second)) {
				t.Fatalf("waits until %v, want two seconds after the 429 (at %v)", st.RetryAfterUntil, start)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capped Retry-After was not reported: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	// It retries after the capped wait, not an hour later.
	expectRequest(t, requests, "throttled list")
	lw.gate.Release(nil)
	expectRequest(t, requests, "throttled watch")
	waitSynced(t, informer)
}
