// Package factorytest holds the test steps the factories keyed by
// GroupVersionResource share: the dynamic and metadata factories and the
// engine under them (informers/internal/gvrfactory). Only their tests import
// it.
package factorytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// Factory is what the dynamic and metadata factories have in common.
type Factory interface {
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	Shutdown()
}

// RunAndShutdown runs gvr's informer of factory until it has synced (failing
// the test if that takes longer than timeout), shuts the factory down (which
// writes the informer's snapshot, if it has one) and returns the keys the
// informer had cached and the errors its watch error handler received.
func RunAndShutdown(t *testing.T, factory Factory, gvr schema.GroupVersionResource, timeout time.Duration) ([]string, []error) {
	t.Helper()
	informer := factory.ForResource(gvr)
	var mu sync.Mutex
	var errs []error
	require.NoError(t, informer.Informer().SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{gvr: true}, factory.WaitForCacheSync(ctx.Done()))
	keys := informer.Informer().GetStore().ListKeys()
	cancel()
	factory.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	return keys, errs
}
