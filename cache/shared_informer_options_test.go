package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listadmission"

	"github.com/kinformer/kinformer/internal/fakeapi"
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
	assert.True(t, c.useDeltaFIFO)
	assert.True(t, c.relistPageByPage)
	assert.Equal(t, time.Duration(-1), c.watchIdleTimeout)
	assert.Equal(t, "/tmp/x.snap", c.snapshotFile)
	assert.Equal(t, "namespace=a", c.snapshotScope)
	assert.Equal(t, "proj-1", c.snapshotProjection, "a field change leaves alone is kept")
	assert.Equal(t, 3*time.Second, c.stalenessProbeInterval)
	assert.Same(t, admission, c.listAdmission)
	assert.Equal(t, 7, c.listAdmissionPriority)
	assert.Equal(t, 5*time.Second, c.maxRetryAfter)
	assert.Equal(t, time.Minute, c.resyncPeriod, "client-go's settings from construction are kept")
	assert.Contains(t, c.indexers, NamespaceIndex)
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
			assert.False(t, sharedOf(informer).config.relistPageByPage, "a refused configuration changes nothing")
		})
	}

	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	started := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
	infRunInformer(t, started)
	infWaitSynced(t, started.HasSyncedChecker())
	assert.ErrorContains(t, ConfigureInformer(started, noop), "already started")
}
