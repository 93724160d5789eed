package cache

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kinformer/kinformer/internal/fakeapi"
	"github.com/kinformer/kinformer/listadmission"
)

// foreignSharedInformer is a SharedInformer not built by this package.
type foreignSharedInformer struct{ SharedInformer }

func TestConfigureInformerSetsKinformerOptionsBeforeRun(t *testing.T) {
	informer := NewSharedIndexInformer(fakeapi.NewServer(false), &v1.Pod{}, time.Minute, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	admission := listadmission.New(listadmission.Options{})
	require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
		o.SnapshotProjection = "proj-1"
	}))
	var seen SharedIndexInformerOptions
	require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
		seen = *o
		o.UseDeltaFIFO = true
		o.RelistPageByPage = true
		o.WatchIdleTimeout = -1
		o.SnapshotFile = "/tmp/x.snap"
		o.SnapshotScope = "namespace=a"
		o.StalenessProbeInterval = 3 * time.Second
		o.ListAdmission = admission
		o.ListAdmissionPriority = 7
		o.MaxRetryAfter = 5 * time.Second
	}))
	assert.Equal(t, "proj-1", seen.SnapshotProjection, "change sees what an earlier call set")
	assert.Zero(t, seen.ResyncPeriod, "client-go's fields are zero on the way in")
	assert.Nil(t, seen.Indexers)

	c := sharedOf(informer).config
	assert.True(t, c.UseDeltaFIFO)
	assert.True(t, c.RelistPageByPage)
	assert.Equal(t, time.Duration(-1), c.WatchIdleTimeout)
	assert.Equal(t, "/tmp/x.snap", c.SnapshotFile)
	assert.Equal(t, "namespace=a", c.SnapshotScope)
	assert.Equal(t, "proj-1", c.SnapshotProjection, "a field change leaves alone is kept")
	assert.Equal(t, 3*time.Second, c.StalenessProbeInterval)
	assert.Same(t, admission, c.ListAdmission)
	assert.Equal(t, 7, c.ListAdmissionPriority)
	assert.Equal(t, 5*time.Second, c.MaxRetryAfter)
	assert.Equal(t, time.Minute, c.ResyncPeriod, "client-go's settings from construction are kept")
	assert.Contains(t, c.Indexers, NamespaceIndex)
}

func TestConfigureInformerRefusesWhatItCannotApply(t *testing.T) {
	noop := func(*SharedIndexInformerOptions) {}
	assert.ErrorContains(t, ConfigureInformer(nil, noop), "nil informer")
	assert.ErrorContains(t, ConfigureInformer(&foreignSharedInformer{}, noop), "not built by kinformer")
	informer := NewSharedIndexInformer(fakeapi.NewServer(false), &v1.Pod{}, 0, Indexers{})
	assert.ErrorContains(t, ConfigureInformer(informer, nil), "nil change")

	name, err := NewInformerName("configure-test")
	require.NoError(t, err)
	t.Cleanup(name.Release)
	identity := name.WithResource(schema.GroupVersionResource{Resource: "pods"})
	for field, change := range map[string]func(*SharedIndexInformerOptions){
		"ResyncPeriod":            func(o *SharedIndexInformerOptions) { o.ResyncPeriod = time.Second },
		"Indexers":                func(o *SharedIndexInformerOptions) { o.Indexers = Indexers{} },
		"ObjectDescription":       func(o *SharedIndexInformerOptions) { o.ObjectDescription = "pods" },
		"Identifier":              func(o *SharedIndexInformerOptions) { o.Identifier = identity },
		"InformerMetricsProvider": func(o *SharedIndexInformerOptions) { o.InformerMetricsProvider = noopInformerMetricsProvider{} },
	} {
		t.Run(field, func(t *testing.T) {
			err := ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
				o.RelistPageByPage = true
				change(o)
			})
			assert.ErrorContains(t, err, field+" is fixed when the informer is built")
			assert.False(t, sharedOf(informer).config.RelistPageByPage, "a refused configuration changes nothing")
		})
	}

	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	started := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
	runInformer(t, started)
	waitUntilSynced(t, started.HasSyncedChecker())
	assert.ErrorContains(t, ConfigureInformer(started, func(o *SharedIndexInformerOptions) { o.RelistPageByPage = true }), "already started")
	assert.False(t, sharedOf(started).config.RelistPageByPage, "a refused configuration changes nothing")
}

// TestConfigureInformerChangesOnlyHandlerTimingOnceStarted: once the
// informer runs, ConfigureInformer takes a new HandlerMetricsProvider (the
// handlers registered before it are timed from then on) and refuses any
// other change, leaving the provider as it was.
func TestConfigureInformerChangesOnlyHandlerTimingOnceStarted(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a")
	informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
	names := make(chan string, 10)
	next := func() string {
		t.Helper()
		select {
		case name := <-names:
			return name
		case <-time.After(waitTimeout):
			t.Fatal("no notification")
			return ""
		}
	}
	registration, err := informer.AddEventHandler(ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { names <- obj.(*v1.Pod).Name },
		UpdateFunc: func(_, obj interface{}) { names <- obj.(*v1.Pod).Name },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.True(t, WaitForCacheSync(ctx.Done(), registration.HasSynced))
	assert.Equal(t, "a", next())

	var metrics recordingHandlerMetrics
	require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
		o.HandlerMetricsProvider = &metrics
	}))
	srv.Create("b")
	assert.Equal(t, "b", next())
	st, ok := GetInformerStatus(informer)
	require.True(t, ok)
	require.Len(t, st.Handlers, 1)
	handler := st.Handlers[0].Name
	require.Eventually(t, func() bool {
		h := metrics.get(handler)
		return h != nil && h.count() == 1
	}, 30*time.Second, 5*time.Millisecond, "the notification after the change is timed")

	var seen SharedIndexInformerOptions
	err = ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
		seen = *o
		o.HandlerMetricsProvider = nil
		o.WatchIdleTimeout = time.Second
	})
	require.ErrorContains(t, err, "already started: only HandlerMetricsProvider can change")
	assert.Same(t, &metrics, seen.HandlerMetricsProvider, "change sees the provider set while running")
	srv.Update("b")
	assert.Equal(t, "b", next())
	require.Eventually(t, func() bool { return metrics.get(handler).count() == 2 }, 30*time.Second, 5*time.Millisecond,
		"a refused change leaves the provider in place")
}

// TestInformerOptionsResolveOnce: the informer's one defaulting step maps
// every duration option's zero to its default and a negative value to off
// (zero below the step), and passes other values through.
func TestInformerOptionsResolveOnce(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		set                     time.Duration
		idle, probe, retryAfter time.Duration
	}{
		{name: "zero means the defaults", set: 0, idle: DefaultWatchIdleTimeout, probe: DefaultStalenessProbeInterval, retryAfter: listadmission.DefaultMaxRetryAfter},
		{name: "negative means off", set: -time.Second, idle: 0, probe: 0, retryAfter: 0},
		{name: "positive is taken", set: 7 * time.Second, idle: 7 * time.Second, probe: 7 * time.Second, retryAfter: 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := newInformerConfig(SharedIndexInformerOptions{
				ObjectDescription:      "pods",
				ResyncPeriod:           time.Minute,
				RelistPageByPage:       true,
				WatchIdleTimeout:       tc.set,
				StalenessProbeInterval: tc.set,
				MaxRetryAfter:          tc.set,
			})
			got := config.resolve(&v1.Pod{}, nil)
			assert.Equal(t, tc.idle, got.reflector.engine.WatchIdleTimeout)
			assert.Equal(t, tc.probe, got.probeInterval)
			assert.Equal(t, tc.retryAfter, got.reflector.engine.MaxRetryAfter)
			assert.Equal(t, reflectorMinWatchTimeout, got.reflector.engine.MinWatchTimeout)
			assert.Equal(t, reflectorInitialEventsTimeout, got.reflector.engine.InitialEventsTimeout)
			assert.Equal(t, defaultReflectorBackoff(), got.reflector.engine.Backoff)
			assert.Equal(t, "pods", got.reflector.typeDescription)
			assert.Equal(t, time.Minute, got.reflector.engine.ResyncPeriod)
			assert.True(t, got.queue.pageByPage)
			assert.Nil(t, got.reflector.admission, "no admission without one")
		})
	}
}

// TestReflectorOptionsResolveOnce: ReflectorOptions' defaulting step keeps
// the zero meanings ReflectorOptions documents (no idle deadline, the
// default maximum Retry-After, the watch timeout floor).
func TestReflectorOptionsResolveOnce(t *testing.T) {
	got := ReflectorOptions{}.config()
	assert.Zero(t, got.engine.WatchIdleTimeout)
	assert.Equal(t, listadmission.DefaultMaxRetryAfter, got.engine.MaxRetryAfter)
	assert.Equal(t, reflectorMinWatchTimeout, got.engine.MinWatchTimeout)
	assert.Equal(t, defaultReflectorBackoff(), got.engine.Backoff)
	assert.Nil(t, got.admission)

	backoff := wait.Backoff{Duration: time.Second, Steps: 3}
	admission := listadmission.New(listadmission.Options{})
	got = ReflectorOptions{
		WatchIdleTimeout: -time.Second,
		MaxRetryAfter:    -time.Second,
		MinWatchTimeout:  time.Hour,
		Backoff:          &backoff,
		ListAdmission:    admission,
	}.config()
	assert.Zero(t, got.engine.WatchIdleTimeout)
	assert.Zero(t, got.engine.MaxRetryAfter, "negative: no maximum")
	assert.Equal(t, time.Hour, got.engine.MinWatchTimeout)
	assert.Equal(t, backoff, got.engine.Backoff)
	assert.Same(t, admission, got.admission.(*listadmission.Admission))
	assert.Equal(t, reflectorMinWatchTimeout, ReflectorOptions{MinWatchTimeout: time.Minute}.config().engine.MinWatchTimeout, "raised to the floor")
}
