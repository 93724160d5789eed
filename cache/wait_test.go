package cache

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// closableChecker is a DoneChecker whose channel the test closes. asked is closed
// the first time the waiter asks for Done, so a test can act once the wait
// has begun instead of after a guessed delay.
type closableChecker struct {
	name      string
	ch        chan struct{}
	asked     chan struct{}
	askedOnce sync.Once
}

func newClosableChecker(name string, done bool) *closableChecker {
	c := &closableChecker{name: name, ch: make(chan struct{}), asked: make(chan struct{})}
	if done {
		close(c.ch)
	}
	return c
}

func (c *closableChecker) Name() string { return c.name }
func (c *closableChecker) Done() <-chan struct{} {
	c.askedOnce.Do(func() { close(c.asked) })
	return c.ch
}

func TestWaitFor(t *testing.T) {
	t.Run("all done already", func(t *testing.T) {
		var buf syncBuffer
		ctx := klog.NewContext(context.Background(), bufferLogger(&buf))
		assert.True(t, WaitFor(ctx, "caches", newClosableChecker("x", true), newClosableChecker("y", true)))
		out := buf.String()
		assert.Contains(t, out, `"Waiting" for="caches"`)
		assert.Contains(t, out, `"Done waiting" for="caches" instance="x"`)
		assert.Contains(t, out, `"Done waiting" for="caches" instance="y"`)
		assert.Contains(t, out, "wait_test.go:", "log lines point at the caller")
	})
	t.Run("no checkers", func(t *testing.T) {
		assert.True(t, WaitFor(context.Background(), ""))
	})
	t.Run("completes later", func(t *testing.T) {
		late := newClosableChecker("late", false)
		go func() {
			<-late.asked
			close(late.ch)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		assert.True(t, WaitFor(ctx, "", newClosableChecker("now", true), late))
	})
	t.Run("canceled", func(t *testing.T) {
		var buf syncBuffer
		ctx, cancel := context.WithCancelCause(klog.NewContext(context.Background(), bufferLogger(&buf)))
		a := newClosableChecker("a", false)
		go func() {
			<-a.asked
			cancel(errors.New("go fish"))
		}()
		assert.False(t, WaitFor(ctx, "caches", newClosableChecker("b", false), newClosableChecker("ok", true), a))
		out := buf.String()
		assert.Contains(t, out, `"Done waiting" for="caches" instance="ok"`)
		assert.Contains(t, out, `"Timed out waiting" for="caches" cause="go fish" instances=["a","b"]`)
	})
	t.Run("done checker wins over canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.True(t, WaitFor(ctx, "", newClosableChecker("x", true)))
		assert.False(t, WaitFor(ctx, "", newClosableChecker("y", false)))
	})
}

func TestWaitForCacheSync(t *testing.T) {
	assert.True(t, WaitForCacheSync(nil))
	closed := make(chan struct{})
	close(closed)
	assert.True(t, WaitForCacheSync(closed, func() bool { return true }), "synced wins over stopped")
	assert.False(t, WaitForCacheSync(closed, func() bool { return false }))

	var calls atomic.Int32
	synced := func() bool { return calls.Add(1) >= 3 }
	assert.True(t, WaitForCacheSync(make(chan struct{}), synced, func() bool { return true }))
	assert.Equal(t, int32(3), calls.Load())

	assert.True(t, WaitForNamedCacheSync("ctrl", make(chan struct{}), func() bool { return true }))
	assert.False(t, WaitForNamedCacheSync("ctrl", closed, func() bool { return false }))

	var buf syncBuffer
	ctx := klog.NewContext(context.Background(), bufferLogger(&buf))
	assert.True(t, WaitForNamedCacheSyncWithContext(ctx, func() bool { return true }))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.False(t, WaitForNamedCacheSyncWithContext(canceled, func() bool { return false }))
	assert.Equal(t, 1, strings.Count(buf.String(), "Caches are synced"))
	assert.Contains(t, buf.String(), "Unable to sync caches")
}

func TestSyncResultAsError(t *testing.T) {
	assert.NoError(t, SyncResult{}.AsError())
	cause := errors.New("my cause")
	err := SyncResult{Err: cause, Synced: map[reflect.Type]bool{
		reflect.TypeFor[string](): false,
		reflect.TypeFor[int]():    false,
		reflect.TypeFor[bool]():   true,
	}}.AsError()
	require.Error(t, err)
	assert.Equal(t, "failed to sync all caches: int, string: my cause", err.Error())
	assert.ErrorIs(t, err, cause)
}

// logLines renders each entry of a text log as "file:line] message and
// keys", without severity, time stamp and thread id, replacing the caller
// "file:line" that equals call with "CALLER".
func logLines(log, call string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 {
			continue
		}
		caller := strings.TrimSuffix(fields[3], "]")
		if caller == call {
			caller = "CALLER"
		}
		out = append(out, caller+"] "+strings.Join(fields[4:], " "))
	}
	return out
}

// callSite returns "file:line" of the line that calls it.
func callSite() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// TestWaitForLoggingMatchesClientGo waits with client-go's WaitFor and with
// ours for a checker already done, one done later and one never done (the
// context ends), and compares the log lines: the same messages and keys,
// each naming the caller's line, as client-go's do.
func TestWaitForLoggingMatchesClientGo(t *testing.T) {
	run := func(t *testing.T, clientGo bool) []string {
		var buf syncBuffer
		ctx, cancel := context.WithCancelCause(klog.NewContext(context.Background(), bufferLogger(&buf)))
		defer cancel(nil)
		already, later, never := newClosableChecker("already", true), newClosableChecker("later", false), newClosableChecker("never", false)
		logged := func(instance string) func() bool {
			return func() bool { return strings.Contains(buf.String(), `instance="`+instance+`"`) }
		}
		go func() {
			// One step at a time, so that the lines come in one order.
			<-later.asked
			assert.Eventually(t, logged("already"), waitTimeout, time.Millisecond)
			close(later.ch)
			<-never.asked
			assert.Eventually(t, logged("later"), waitTimeout, time.Millisecond)
			cancel(errors.New("gave up"))
		}()
		var ok bool
		var call string
		if clientGo {
			ok, call = clientcache.WaitFor(ctx, "caches", already, later, never), callSite()
		} else {
			ok, call = WaitFor(ctx, "caches", already, later, never), callSite()
		}
		assert.False(t, ok)
		return logLines(buf.String(), call)
	}
	want := []string{
		`CALLER] "Waiting" for="caches"`,
		`CALLER] "Done waiting" for="caches" instance="already"`,
		`CALLER] "Done waiting" for="caches" instance="later"`,
		`CALLER] "Timed out waiting" for="caches" cause="gave up" instances=["never"]`,
	}
	require.Equal(t, want, run(t, true), "client-go")
	assert.Equal(t, want, run(t, false), "kinformer")
}

// TestWaitForNamedCacheSyncLoggingMatchesClientGo compares the lines of a
// WaitForNamedCacheSyncWithContext that gives up, client-go's and ours: the
// failure goes through utilruntime.HandleErrorWithContext in both, as an
// error logged by "UnhandledError".
func TestWaitForNamedCacheSyncLoggingMatchesClientGo(t *testing.T) {
	run := func(clientGo bool) []string {
		var buf syncBuffer
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), bufferLogger(&buf)))
		cancel()
		never := func() bool { return false }
		if clientGo {
			assert.False(t, clientcache.WaitForNamedCacheSyncWithContext(ctx, never))
		} else {
			assert.False(t, WaitForNamedCacheSyncWithContext(ctx, never))
		}
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			// Severity, then the message and keys; callers differ (the
			// library's own file).
			if fields := strings.Fields(line); len(fields) > 4 {
				out = append(out, fields[0][:1]+" "+strings.Join(fields[4:], " "))
			}
		}
		return out
	}
	want := run(true)
	require.Equal(t, []string{`I "Waiting for caches to sync"`, `E "Unable to sync caches" logger="UnhandledError"`}, want, "client-go")
	assert.Equal(t, want, run(false))
}
