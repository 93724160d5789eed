package clientgo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/fakeapi"
	"github.com/kinformer/kinformer/listadmission"
)

// TestWatchErrorHandlerReflectorCarriesKinformersNameAndDescription: the
// client-go Reflector handed to a watch error handler is built from the
// kinformer Reflector the failure came from, with its name and type
// description, once: later failures, of any Reflector, get the same one.
func TestWatchErrorHandlerReflectorCarriesKinformersNameAndDescription(t *testing.T) {
	w := newInformer(cache.NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil), cache.HandlerBufferUnbounded)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	first := cache.NewReflectorWithOptions(fakeapi.New(), &v1.Pod{}, store, cache.ReflectorOptions{Name: "pods-reflector", TypeDescription: "pods of ns"})
	r := w.clientGoReflector(first)
	require.NotNil(t, r)
	assert.Equal(t, "pods-reflector", r.Name())
	assert.Equal(t, "pods of ns", r.TypeDescription())

	other := cache.NewReflectorWithOptions(fakeapi.New(), &v1.Pod{}, store, cache.ReflectorOptions{Name: "other", TypeDescription: "other"})
	assert.Same(t, r, w.clientGoReflector(other), "built once per wrapper")

	// It is never meant to run; if it is, it lists nothing.
	_, err := noSource{}.List(metav1.ListOptions{})
	assert.ErrorIs(t, err, errNoSource)
}

// TestWatchErrorHandlerGetsAClientGoReflectorWhileListsFail: end to end, a
// handler set with SetWatchErrorHandlerWithContext before Run gets every
// LIST failure with a non-nil client-go Reflector whose type description is
// the informer's object description (WithObjectDescription), the one
// kinformer's status reports, and whose name is kinformer's Reflector's: the
// caller of Run, not the wrapper; client-go's DefaultWatchErrorHandler
// accepts it.
func TestWatchErrorHandlerGetsAClientGoReflectorWhileListsFail(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	refused := errors.New("list refused")
	srv.FailLists(refused)
	informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, nil, WithObjectDescription("pods of ns"))
	type call struct {
		r   *toolscache.Reflector
		err error
	}
	calls := make(chan call, 100)
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if r != nil {
			toolscache.DefaultWatchErrorHandler(ctx, r, context.Canceled)
		}
		select {
		case calls <- call{r, err}:
		default:
		}
	}))
	start(t, informer)
	var got []call
	for range 2 {
		select {
		case c := <-calls:
			got = append(got, c)
		case <-time.After(waitTimeout):
			t.Fatal("the watch error handler was not called twice")
		}
	}
	require.NotNil(t, got[0].r)
	assert.Same(t, got[0].r, got[1].r)
	assert.ErrorIs(t, got[0].err, refused)
	assert.Equal(t, "pods of ns", got[0].r.TypeDescription())
	k, ok := Unwrap(informer)
	require.True(t, ok)
	status, ok := cache.GetInformerStatus(k)
	require.True(t, ok)
	assert.Equal(t, status.Description, got[0].r.TypeDescription())
	// Named after the caller of Run (start, in helpers_test.go), as an
	// informer run directly: the wrapper's forwarding frames are passed over.
	assert.Regexp(t, `/interop/clientgo/helpers_test\.go:\d+$`, got[0].r.Name())
}

// TestWrapAndUnwrapReachTheSameInformer: Unwrap gives back the kinformer
// informer NewSharedIndexInformer built or Wrap was given, and nothing for
// other informers; wrappers of one informer share its cache (the same
// objects) and its handlers: a registration made through one is removed
// through another.
func TestWrapAndUnwrapReachTheSameInformer(t *testing.T) {
	assert.Nil(t, Wrap(nil))
	_, ok := Unwrap(nil)
	assert.False(t, ok)
	_, ok = Unwrap(toolscache.NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil))
	assert.False(t, ok, "client-go's own informer")

	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a")
	k := cache.NewSharedIndexInformer(srv, &v1.Pod{}, 0, nil)
	first, second := Wrap(k), Wrap(k)
	back, ok := Unwrap(first)
	require.True(t, ok)
	require.Same(t, k, back)

	removed, kept := &recorder{}, &recorder{}
	removedReg, err := first.AddEventHandler(removed)
	require.NoError(t, err)
	_, err = second.AddEventHandler(kept)
	require.NoError(t, err)
	start(t, second)
	waitDone(t, first.HasSyncedChecker())
	waitDone(t, removedReg.HasSyncedChecker())
	waitForWatch(t, srv)

	fromFirst, _, err := first.GetStore().GetByKey("ns/a")
	require.NoError(t, err)
	fromKinformer, _, err := k.GetStore().GetByKey("ns/a")
	require.NoError(t, err)
	require.NotNil(t, fromFirst)
	assert.Same(t, fromKinformer, fromFirst, "no copies")

	require.NoError(t, toolscache.ShutDownEventHandler(second, removedReg))
	srv.Create("b")
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=false"}, kept.waitN(t, 2))
	assert.Equal(t, []string{"add ns/a@1 initial=true"}, removed.get())
}

// staticHandlerMetrics is a cache.HandlerMetricsProvider that times
// nothing.
type staticHandlerMetrics struct{}

func (staticHandlerMetrics) NewHandlerLatencyMetric(string) cache.HistogramMetric { return nil }

// TestOptionsReachTheKinformerInformer: each Option sets its field of the
// kinformer informer's options, as ConfigureInformer and the informer's
// status read them back; without Options the fields keep their zero values.
func TestOptionsReachTheKinformerInformer(t *testing.T) {
	name, err := cache.NewInformerName("interop-clientgo-options-test")
	require.NoError(t, err)
	t.Cleanup(name.Release)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	metrics := staticHandlerMetrics{}
	admission := listadmission.New(listadmission.Options{})

	read := func(t *testing.T, informer toolscache.SharedIndexInformer) (cache.SharedIndexInformerOptions, cache.InformerStatus) {
		t.Helper()
		k, ok := Unwrap(informer)
		require.True(t, ok)
		var options cache.SharedIndexInformerOptions
		require.NoError(t, cache.ConfigureInformer(k, func(o *cache.SharedIndexInformerOptions) { options = *o }))
		status, ok := cache.GetInformerStatus(k)
		require.True(t, ok)
		return options, status
	}

	options, status := read(t, NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil,
		WithObjectDescription("pods of ns"),
		WithIdentifier(name.WithResource(gvr)),
		WithHandlerMetricsProvider(metrics),
		WithWatchIdleTimeout(3*time.Minute),
		WithStalenessProbeInterval(-1),
		WithMaxRetryAfter(5*time.Second),
		WithRelistPageByPage(true),
		WithDeltaFIFO(true),
		WithListAdmission(admission),
		WithListAdmissionPriority(2),
		nil,
	))
	assert.Equal(t, cache.SharedIndexInformerOptions{
		HandlerMetricsProvider: metrics,
		WatchIdleTimeout:       3 * time.Minute,
		StalenessProbeInterval: -1,
		MaxRetryAfter:          5 * time.Second,
		RelistPageByPage:       true,
		UseDeltaFIFO:           true,
		ListAdmission:          admission,
		ListAdmissionPriority:  2,
	}, options)
	assert.Equal(t, "pods of ns", status.Description)
	assert.Equal(t, "interop-clientgo-options-test", status.Name)
	assert.Equal(t, gvr, status.Resource)

	options, status = read(t, NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil))
	assert.Equal(t, cache.SharedIndexInformerOptions{}, options)
	assert.Empty(t, status.Description)
	assert.Empty(t, status.Name)
}

// TestHandlerBufferPolicyReachesHandlers: with
// WithHandlerBufferPolicy(cache.HandlerBufferCoalesceByKey), the updates
// that arrive while a handler is busy are merged into one, where the
// default (client-go's) delivers each; a policy kinformer does not know
// makes AddEventHandler fail.
func TestHandlerBufferPolicyReachesHandlers(t *testing.T) {
	// run blocks the handler in its first add (and waits until it is
	// there, so that the add is out of the buffer), makes three updates, waits
	// until the handler's buffer holds what it should (wantPending: the
	// add being delivered and the updates, as one or as three), then lets
	// the handler go.
	run := func(t *testing.T, wantPending int, opts ...Option) []string {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a") // 1
		informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, nil, opts...)
		entered, release := make(chan struct{}, 1), make(chan struct{})
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(release) }) })
		rec := &recorder{}
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, isInInitialList bool) {
				entered <- struct{}{}
				<-release
				rec.OnAdd(obj, isInInitialList)
			},
			UpdateFunc: rec.OnUpdate,
			DeleteFunc: rec.OnDelete,
		})
		require.NoError(t, err)
		start(t, informer)
		waitForWatch(t, srv)
		select {
		case <-entered:
		case <-time.After(waitTimeout):
			t.Fatal("the handler did not get the initial add")
		}
		srv.Update("a") // 2
		srv.Update("a") // 3
		srv.Update("a") // 4
		pending := reg.(cache.HandlerBufferReporter)
		k, _ := Unwrap(informer)
		require.Eventually(t, func() bool {
			return k.GetStore().LastStoreSyncResourceVersion() == "4" && pending.PendingNotifications() == wantPending
		}, waitTimeout, tick)
		once.Do(func() { close(release) })
		require.Eventually(t, func() bool { return pending.PendingNotifications() == 0 }, waitTimeout, tick)
		return rec.get()
	}
	assert.Equal(t, []string{
		"add ns/a@1 initial=true",
		"update ns/a@1 -> ns/a@2",
		"update ns/a@2 -> ns/a@3",
		"update ns/a@3 -> ns/a@4",
	}, run(t, 4))
	assert.Equal(t, []string{
		"add ns/a@1 initial=true",
		"update ns/a@1 -> ns/a@4",
	}, run(t, 2, WithHandlerBufferPolicy(cache.HandlerBufferCoalesceByKey)))

	informer := NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil, WithHandlerBufferPolicy(cache.HandlerBufferPolicy(99)))
	_, err := informer.AddEventHandler(&recorder{})
	assert.ErrorContains(t, err, "unknown HandlerBufferPolicy 99")
}

// TestNilHandlersAndSettersKeepKinformersMeaning: a nil event handler is an
// error (kinformer's contract), and a nil watch error handler restores the
// default instead of being called.
func TestNilHandlersAndSettersKeepKinformersMeaning(t *testing.T) {
	informer := NewSharedIndexInformer(fakeapi.New(), &v1.Pod{}, 0, nil)
	_, err := informer.AddEventHandler(nil)
	assert.Error(t, err)
	assert.NoError(t, informer.SetWatchErrorHandler(nil))
	assert.NoError(t, informer.SetWatchErrorHandlerWithContext(nil))
	assert.NoError(t, informer.SetTransform(nil))
}
