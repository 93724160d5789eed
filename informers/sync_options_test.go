package informers_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// TestFactorySyncResultNamesFailures: the pod LISTs are forbidden, the
// configmap LISTs work. With fail fast the factory's wait ends at once;
// Synced tells which informer synced, and Err (and AsError) carries the 403
// inside an InformerSyncError naming the pod informer.
func TestFactorySyncResultNamesFailures(t *testing.T) {
	client := newFakeClientset(newPod("ns", "a", nil), &corev1.ConfigMap{})
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "bob" cannot list resource "pods"`))
	client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden
	})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithSyncOptions(cache.SyncOptions{FailFast: true}))
	factory.Core().V1().Pods().Informer()
	configMaps := factory.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.StartWithContext(ctx)
	// Failing fast does not wait for the others: let the configmaps sync
	// first so that Synced is known.
	require.True(t, cache.WaitFor(ctx, "", configMaps.HasSyncedChecker()))

	res := factory.WaitForCacheSyncWithContext(ctx)
	assert.NoError(t, ctx.Err(), "the wait did not fail fast")
	assert.Equal(t, map[reflect.Type]bool{
		reflect.TypeOf(&corev1.Pod{}):       false,
		reflect.TypeOf(&corev1.ConfigMap{}): true,
	}, res.Synced)
	require.Error(t, res.Err)
	assert.True(t, apierrors.IsForbidden(res.Err))
	assert.ErrorIs(t, res.Err, cache.ErrPermanentSyncFailure)
	var se *cache.InformerSyncError
	require.ErrorAs(t, res.Err, &se)
	assert.Equal(t, "*v1.Pod", se.Type)
	assert.Equal(t, "pods.v1", se.Resource)
	assert.Equal(t, "failed to sync all caches: *v1.Pod: "+cache.ErrPermanentSyncFailure.Error()+
		"\ninformer for *v1.Pod (pods.v1) has not synced: failed to list *v1.Pod: "+forbidden.Error(), res.AsError().Error())
	assert.True(t, apierrors.IsForbidden(res.AsError()))

	// The old-style wait reports the same through its map.
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	assert.Equal(t, res.Synced, factory.WaitForCacheSync(short.Done()))
}
